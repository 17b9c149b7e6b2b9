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
     * The request is an atomic OR, a full barrier: the poster's IRR
     * store, then the request, then the halted check.  A halted CPU
     * checks for work under the BQL before it sleeps, so take the BQL
     * to wake it; a running one only needs the kick.
     */
    cpu_set_interrupt(cs, CPU_INTERRUPT_AVIC);
    if (qatomic_read(&cs->halted) && !bql_locked()) {
        BQL_LOCK_GUARD();
        qemu_cpu_kick(cs);
    } else {
        qemu_cpu_kick(cs);
    }
}
