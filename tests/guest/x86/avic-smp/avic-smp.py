#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""IPIs between two L2 vCPUs under the fork's emulated AVIC, under
MTTCG (avic-smp.c, built by avic-smp.mk): each of 12,000 IPIs taken
exactly once, through the physical table, the logical one and the
all-but-self shorthand, to a target that spins or halts in guest mode
or is outside it, every incomplete-IPI exit right.

Runs the guest in x2AVIC mode (-cpu EPYC-Milan,+x2apic,+avic,+x2avic:
x2APIC MSRs) and in xAVIC mode (-cpu EPYC-Milan,+avic: the APIC page)
on q35, and x2AVIC on pc.  Each run must print its mode, "IPIS 12000
TAKEN 12000 TWICE 0" and "DONE 0", and exit through isa-debug-exit
with 1.

Before the fix of x2AVIC incomplete IPIs (the ICR write's effect ran
again at the next instruction boundary), x2AVIC runs failed every time
here: 12-265 IPIs of 3,000 taken twice in 5 of 5 runs of a first
version; 1,422 (q35) and 2,136 (pc) of 12,000 in this one.  xAVIC
passed there too.

Usage: avic-smp.py QEMU ELF
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from guest_output import run_flat32_guest, verdict  # noqa: E402

ROUNDS = 12000
CASES = (("q35", "EPYC-Milan,+x2apic,+avic,+x2avic", "x2avic"),
         ("q35", "EPYC-Milan,+avic", "xavic"),
         ("pc", "EPYC-Milan,+x2apic,+avic,+x2avic", "x2avic"))


def run(qemu, elf, machine, cpu):
    """(rc, debug console lines, stderr); rc None if it hung"""
    return run_flat32_guest(qemu, elf, machine, cpu, timeout=90)


def main():
    qemu, elf = sys.argv[1:3]
    start = time.time()
    errors = []
    for machine, cpu, mode in CASES:
        rc, lines, err = run(qemu, elf, machine, cpu)
        counts = [l for l in lines if l.startswith("IPIS ")]
        fails = [l for l in lines if l.startswith("FAIL")]
        print("%s -cpu %s: rc %s, %s" % (machine, cpu, rc,
                                         counts[-1] if counts else lines[-3:]))
        for line in fails[:5]:
            print("  " + line)
        want = "IPIS %d TAKEN %d TWICE 0 " % (ROUNDS, ROUNDS)
        m = re.match(r"IPIS \d+ TAKEN \d+ TWICE \d+ EXITS (\d+)$",
                     counts[-1]) if counts else None
        if rc is None:
            errors.append("%s %s: hung (90 s): %s" % (machine, mode,
                                                       lines[-5:]))
        elif (rc != 1 or "MODE " + mode not in lines or fails or
              "DONE 0" not in lines or not m or
              not counts[-1].startswith(want) or
              int(m.group(1)) < 2 * ROUNDS // 3):
            errors.append("%s %s: rc %s, %s %s %s" % (
                machine, mode, rc, counts, fails[:5], err[-300:]))
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
