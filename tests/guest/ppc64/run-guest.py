#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot xics-guest once and print its console and the fork's XICS
counters: for reproducing what the tests saw.  Devices: "edu" (four edu,
the default), "e1000" (four e1000).

Usage: run-guest.py QEMU-SYSTEM-PPC64 VCPUS "BOOTARGS" [edu|e1000]
Example: run-guest.py build/qemu-system-ppc64 2 "mode=test n=300 phases=ipi"
With RUN_GUEST_KILL=1 QEMU is killed after the verdict instead of quit
(make check-tsan: a ThreadSanitizer build may hang on the way out);
RUN_GUEST_TIMEOUT is how long to wait for the verdict (default 300 s).
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xics_guest as xg  # noqa: E402


def main():
    qemu, smp, bootargs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    devices = xg.E1000_4 if sys.argv[4:] == ["e1000"] else xg.EDU4
    with xg.GuestVM(qemu, smp, bootargs, devices) as g:
        g.cont()
        passed, text = g.wait_result(
            int(os.environ.get("RUN_GUEST_TIMEOUT", "300")))
        print(text, end="")
        if "XICS-GUEST RESULT" not in text:
            # No verdict: QEMU may hang (a ThreadSanitizer build stuck in
            # its own report), so ask it nothing more and kill it.
            print("run-guest: no verdict in time", file=sys.stderr)
            return 1
        per_vcpu, ics = xg.irq_stats(g.vm)
        if ics is not None:
            print(json.dumps({"irq-vcpu": per_vcpu, "irq-device": ics},
                             indent=1))
        if not os.environ.get("RUN_GUEST_KILL"):
            g.vm.quit()
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
