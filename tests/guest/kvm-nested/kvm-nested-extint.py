#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""An 8259 interrupt (ExtINT) re-injected while QEMU asks for an
interrupt window, in L1's KVM with AVIC: the nested test bed boots our
freestanding guest extint-reinject (tests/guest/x86/extint-reinject) as
L2 with kernel-irqchip=split, so the 8259 is the L1 QEMU's.

The guest makes every interrupt's delivery exit to L1's KVM (a nested
page fault on a stack page it never wrote) while the PIT and the RTC
interrupt at about 2 kHz each.  When the RTC's IRQ8 is being
re-injected and the PIT's IRQ0 arrives, the L1 QEMU is kicked out of
KVM_RUN and, unless it knows better, asks for an interrupt window for
IRQ0 while KVM still holds IRQ8.  Linux 7.3's KVM then livelocks: each
pass re-injects IRQ8 (dropping its IRQ-window inhibit), asks for the
window (setting it again), and the inhibit's change makes it cancel the
entry; the guest never runs again (docs/testing.md).  QEMU's
kvm_arch_pre_run() does not ask for the window while KVM has an
interrupt to re-inject (patch 0067), and the guest completes.

Passes when L2 prints its result line with every round done.  Run with
the fork as L0 and as L1's QEMU; with stock QEMU as L1's QEMU (the
optional third argument) it shows the livelock on L1 7.3.

Usage: kvm-nested-extint.py QEMU HOSTDIR ELF [L1-QEMU]
       (QEMU serves as L0 and, without L1-QEMU, as L1's QEMU; HOSTDIR
       from fetch-kvm-host.sh; ELF: build/guest-x86/extint-reinject.elf)
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import avic  # noqa: E402
from testbed import TestbedError, run_testbed, verdict  # noqa: E402

ROUNDS = 600
# L2's memory from a file in L1's initramfs (4 KiB pages, no transparent
# huge pages): each stack page of the guest faults on its own
L2_ARGS = ["-M", "q35,kernel-irqchip=split,memory-backend=l2mem",
           "-object", "memory-backend-file,id=l2mem,size=256M,"
           "mem-path=/tmp/l2mem,share=on",
           "-smp", "1", "-device", "isa-debug-exit,iobase=0xf4,iosize=4"]


def main():
    qemu, hostdir, elf = sys.argv[1:4]
    qemu_l1 = sys.argv[4] if len(sys.argv) > 4 else qemu
    start = time.time()
    try:
        res = run_testbed(qemu, qemu_l1, hostdir, [],
                          l2={"kernel": elf, "args": L2_ARGS},
                          l0_extra_args=avic.L0_ARGS, timeout=600,
                          run_timeout=400)
    except TestbedError as e:
        print("FAIL: %s\n%s" % (e, e.console[-3000:]))
        return 1
    l1, l2 = res["l1"], res["l2"]
    print("L1 %s, kvm_amd: %s" % (l1["uname"], " ".join(
        "%s=%s" % kv for kv in sorted(l1["params"].items()))))
    m = re.search(r"EXTINT-REINJECT ROUNDS (\d+) IRQ0 (\d+) IRQ8 (\d+)",
                  l2["stdout"])
    irqwin = [t for t in l2["trace"] if "IRQWIN" in t]
    print("L2: rc %s, %s; %d IRQWIN inhibit changes in L1's trace" % (
        l2["rc"], m.group(0) if m else "no result line", len(irqwin)))
    errors = []
    if not m or int(m.group(1)) != ROUNDS or l2["rc"] != 1:
        print("L1's trace during L2's run, last lines:")
        for line in l2["trace"][-60:]:
            print("    " + line.strip())
        errors.append("L2 did not complete its rounds (rc %s): stdout "
                      "tail %r, stderr %r, last IRQWIN changes %s" % (
                          l2["rc"], l2["stdout"][-300:],
                          l2["stderr"].strip()[-300:], irqwin[-4:]))
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
