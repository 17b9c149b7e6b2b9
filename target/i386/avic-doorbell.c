/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The AVIC doorbell of an x86 CPU: what L1 writing MSR 0xC001011B, an
 * accelerated IPI of another vCPU (target/i386/tcg/system/svm-avic.c)
 * and the emulated AMD IOMMU's GA posting with IsRun set
 * (hw/i386/amd_iommu-ga.c) do to the CPU with the target's host APIC
 * ID.  Under TCG, CPU_INTERRUPT_AVIC makes that CPU evaluate its
 * backing page if it runs L2 with AVIC (and is ignored otherwise);
 * other accelerators have no emulated AVIC, so the CPU is only kicked.
 * Built for every accelerator, since the IOMMU is.
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "system/tcg.h"
#include "cpu.h"

void x86_cpu_avic_doorbell(CPUState *cs)
{
    if (!tcg_enabled()) {
        qemu_cpu_kick(cs);
        return;
    }
    if (cs == current_cpu) {
        cpu_set_interrupt(cs, CPU_INTERRUPT_AVIC);
        qatomic_set(&cs->neg.icount_decr.u16.high, -1);
        return;
    }
    /*
     * A CPU outside guest mode ignores the doorbell, as hardware does:
     * its next VMRUN evaluates the page anyway.  Leaving no request
     * behind keeps its L1 loop from taking the BQL for it at every TB
     * boundary until then.  The poster's IRR store, then this barrier,
     * then the guest-mode load; VMRUN sets guest mode, then reads IRR
     * after a full barrier (avic_evaluate()): one of the two sees the
     * other.
     */
    smp_mb();
    if (!(qatomic_read(&X86_CPU(cs)->env.hflags) & HF_GUEST_MASK)) {
        return;
    }
    /*
     * The request is an atomic OR, a full barrier: then the halted
     * check.  A halted CPU checks for work under the BQL before it
     * sleeps, so take the BQL to wake it.  A running one only needs to
     * look at its requests at its next TB boundary, as for its own
     * request: no exit request, which would also send it out of
     * cpu_exec() and through the BQL.
     */
    cpu_set_interrupt(cs, CPU_INTERRUPT_AVIC);
    if (qatomic_read(&cs->halted)) {
        BQL_LOCK_GUARD();       /* a no-op when the caller holds it */
        qemu_cpu_kick(cs);
    } else {
        qatomic_set(&cs->neg.icount_decr.u16.high, -1);
    }
}
