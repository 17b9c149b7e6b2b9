/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Migration of the pseries emulated XICS with a running guest.
 *
 * An interrupt a presenter shows (XISR) but the guest has not accepted
 * yet lives only in the CPU's interrupt line, which is not migrated, and
 * QEMU 10.0's post_load does not raise the line again: a destination
 * running stock 10.0 would never deliver it.  So before the state is
 * saved (from the source controller's pre_save, which runs before any
 * presenter is saved: migration, snapshot, paused or not), every
 * presenter hands its presented interrupt back to its source
 * (icp_hand_back(): rejected, to be resent; an IPI stays in MFRR), which
 * both QEMU 10.0's and this fork's post_load resend.  When the VM runs
 * here again (the migration failed or was cancelled, a snapshot was
 * taken), the presenters resend at once.  The stream format is
 * unchanged.  The fork's own post_load also restores a presented
 * interrupt received from stock QEMU (icp_post_load in xics.c).
 * Hooked in hw/intc/xics_spapr.c.
 */

#include "qemu/osdep.h"
#include "hw/ppc/spapr.h"
#include "hw/ppc/spapr_cpu_core.h"
#include "hw/ppc/xics.h"
#include "hw/intc/xics-migration.h"
#include "system/kvm.h"
#include "system/runstate.h"

static bool handed_back;

static void xics_migration_pre_save(ICSState *ics)
{
    CPUState *cs;

    if (kvm_irqchip_in_kernel()) {
        return;                 /* the kernel's XICS migrates itself */
    }
    CPU_FOREACH(cs) {
        ICPState *icp = spapr_cpu_state(POWERPC_CPU(cs))->icp;

        if (icp) {
            icp_hand_back(icp);
        }
    }
    handed_back = true;
}

static void xics_migration_state_change(void *opaque, bool running,
                                        RunState state)
{
    CPUState *cs;

    if (!running || !handed_back) {
        return;
    }
    handed_back = false;
    CPU_FOREACH(cs) {
        ICPState *icp = spapr_cpu_state(POWERPC_CPU(cs))->icp;

        if (icp) {
            icp_resend(icp);
        }
    }
}

void xics_migration_spapr_init(void)
{
    static bool done;

    if (!done) {
        xics_set_pre_save_hook(xics_migration_pre_save);
        qemu_add_vm_change_state_handler(xics_migration_state_change, NULL);
        done = true;
    }
}
