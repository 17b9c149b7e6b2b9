/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Negotiation of APIC virtualization and device posted interrupts with
 * KVM: target/i386/kvm/apicv-negotiate.c.  Called from
 * target/i386/kvm/kvm.c and kvm-cpu.c.
 */

#ifndef TARGET_I386_KVM_APICV_NEGOTIATE_H
#define TARGET_I386_KVM_APICV_NEGOTIATE_H

#include "system/kvm.h"
#include "cpu.h"

/* The accel options apicv= and device-posted-irqs= */
void kvm_apicv_accel_class_init(ObjectClass *oc);

/* From kvm_arch_init(): probe the host, adjust, arm the decision. */
int kvm_apicv_kvm_init(MachineState *ms, KVMState *s, Error **errp);

/*
 * May the host's KVM run vCPUs with AMD AVIC or x2AVIC?  True on an AMD
 * (or Hygon) host whose kvm_amd has avic on, or whose parameters cannot
 * be read.  Known from kvm_apicv_kvm_init() on.
 */
bool kvm_apicv_host_may_run_avic(void);

/* From kvm_cpu_realizefn(): can KVM create this vCPU? */
bool kvm_apicv_check_vcpu(X86CPU *cpu, Error **errp);

#endif
