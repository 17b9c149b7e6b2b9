#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Linux's posted MSI (CONFIG_X86_POSTED_MSI, intremap=posted_msi) on the
emulated Intel IOMMU with x-posted-intr=on: 4 vCPUs under MTTCG, 2 NVMe
controllers, one O_DIRECT reader per vCPU per controller for 3 s.

Checks, from the guest's own dmesg, /sys/block and /proc/interrupts:
interrupt remapping in x2APIC mode, every disk read, no NVMe timeout or
kernel warning, the PMN row moving; and that the IOMMU's counters
(read over QMP while the guest is quiet, before and after the reads)
agree with the guest: one notification per PMN interrupt, and one NVMe
interrupt handled per posted interrupt whose PIR bit was clear.  Then the same boot with
x-posted-intr=off: the kernel falls back to remapped MSIs (PMN stays 0)
and the disks still read.

Usage: posted-msi.py QEMU-SYSTEM-X86_64 GUEST-DIR
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from posted_msi import agreement, quiet_before, run, stats_delta  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "x86"))
from guest_output import verdict  # noqa: E402


def check_common(r, label, errors):
    errors += ["%s: %s" % (label, e) for e in r["errors"]]
    if "Enabled IRQ remapping in x2apic mode" not in r["dmesg"]:
        errors.append("%s: interrupt remapping not in x2APIC mode" % label)
    for d, n in sorted(r["reads_per_disk"].items()):
        if n <= 0:
            errors.append("%s: no read completed on %s" % (label, d))
    if r["timeouts"]:
        errors.append("%s: the guest reported %s" % (label, r["timeouts"]))
    if not r["late_same"]:
        errors.append("%s: interrupts arrived while the guest was quiet"
                      % label)


def main():
    qemu, guest = sys.argv[1], sys.argv[2]
    start = time.time()
    errors = []

    r = run(qemu, guest, posted=True)
    check_common(r, "posted", errors)
    st = r["stats"]
    if r["pmn_run"] <= 0:
        errors.append("posted: the PMN row did not move")
    if not st or not r["stats_before"]:
        errors.append("posted: no IOMMU counters over QMP")
    else:
        errors += [("posted: " + e) for e in
                   quiet_before(r["stats_before"], r["pmn_before"]) +
                   agreement(st, stats_delta(st, r["stats_before"]),
                             r["pmn"], r["msi_run"])]
        if st["vtd-posted-faults"] or st["vtd-posted-kvm-routes-refused"]:
            errors.append("posted: faults or refused routes: %s" % st)
        print("posted: %d reads, %d NVMe MSIs, %d PMN notifications "
              "(%.2f per MSI), IOMMU: %s" % (
                  r["reads"], r["msi_run"], r["pmn_run"],
                  r["pmn_run"] / max(r["msi_run"], 1), st))

    r = run(qemu, guest, posted=False)
    check_common(r, "remapped", errors)
    if r["pmn"] != 0:
        errors.append("remapped: the PMN row counts %d without CAP.PI"
                      % r["pmn"])
    if r["msi_run"] <= 0:
        errors.append("remapped: no NVMe MSI arrived")
    if r["stats"]:
        errors.append("remapped: posting counters without x-posted-intr")
    print("remapped: %d reads, %d NVMe MSIs, PMN 0" % (r["reads"],
                                                       r["msi_run"]))
    if errors:
        print(r["serial"][-3000:])
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
