#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""An interrupt VMRUN injects is delivered to L2 once, however often
QEMU's main loop raises interrupts meanwhile (inject-race.c, built by
inject-race.mk; 0052-target-i386-leave-no-exception_index-behind-after-VM.patch),
under MTTCG with two vCPUs and -cpu
EPYC-Milan, on q35 and pc: QEMU must exit through isa-debug-exit with
1, after "ROUNDS 20000 INJECTED 20000 NESTED 0 TICKS <t> WINDOW <w>"
with t > 0 and w > 0 (the PIT raised IRQ 0 while an injected handler
ran with IF clear: the kicks that show the bug came) and "DONE 0".

With a second QEMU (stock, of the same base) it also runs the guest
there, once, on q35, and asserts that the guest completes its rounds
and counts double deliveries (DONE > 0, exit status 3): stock QEMU
10.0.13 delivered 2,241-2,997 injections twice per run in 7 of 7
runs, measured while another job kept both host cores busy, so the
check is seen to catch the bug each time it runs.

Usage: inject-race.py QEMU ELF [STOCK_QEMU]
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from guest_output import run_flat32_guest, verdict  # noqa: E402

CPU = "EPYC-Milan"
ROUNDS = 20000
RESULT = re.compile(r"ROUNDS %d INJECTED (\d+) NESTED (\d+) TICKS (\d+) "
                    r"WINDOW (\d+)" % ROUNDS)
TIMEOUT = 90        # each run; three runs stay within run-checks' 300 s


def run(qemu, elf, machine):
    """(rc, debug console lines, stderr); rc None if it hung"""
    return run_flat32_guest(qemu, elf, machine, CPU, timeout=TIMEOUT)


def outcome(lines):
    """(the result line's match or None, the DONE count or None, FAIL
    lines)"""
    m = next((RESULT.fullmatch(l) for l in lines if RESULT.fullmatch(l)),
             None)
    d = next((re.fullmatch(r"DONE (\d+)", l) for l in lines
              if re.fullmatch(r"DONE (\d+)", l)), None)
    return m, int(d.group(1)) if d else None, \
        [l for l in lines if l.startswith("FAIL")]


def main():
    qemu, elf = sys.argv[1:3]
    stock = sys.argv[3] if len(sys.argv) > 3 else None
    start = time.time()
    errors = []
    for machine in ("q35", "pc"):
        rc, lines, err = run(qemu, elf, machine)
        m, done, fails = outcome(lines)
        print("%s: rc %s, %s" % (machine, rc, " / ".join(lines)))
        if rc != 1 or done != 0 or fails or not m or \
                int(m.group(1)) != ROUNDS or int(m.group(2)) != 0 or \
                int(m.group(3)) == 0 or int(m.group(4)) == 0:
            errors.append("%s: rc %s, %s\n%s" % (
                machine, rc, lines[:6], err[-500:]))
    if stock:
        if not os.access(stock, os.X_OK):
            errors.append("stock QEMU %s is not there (make stock)" % stock)
        else:
            rc, lines, err = run(stock, elf, "q35")
            m, done, fails = outcome(lines)
            print("stock, q35: rc %s, %s" % (rc, " / ".join(lines)))
            if not m or done is None or fails or int(m.group(4)) == 0:
                errors.append("stock, q35: the guest did not complete its "
                              "rounds: rc %s, %s\n%s" % (rc, lines[:6],
                                                         err[-500:]))
            elif done == 0 or rc != 3:
                errors.append("stock, q35: no injection delivered twice "
                              "(rc %s, %s): the check did not catch the "
                              "bug the exception_index patch fixes"
                              % (rc, lines[:6]))
            else:
                print("stock, q35: %d injections delivered twice: the "
                      "check catches the bug the exception_index patch "
                      "fixes" % done)
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
