/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * PAPR hypercalls served without the BQL (hw/ppc/spapr_hcall_unlocked.c).
 *
 * A handler registered here must take whatever locks it needs itself
 * and never take the BQL; it runs on the calling vCPU's thread inside
 * an RCU read-side section.  It is registered in the ordinary table as
 * well, so callers that hold the BQL (spapr_hypercall()) still find it.
 * Used by the TCG "sc 1" fast path (vhyp hypercall_is_unlocked and
 * hypercall_unlocked, via TCGCPUOps::do_interrupt_unlocked) and the KVM
 * PAPR hcall exit.
 */

#ifndef HW_PPC_SPAPR_HCALL_UNLOCKED_H
#define HW_PPC_SPAPR_HCALL_UNLOCKED_H

#include "hw/ppc/spapr.h"

void spapr_register_hypercall_unlocked(target_ulong opcode, spapr_hcall_fn fn);

/* Whether @opcode was registered to be served without the BQL */
bool spapr_hypercall_is_unlocked(target_ulong opcode);

/*
 * Serve @opcode, for which spapr_hypercall_is_unlocked() is true, without
 * the BQL; returns the hypercall's return code.
 */
target_ulong spapr_hypercall_unlocked(SpaprMachineState *spapr,
                                      PowerPCCPU *cpu, target_ulong opcode,
                                      target_ulong *args);

#endif
