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
    int32_t vcpu;               /* KVM vcpu_id (the APIC ID), -1 none */
    uint32_t vector;
    bool set;                   /* set up to post to @vcpu */
    uint64_t time;              /* of that update (perf clock, ns) */
} ApicvObservedIrte;

typedef struct ApicvObserved {
    bool available;
    bool has_inhibits;          /* a change was seen, none lost since */
    uint64_t inhibits;          /* KVM's inhibit mask after the last one */
    uint64_t inhibits_time;     /* of that change (perf clock, ns) */
    uint64_t inhibit_events;
    uint64_t irte_events;
    uint64_t lost_events;       /* the ring overflowed */
    GArray *irtes;              /* ApicvObservedIrte */
} ApicvObserved;

/* Open the samplers: from kvm_arch_init(), before the irqchip exists. */
void apicv_trace_start(void);
/* Close them (KVM did not come up after all). */
void apicv_trace_stop(void);
/* Drain what arrived; @why is set when nothing (or not all) is seen. */
const ApicvObserved *apicv_trace_poll(const char **why);
/*
 * KVM's name of inhibit bit @bit: from its tracefs format where it
 * gives one, else from the numbering of host kernel release @kernel.
 */
const char *apicv_trace_reason_name(int bit, int kernel);

/* Pure parts, unit-tested in tests/unit/test-apicv-trace.c */
typedef struct ApicvTraceField {
    int offset, size;           /* -1: not in this kernel's layout */
} ApicvTraceField;

typedef struct ApicvTraceFormat {
    int id;                     /* the tracepoint's ID, -1 if absent */
    ApicvTraceField f[8];
} ApicvTraceFormat;

/* Offsets of the fields @names (n <= 8) in a tracefs "format" text. */
void apicv_trace_parse_format(const char *text, const char *const *names,
                              int n, ApicvTraceFormat *fmt);
/*
 * Inhibit bit names from the format's __print_flags list (Linux 6.11+):
 * { (1UL << (9)), "PIT_REINJ" } or { 0x200, "PIT_REINJ" }, or in list
 * order where the bit is left symbolic; fills empty @names slots (64).
 */
void apicv_trace_parse_reason_names(const char *text, char **names);
/* A field of a raw record; false if it is not there. */
bool apicv_trace_field(const uint8_t *raw, uint32_t len, ApicvTraceField f,
                       uint64_t *value);

/*
 * @raw/@len: a sample's raw data, taken at @time; or @raw NULL and @lost
 * events lost
 */
typedef void ApicvTraceRecordFn(void *opaque, const uint8_t *raw,
                                uint32_t len, uint64_t time, uint64_t lost);
/*
 * Walk the perf ring @data (@size bytes, a power of two) from @tail to
 * @head, calling @fn for each sample (PERF_SAMPLE_TIME | PERF_SAMPLE_RAW)
 * and lost record; returns the new tail (an incomplete record is left
 * for later).  Each ring is in time order, rings of different CPUs are
 * not: a reader keeps the newest state by @time.
 */
uint64_t apicv_trace_ring_records(const uint8_t *data, uint64_t size,
                                  uint64_t tail, uint64_t head,
                                  ApicvTraceRecordFn *fn, void *opaque);

#endif
