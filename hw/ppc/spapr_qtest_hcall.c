/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * The "hcall" qtest verb of the pseries machine: see
 * include/hw/ppc/spapr_qtest.h.  Runs in the qtest thread with the BQL
 * held, as a hypercall from that vCPU would.
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "hw/core/cpu.h"
#include "hw/ppc/spapr.h"
#include "hw/ppc/spapr_qtest.h"
#include "system/qtest.h"

#define HCALL_MAX_ARGS 9

bool spapr_qtest_hcall(CharBackend *chr, gchar **words)
{
    target_ulong args[HCALL_MAX_ARGS] = { 0 };
    uint64_t opcode, v;
    unsigned long index;
    target_ulong ret;
    CPUState *cs;
    int n;

    if (words[0] && strcmp(words[0], "xics-stress") == 0) {
        return spapr_qtest_xics_stress(chr, words);
    }
    if (!words[0] || strcmp(words[0], "hcall") != 0) {
        return false;
    }
    if (!words[1] || qemu_strtoul(words[1], NULL, 0, &index) ||
        !words[2] || qemu_strtou64(words[2], NULL, 0, &opcode)) {
        qtest_sendf(chr, "FAIL usage: hcall CPU OPCODE [ARG...]\n");
        return true;
    }
    cs = qemu_get_cpu(index);
    if (!cs) {
        qtest_sendf(chr, "FAIL no vCPU %lu\n", index);
        return true;
    }
    for (n = 0; words[3 + n]; n++) {
        if (n == HCALL_MAX_ARGS || qemu_strtou64(words[3 + n], NULL, 0, &v)) {
            qtest_sendf(chr, "FAIL bad or too many hcall arguments\n");
            return true;
        }
        args[n] = v;
    }

    ret = spapr_hypercall(POWERPC_CPU(cs), opcode, args);
    qtest_sendf(chr, "OK 0x" TARGET_FMT_lx " 0x" TARGET_FMT_lx " 0x"
                TARGET_FMT_lx " 0x" TARGET_FMT_lx " 0x" TARGET_FMT_lx "\n",
                ret, args[0], args[1], args[2], args[3]);
    return true;
}
