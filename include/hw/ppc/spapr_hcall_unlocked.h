/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * PAPR hypercalls served without the BQL (hw/ppc/spapr_hcall_unlocked.c).
 *
 * A handler registered here must take whatever locks it needs itself
 * and never take the BQL; it runs on the calling vCPU's thread inside
 * an RCU read-side section.  It is registered in the ordinary table as
 * well, so callers that hold the BQL (spapr_hypercall()) still find it.
 * Used by the TCG "sc 1" fast path (vhyp hypercall_unlocked, via
 * TCGCPUOps::do_interrupt_unlocked) and the KVM PAPR hcall exit.
 */

#ifndef HW_PPC_SPAPR_HCALL_UNLOCKED_H
#define HW_PPC_SPAPR_HCALL_UNLOCKED_H

#include "hw/ppc/spapr.h"

void spapr_register_hypercall_unlocked(target_ulong opcode, spapr_hcall_fn fn);

/*
 * Serve @opcode without the BQL if it was registered so: store the
 * return code in *@ret and return true.  False: nothing was done.
 */
bool spapr_hypercall_unlocked(PowerPCCPU *cpu, target_ulong opcode,
                              target_ulong *args, target_ulong *ret);

#endif
