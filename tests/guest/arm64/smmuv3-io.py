#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The emulated SMMUv3 with Debian's arm64 kernel (smmuv3_io.py): on
-M virt,iommu=smmuv3 under MTTCG with 2 vCPUs and strict invalidation
(iommu.strict=1: every DMA unmap queues TLBI and CMD_SYNC commands),
an NVMe controller and a virtio-blk disk (iommu_platform=on) behind the
SMMU.  Checks that the kernel probed the SMMU and its command queue,
runs strict mode, put both devices in IOMMU groups, that on each disk
1 MiB written with O_DIRECT reads back the same, that both disks
completed reads under one reader per vCPU, that the guest reported no
timeout, I/O error or SMMU event and QEMU nothing, and that the SMMU's
counters (query-stats, asked after the guest powered off) show the
queue served TLB invalidations and syncs in batches, without errors,
and that translations went through the IOTLB.

Then the same in lazy mode (iommu.strict=0): unmaps wait in the guest's
flush queue, which invalidates each domain's whole ASID (TLBI_NH_ASID)
when it flushes, so the written data reading back checks that an ASID
invalidation removed every entry of that ASID (freed IOVAs are reused
after the flush); its counters must show entries removed from their
ASID's list (smmu-iotlb-list-removed).  With ASID invalidation made a
no-op, this guest's kernel oopsed on stale translations (2026-12-04).

Usage: smmuv3-io.py QEMU GUEST-DIR   (GUEST-DIR from
       tests/guest/fetch-arm64-guest.sh)
"""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from smmuv3_io import DISKS, run, smmu_stats  # noqa: E402


def check(qemu, guest, strict):
    """One boot in strict or lazy mode; its errors."""
    mode = "strict" if strict else "lazy"
    r = run(qemu, guest, smp=2, strict=strict, seconds=2, at_end=smmu_stats)
    errors = list(r["errors"])
    dmesg = r["dmesg"]
    print("%s: wall %.1f s; reads %s" % (mode, r["wall"], r["reads"]))
    if "arm-smmu-v3" not in dmesg or "for cmdq" not in dmesg:
        errors.append("the kernel did not probe the SMMU's command queue")
    if "%s mode" % mode not in dmesg:
        errors.append("DMA invalidation is not %s" % mode)
    grouped = r["groups"]
    if grouped.count("0000:00:") < 2:
        errors.append("not both PCI devices in IOMMU groups: %r" % grouped)
    verified = dict(line.split()[:2] for line in r["verify"].splitlines()
                    if len(line.split()) >= 2)
    for d in DISKS:
        if verified.get(d) != "ok":
            errors.append("%s: the pattern written did not read back (%s)"
                          % (d, verified.get(d, "not found")))
        if r["reads"].get(d, 0) <= 0:
            errors.append("%s: no reads completed" % d)
    # An SMMU event (a fault the driver logs) counts as an error too.
    for word in ("timeout", "I/O error", "WARNING", "BUG", "event 0x"):
        if word in r["dmesg_tail"]:
            errors.append("the guest reported %r: %s"
                          % (word, r["dmesg_tail"][-800:]))
            break
    st = r["extra"] or {}
    print("%s: SMMU: %s" % (mode, st))
    if not st:
        errors.append("no SMMU command-queue counters over QMP")
    else:
        if st["smmu-cmdq-tlbi"] <= 0 or st["smmu-cmdq-syncs"] <= 0:
            errors.append("%s mode, yet no TLBI or CMD_SYNC ran" % mode)
        if not strict and st["smmu-iotlb-list-removed"] <= 0:
            errors.append("lazy mode, yet no ASID invalidation removed "
                          "an entry from its ASID's list")
        if st["smmu-cmdq-batches"] <= 0 or \
                st["smmu-cmdq-batches"] > st["smmu-cmdq-commands"]:
            errors.append("batches and commands do not add up")
        # One owner at a time: owned time fits in the boot's wall time
        if not 0 < st["smmu-cmdq-drain-ns"] <= r["wall"] * 1e9:
            errors.append("smmu-cmdq-drain-ns %d outside (0, %d s]"
                          % (st["smmu-cmdq-drain-ns"], r["wall"]))
        if st["smmu-iotlb-misses"] <= 0:
            errors.append("no translation walked the page tables")
        if st["smmu-cmdq-errors"]:
            errors.append("%d command errors" % st["smmu-cmdq-errors"])
    if r["qemu_log"].strip():
        errors.append("QEMU reported: %s" % r["qemu_log"].strip()[-800:])
    if errors:
        print(r["serial"][-3000:])
    return ["%s: %s" % (mode, e) for e in errors]


def main():
    qemu, guest = sys.argv[1], sys.argv[2]
    start = time.time()
    errors = check(qemu, guest, True) + check(qemu, guest, False)
    for e in errors:
        print("FAIL: " + e)
    print("elapsed %.1f s" % (time.time() - start))
    print("FAIL" if errors else "PASS")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
