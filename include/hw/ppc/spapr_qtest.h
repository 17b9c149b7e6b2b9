/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * qtest verb of the pseries machine to issue a hypercall on a given
 * vCPU, so qtests can exercise H_CPPR, H_XIRR, H_EOI, H_IPI, H_IPOLL and
 * the rest without a guest:
 *
 *   hcall CPU-INDEX OPCODE [ARG0 .. ARG8]
 *   -> OK RET R0 R1 R2 R3          (hex; R0..R3 are args[] on return)
 *
 * Hooked in hw/ppc/spapr_rtas.c's qtest command callback; the
 * "xics-stress" verb below is dispatched from spapr_qtest_hcall().
 */

#ifndef HW_PPC_SPAPR_QTEST_H
#define HW_PPC_SPAPR_QTEST_H

#include "chardev/char-fe.h"

bool spapr_qtest_hcall(CharBackend *chr, gchar **words);

/*
 *   xics-stress THREADS ROUNDS SEED
 * A multi-threaded stress test of the emulated XICS:
 * hw/ppc/spapr_qtest_xics_stress.c.
 */
bool spapr_qtest_xics_stress(CharBackend *chr, gchar **words);

#endif
