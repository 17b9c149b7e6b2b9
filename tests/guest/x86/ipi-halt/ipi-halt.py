#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""IPIs of L0's own local APIC to a vCPU that halts, under MTTCG
(ipi-halt.c, built by ipi-halt.mk): CPU 0 calls CPU 1 40,000 times as
Linux's smp_call_function_single() does (IF clear, send, spin until
the handler counted it) while CPU 1 goes round STI;HLT, spinning with
IF set and clear, and IPIs back to CPU 0, with its LAPIC timer ticking
for the first half.  Every call must be taken exactly once: "CALLS
40000 TAKEN 40000" and "DONE 0", exit status 1 through isa-debug-exit;
a lost IPI or wake-up leaves CPU 0 waiting and the run times out.

Run in xAPIC mode (-cpu qemu64: the APIC page) on q35, and in x2APIC
mode (-cpu qemu64,+x2apic: the MSRs) on q35 and pc.  It guards the
delivery path under the nested test bed's L1 kernels, where one L1
boot in 100 hung with CPU 0 waiting after an IPI to a halted CPU 1
(docs/testing.md); 2,000,000 calls on this and on stock found none
lost.

Usage: ipi-halt.py QEMU ELF
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from guest_output import run_flat32_guest, verdict  # noqa: E402

ROUNDS = 40000
CASES = (("q35", "qemu64", "xapic"),
         ("q35", "qemu64,+x2apic", "x2apic"),
         ("pc", "qemu64,+x2apic", "x2apic"))


def run(qemu, elf, machine, cpu):
    """(rc, debug console lines, stderr); rc None if it hung"""
    return run_flat32_guest(qemu, elf, machine, cpu)


def main():
    qemu, elf = sys.argv[1:3]
    start = time.time()
    errors = []
    want = "CALLS %d TAKEN %d " % (ROUNDS, ROUNDS)
    for machine, cpu, mode in CASES:
        rc, lines, err = run(qemu, elf, machine, cpu)
        counts = [l for l in lines if l.startswith("CALLS ")]
        late = [l for l in lines if l.startswith("LATE ")]
        print("%s -cpu %s: rc %s, %s%s" % (
            machine, cpu, rc, counts[-1] if counts else lines[-3:],
            ", %d late" % len(late) if late else ""))
        if rc is None:
            errors.append("%s %s: hung (60 s), CPU 0 still waiting: %s"
                          % (machine, mode, lines[-5:]))
        elif (rc != 1 or "MODE " + mode not in lines or
              "DONE 0" not in lines or not counts or
              not counts[-1].startswith(want)):
            errors.append("%s %s: rc %s, %s %s" % (
                machine, mode, rc, lines[-5:], err[-300:]))
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
