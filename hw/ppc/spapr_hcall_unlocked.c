/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * PAPR hypercalls served without the BQL: see
 * include/hw/ppc/spapr_hcall_unlocked.h.  Hooked in hw/ppc/spapr.c
 * (vhyp hypercall_unlocked, TCG) and target/ppc/kvm.c (KVM exit).  An
 * H_EOI, where the guest ends an interrupt, is also where an
 * oversubscribed MTTCG vCPU may yield its host CPU
 * (cpus_interrupt_done(), system/cpus-halt-wait.c).
 */

#include "qemu/osdep.h"
#include "qemu/rcu.h"
#include "hw/ppc/spapr.h"
#include "hw/ppc/spapr_hcall_unlocked.h"
#include "system/cpus.h"

static spapr_hcall_fn unlocked_hcall_table[(MAX_HCALL_OPCODE / 4) + 1];

void spapr_register_hypercall_unlocked(target_ulong opcode, spapr_hcall_fn fn)
{
    /* Only the PAPR range, where the XICS calls are */
    assert(opcode <= MAX_HCALL_OPCODE && !(opcode & 3));
    assert(!unlocked_hcall_table[opcode / 4]);

    spapr_register_hypercall(opcode, fn);
    unlocked_hcall_table[opcode / 4] = fn;
}

bool spapr_hypercall_is_unlocked(target_ulong opcode)
{
    return opcode <= MAX_HCALL_OPCODE && !(opcode & 3) &&
           unlocked_hcall_table[opcode / 4];
}

target_ulong spapr_hypercall_unlocked(SpaprMachineState *spapr,
                                      PowerPCCPU *cpu, target_ulong opcode,
                                      target_ulong *args)
{
    target_ulong ret;

    assert(spapr_hypercall_is_unlocked(opcode));
    /* Presenter lookups are RCU-protected (CPU hot-unplug) */
    WITH_RCU_READ_LOCK_GUARD() {
        ret = unlocked_hcall_table[opcode / 4](cpu, spapr, opcode, args);
    }
    /* Outside the hypercall's own RCU section: it may yield */
    if (opcode == H_EOI) {
        cpus_interrupt_done(CPU(cpu));
    }
    return ret;
}
