#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The "-d int" log of a hypercall served without the BQL shows the call,
not its result: boots xics-guest (tests/guest/ppc64/guest) on
-M pseries,ic-mode=xics,x-vof=on with one vCPU, a short IPI and device
phase, and "-d int -D FILE".  Every hypercall is logged as a "Raise
exception ... => SYSCALL" line followed by a "hypercall r3=..." line
with the registers; r3 must be the opcode.  The XICS hypercalls
(H_CPPR, H_IPI, H_XIRR, H_EOI) go through the lock-free "sc 1" path of
the fork: each must appear with its opcode in r3, as many times as the
fork's counters say the guest made them (H_XIRR that found an
interrupt, H_EOI), and no logged hypercall may show a return code
(H_SUCCESS, 0) where the opcode belongs, which is what logging after
the call would print.

Usage: xics-hcall-log.py QEMU-SYSTEM-PPC64
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xics_guest as xg  # noqa: E402

H_EOI, H_CPPR, H_IPI, H_XIRR = 0x64, 0x68, 0x6c, 0x74
XICS = {H_EOI: "H_EOI", H_CPPR: "H_CPPR", H_IPI: "H_IPI", H_XIRR: "H_XIRR"}


def main():
    qemu = sys.argv[1]
    errors = []
    with xg.GuestVM(qemu, 1, "mode=test n=30 phases=ipi,dev", xg.EDU4[:1],
                    name="hcall-log") as g:
        log = os.path.join(g.vm.tmp, "int.log")
        g.vm.cmd("human-monitor-command", **{"command-line": "log int"})
        g.vm.cmd("human-monitor-command",
                 **{"command-line": "logfile %s" % log})
        g.cont()
        passed, text = g.wait_result(timeout=120)
        if not passed:
            errors.append("the guest did not pass:\n" + text[-2000:])
        per_vcpu, _ = xg.irq_stats(g.vm)
        g.vm.cmd("human-monitor-command", **{"command-line": "log none"})
        with open(log) as f:
            lines = f.read().splitlines()

    calls = {}
    for i, line in enumerate(lines):
        if "=> SYSCALL" not in line or "error=01" not in line:
            continue
        m = (re.match(r"hypercall r3=([0-9a-f]+)", lines[i + 1])
             if i + 1 < len(lines) else None)
        if not m:
            errors.append("no register dump after %r" % line)
            continue
        r3 = int(m.group(1), 16)
        calls[r3] = calls.get(r3, 0) + 1
    if not calls:
        errors.append("no hypercall in the -d int log")
    if calls.get(0):
        errors.append("%d hypercall(s) logged with r3=0 (a result, not "
                      "an opcode)" % calls[0])
    for op, name in XICS.items():
        if not calls.get(op):
            errors.append("%s (0x%x) never logged with its opcode"
                          % (name, op))
    stats = list(per_vcpu.values())[0] if per_vcpu else {}
    for op, stat in ((H_EOI, "xics-icp-eois"),):
        if stat in stats and calls.get(op, 0) < stats[stat]:
            errors.append("%s logged %d times, the presenter counted %d"
                          % (XICS[op], calls.get(op, 0), stats[stat]))
    print("hypercalls logged by opcode: %s" % ", ".join(
        "%s=%d" % (XICS.get(op, "0x%x" % op), n)
        for op, n in sorted(calls.items())))
    if errors:
        for e in errors:
            print("FAIL: " + e)
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
