#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Benchmark of Linux's posted MSI (seed 001's metric) on the emulated
Intel IOMMU: the posted-MSI guest (4 vCPUs under MTTCG, NVMe
controllers, one O_DIRECT reader per vCPU per controller for SECONDS of
guest time) on the fork with x-posted-intr=on, on the fork with it off,
and on stock QEMU (which cannot post), runs alternated in one command.
Reports medians of: reads completed per guest second, NVMe MSIs handled
per read, PMN notifications per NVMe MSI (the coalescing ratio; 1.0
would be one notification per interrupt) and, on the fork, the IOMMU's
coalesced posts.  Prints a Markdown table for docs/benchmarks.md.

Usage: posted-msi-bench.py FORK STOCK GUEST-DIR [RUNS] [SECONDS] [DISKS]
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from posted_msi import run  # noqa: E402


def main():
    fork, stock, guest = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    seconds = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    disks = int(sys.argv[6]) if len(sys.argv) > 6 else 2
    configs = [("fork, x-posted-intr=on", fork, True),
               ("fork, x-posted-intr=off", fork, False),
               ("stock", stock, None)]
    samples = {label: [] for label, _, _ in configs}
    for i in range(runs):
        for label, binary, posted in configs:
            r = run(binary, guest, posted, disks=disks, seconds=seconds)
            if r["errors"] or r["timeouts"]:
                print("run %d, %s: %s %s" % (i + 1, label, r["errors"],
                                             r["timeouts"]))
                return 1
            st = r["stats"]
            s = {"rps": r["reads"] / seconds,
                 "msi_per_read": r["msi_run"] / max(r["reads"], 1),
                 "pmn_per_msi": r["pmn_run"] / max(r["msi_run"], 1),
                 "coalesced": (st.get("vtd-posted-coalesced", 0) /
                               max(st.get("vtd-posted-interrupts", 0), 1))}
            samples[label].append(s)
            print("run %d, %-24s reads/s %8.0f  MSI/read %.3f  "
                  "PMN/MSI %.3f  coalesced/posted %.3f" % (
                      i + 1, label, s["rps"], s["msi_per_read"],
                      s["pmn_per_msi"], s["coalesced"]), flush=True)

    def med(label, key):
        return statistics.median(x[key] for x in samples[label])

    base = med("stock", "rps")
    print()
    print("%d vCPUs, %d NVMe, %d s per run, medians of %d runs each, "
          "alternated" % (4, disks, seconds, runs))
    print()
    print("| QEMU | reads/s (guest time) | vs stock | NVMe MSIs per read "
          "| PMN per NVMe MSI | posts that found ON set |")
    print("|---|---|---|---|---|---|")
    for label, _, posted in configs:
        print("| %s | %.0f | %.2f | %.3f | %s | %s |" % (
            label, med(label, "rps"), med(label, "rps") / base,
            med(label, "msi_per_read"),
            "%.3f" % med(label, "pmn_per_msi") if posted else "0 (no PMN)",
            "%.3f" % med(label, "coalesced") if posted else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
