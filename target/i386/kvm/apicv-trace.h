/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * KVM's own view of APIC virtualization and device posting for this VM,
 * from its tracepoints: target/i386/kvm/apicv-trace.c.
 */

#ifndef TARGET_I386_KVM_APICV_TRACE_H
#define TARGET_I386_KVM_APICV_TRACE_H

/* The last kvm_pi_irte_update of one host IRQ. */
typedef struct ApicvObservedIrte {
    uint64_t host_irq;
    int64_t gsi;                /* KVM routing GSI (QEMU's virq), -1 unknown */
    int32_t vcpu;               /* -1 when not posted */
    uint32_t vector;
    bool posted;
} ApicvObservedIrte;

typedef struct ApicvObserved {
    bool available;
    bool has_inhibits;          /* an inhibit change was seen */
    uint64_t inhibits;          /* KVM's inhibit mask after the last one */
    uint64_t inhibit_events;
    uint64_t irte_events;
    uint64_t lost_events;       /* the ring overflowed */
    GArray *irtes;              /* ApicvObservedIrte */
} ApicvObserved;

/* Open the samplers: from kvm_arch_init(), before the irqchip exists. */
void apicv_trace_start(void);
/* Drain what arrived; @why is set when nothing can be observed. */
const ApicvObserved *apicv_trace_poll(const char **why);
/*
 * KVM's name of inhibit bit @bit: from its tracefs format where it
 * gives one, else from the numbering of host kernel release @kernel.
 */
const char *apicv_trace_reason_name(int bit, int kernel);

#endif
