#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""SMMUv3 command-queue benchmark, the fork against stock QEMU of the
same base, side by side: Debian's arm64 kernel (smmuv3_io.py) on
virt,iommu=smmuv3 under MTTCG with 1, 2 and 4 vCPUs, one O_DIRECT 4 KiB
reader per vCPU per disk (NVMe and virtio-blk behind the SMMU), strict
(iommu.strict=1) and lazy invalidation.  For each cell, RUNS boots of
each QEMU in alternation, medians of: reads completed per second
(without probes), and with strict mode the guest's time in
arm_smmu_cmdq_issue_cmdlist() per read, from a second phase of readers
in the same boot with a kprobe/kretprobe pair (the probes cost reads, so
that phase's reads/s are not counted; lazy mode rarely calls the
function).  Prints a table of the medians and the fork/stock ratios.

A boot whose guest fails (an oops, a hang, an I/O error: smmuv3_io.py's
checks) is left out of the medians and counted in the table's last
column.  Stock QEMU 10.0.13 corrupts guest memory behind the SMMU now
and then (the vring bug that patch 0064 fixes, docs/smmuv3-cmdq.md), so
its failures are expected; any failure of the fork makes the benchmark
exit with status 1 after the table.

Usage: smmuv3-bench.py FORK-QEMU STOCK-QEMU GUEST-DIR [RUNS] [SECONDS]
"""

import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from smmuv3_io import run, smmu_stats  # noqa: E402


def one(qemu, guest, smp, strict, seconds):
    r = run(qemu, guest, smp=smp, strict=strict, seconds=seconds,
            probe=strict, at_end=smmu_stats)
    if r["errors"]:
        print("%s smp=%d strict=%s failed: %s" % (qemu, smp, strict,
                                                  r["errors"]), flush=True)
        return None
    reads = sum(r["reads"].values())
    probed = sum(r["probed_reads"].values())
    st = r["extra"] or {}       # stock: no counters
    return {"rps": reads / seconds,
            "us_per_read": r["cmdq_us"] / probed if probed else 0.0,
            "calls_per_read": r["cmdq_calls"] / probed if probed else 0.0,
            # QEMU's own share: time the queue had an owner, per read
            # of both phases (the boot's few commands included)
            "drain_us_per_read": st.get("smmu-cmdq-drain-ns", 0) / 1000.0
            / (reads + probed) if reads + probed else 0.0}


def main():
    fork, stock, guest = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    seconds = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    qemus = {"fork": fork, "stock": stock}
    rows = []
    for smp in (1, 2, 4):
        for strict in (True, False):
            got = {k: [] for k in qemus}
            failed = {k: 0 for k in qemus}
            for i in range(runs):
                for k in (("fork", "stock") if i % 2 == 0
                          else ("stock", "fork")):
                    x = one(qemus[k], guest, smp, strict, seconds)
                    if x:
                        got[k].append(x)
                    else:
                        failed[k] += 1
            med = {k: {m: statistics.median(x[m] for x in v)
                       for m in ("rps", "us_per_read", "calls_per_read",
                                 "drain_us_per_read")}
                   if v else None for k, v in got.items()}
            rows.append((smp, strict, med, failed))
            print("smp=%d %s: %s" % (smp, "strict" if strict else "lazy",
                                     med), flush=True)
    print()
    print("| vCPUs | mode | stock reads/s | fork reads/s | fork/stock "
          "| stock us in cmdq/read | fork us in cmdq/read | fork/stock "
          "| failed boots (stock/fork) |")
    print("|---|---|---|---|---|---|---|---|---|")
    fork_failed = 0
    for smp, strict, med, failed in rows:
        f, s = med["fork"], med["stock"]
        fork_failed += failed["fork"]
        if not f or not s:
            # One side without a finished boot: the other's own figures
            cells = "%s | %s | - | %s | %s | - |" % (
                "%.0f" % s["rps"] if s else "-",
                "%.0f" % f["rps"] if f else "-",
                "%.1f" % s["us_per_read"] if s and strict else "-",
                "%.1f" % f["us_per_read"] if f and strict else "-")
        else:
            us = ("%.1f | %.1f | %.2f" % (s["us_per_read"], f["us_per_read"],
                                          f["us_per_read"] / s["us_per_read"])
                  if strict and s["us_per_read"] else "- | - | -")
            cells = "%.0f | %.0f | %.2f | %s |" % (s["rps"], f["rps"],
                                                   f["rps"] / s["rps"], us)
        print("| %d | %s | %s %d/%d |"
              % (smp, "strict" if strict else "lazy", cells,
                 failed["stock"], failed["fork"]))
    print()
    print("| vCPUs | stock strict/lazy reads/s | fork strict/lazy reads/s "
          "| fork calls/read | fork QEMU drain us/read |")
    print("|---|---|---|---|---|")
    by = {(smp, strict): med for smp, strict, med, failed in rows}
    for smp in (1, 2, 4):
        st, lz = by[(smp, True)], by[(smp, False)]
        ratio = ["%.2f" % (st[k]["rps"] / lz[k]["rps"])
                 if st[k] and lz[k] else "-" for k in ("stock", "fork")]
        f = st["fork"]
        print("| %d | %s | %s | %s | %s |"
              % (smp, ratio[0], ratio[1],
                 "%.2f" % f["calls_per_read"] if f else "-",
                 "%.2f" % f["drain_us_per_read"] if f else "-"))
    return 1 if fork_failed else 0


if __name__ == "__main__":
    sys.exit(main())
