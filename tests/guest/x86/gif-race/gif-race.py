#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""CPU 0's GIF is not undone by another vCPU's FPU status loads
(gif-race.c, built by gif-race.mk), under MTTCG with two vCPUs and
-cpu EPYC-Milan, on q35 and pc: QEMU must exit through isa-debug-exit
with 1, after "LOOPS 200000 AP <n>" with n > 0 (CPU 1 looped FLDENV the
whole time) and "DONE 0" (every self-IPI held while GIF was clear and
taken once it was set).

With a second QEMU (stock, of the same base) it also runs the guest
there and prints how many transitions it undid, for the record, not
asserted: stock QEMU 10.0.13 undid thousands in each of 5 runs here
(and the test's FLDENV-only first version in only 8 of 38 runs on a
busy host).

Usage: gif-race.py QEMU ELF [STOCK_QEMU]
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from guest_output import verdict  # noqa: E402

CPU = "EPYC-Milan"


def run(qemu, elf, machine):
    """(rc, debug console lines, stderr); rc None if it hung"""
    try:
        p = subprocess.run([qemu, "-display", "none", "-nodefaults",
                            "-accel", "tcg,thread=multi", "-M", machine,
                            "-smp", "2", "-cpu", CPU, "-no-reboot",
                            "-kernel", elf, "-debugcon", "stdio",
                            "-device",
                            "isa-debug-exit,iobase=0xf4,iosize=1"],
                           stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=60)
    except subprocess.TimeoutExpired as e:
        out, err = (x.decode(errors="replace") if isinstance(x, bytes)
                    else x or "" for x in (e.stdout, e.stderr))
        return None, out.splitlines(), "hung: killed after 60 s\n" + err
    return p.returncode, p.stdout.splitlines(), p.stderr


def summary(lines):
    loops = next((l for l in lines if l.startswith("LOOPS ")), "")
    done = next((l for l in lines if l.startswith("DONE ")), "")
    return loops, done


def main():
    qemu, elf = sys.argv[1:3]
    stock = sys.argv[3] if len(sys.argv) > 3 else None
    start = time.time()
    errors = []
    for machine in ("q35", "pc"):
        rc, lines, err = run(qemu, elf, machine)
        loops, done = summary(lines)
        fails = [l for l in lines if l.startswith("FAIL")]
        print("%s: rc %s, %s, %s" % (machine, rc, loops, done))
        m = re.fullmatch(r"LOOPS 200000 AP (\d+)", loops)
        if rc != 1 or done != "DONE 0" or fails or not m or \
                int(m.group(1)) == 0:
            errors.append("%s: rc %s, %s, %s, %s\n%s" % (
                machine, rc, loops, done, fails[:4], err[-500:]))
    if stock:
        rc, lines, err = run(stock, elf, "q35")
        print("stock, q35 (not asserted): rc %s, %s, %s" % (
            (rc,) + summary(lines)))
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
