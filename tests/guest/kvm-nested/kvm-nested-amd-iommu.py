#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The emulated AMD IOMMU under KVM, in the nested test bed (a Debian
kernel as KVM host under the fork's TCG, the fork's binary inside):

- -device amd-iommu,intremap=on,x-ga-vapic=on under KVM is refused at
  start-up, naming the option (GA mode is emulated under TCG only);
- -accel kvm -M q35,kernel-irqchip=split -device amd-iommu,intremap=on
  (x-southbridge=on, so that Linux 7.3 keeps interrupt remapping)
  starts and answers QMP;
- an L2 Debian kernel boots on it under KVM with interrupt remapping on
  (its timer and console interrupts arrive through IR-IO-APIC).

Usage: kvm-nested-amd-iommu.py QEMU HOSTDIR
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testbed import TestbedError, run_testbed, verdict  # noqa: E402

# x-southbridge=on: Linux 7.3 as L2 keeps interrupt remapping
IOMMU = ["-accel", "kvm", "-M", "q35,kernel-irqchip=split",
         "-device", "amd-iommu,intremap=on,x-southbridge=on"]
CASES = [
    {"name": "ga-vapic", "qmp": [{"execute": "query-status"}],
     "args": ["-accel", "kvm", "-M", "q35,kernel-irqchip=split", "-device",
              "amd-iommu,intremap=on,x-ga-vapic=on", "-S"]},
    {"name": "intremap", "qmp": [{"execute": "query-status"}],
     "args": IOMMU + ["-S"]},
]


def main():
    qemu, hostdir = sys.argv[1:3]
    start = time.time()
    try:
        res = run_testbed(qemu, qemu, hostdir, CASES,
                          l2={"args": ["-M", "q35,kernel-irqchip=split",
                                       "-device", "amd-iommu,intremap=on,"
                                       "x-southbridge=on"]})
    except TestbedError as e:
        print("FAIL: %s\n%s" % (e, e.console[-3000:]))
        return 1
    errors = []
    ga = res["cases"]["ga-vapic"]
    if ga["rc"] != 1 or "x-ga-vapic=on: guest virtual APIC mode is " \
            "emulated under TCG only" not in ga["stderr"]:
        errors.append("x-ga-vapic=on under KVM: rc %s, %s"
                      % (ga["rc"], ga["stderr"][-300:]))
    print("x-ga-vapic=on under KVM: rc %s: %s" % (
        ga["rc"], ga["stderr"].strip().splitlines()[:1]))
    ir = res["cases"]["intremap"]
    reply = (ir["qmp"] or [None])[0] or {}
    if ir["rc"] != 0 or "return" not in reply:
        errors.append("amd-iommu under KVM did not start: rc %s, %s"
                      % (ir["rc"], ir["stderr"][-300:]))
    print("amd-iommu,intremap=on under KVM: rc %s" % ir["rc"])
    l2 = res["l2"]
    ir_lines = [l for l in l2["console"].splitlines() if "IR-IO-APIC" in l]
    if not l2["booted"] or not ir_lines:
        errors.append("L2 on amd-iommu under KVM: booted %s, IR-IO-APIC "
                      "lines %d, rc %s; console %r; stderr %r" % (
                          l2["booted"], len(ir_lines), l2["rc"],
                          l2["console"][-800:], l2["stderr"][-800:]))
    print("L2 booted: %s, interrupts through IR-IO-APIC: %s" % (
        l2["booted"], [l.split()[-1] for l in ir_lines]))
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
