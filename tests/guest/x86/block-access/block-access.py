#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""FNSAVE, FRSTOR, FXSAVE and FXRSTOR across the end of RAM (block-access.c,
built by block-access.mk): the operand's first page is RAM, its second
unassigned.  QEMU must not crash (10.0 wrote the second page through a
null host pointer: SIGSEGV), and the part in RAM must be written and
read; then a CALL from a 32-bit task to a 16-bit one and its IRET back.
"DONE 0", exit status 1 through isa-debug-exit.  One CPU, on q35 and
pc.

Usage: block-access.py QEMU ELF
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from guest_output import run_flat32_guest, verdict  # noqa: E402


def main():
    qemu, elf = sys.argv[1:3]
    start = time.time()
    errors = []
    for machine in ("q35", "pc"):
        rc, lines, err = run_flat32_guest(qemu, elf, machine, "qemu64",
                                          smp=1)
        fails = [l for l in lines if l.startswith("FAIL")]
        print("%s: rc %s, %d OK, %d FAIL" % (
            machine, rc, sum(l.startswith("OK") for l in lines), len(fails)))
        if rc != 1 or "DONE 0" not in lines or fails:
            errors.append("%s: rc %s, %s %s" % (machine, rc, fails or
                                                lines[-3:], err[-300:]))
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
