#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""XICS benchmark of the fork against stock QEMU (make bench): boots
xics-guest in bench mode on -M pseries,ic-mode=xics under MTTCG at 1, 2
and 4 vCPUs with four edu devices, fork and stock alternating, several
runs each.  The guest measures with its timebase: all-to-all IPI
messages per second, device interrupts (edu LSI raise -> H_XIRR -> ack
-> H_EOI) per second, and the cost of one H_EOI with nothing to EOI,
which makes the source controller look for sources to resend (stock
scans all 4096, the fork a bitmap), against H_IPOLL as the baseline.
Prints medians and fork/stock ratios, then for one 2-vCPU run of each
binary the BQL wait per call site from HMP "sync-profile on" /
"info sync-profile".

Usage: xics-bench.py FORK-QEMU STOCK-QEMU [RUNS]
"""

import os
import platform
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xics_guest as xg  # noqa: E402

SMPS = (1, 2, 4)
BOOTARGS = "mode=bench ms=1000 n=20000"
METRICS = [
    # key, label, unit, better when higher
    ("ipi", "IPI messages/s", "/s", True),
    ("dev", "device interrupts/s", "/s", True),
    ("eoi", "H_EOI cost", "ns", False),
    ("ipoll", "H_IPOLL cost (baseline)", "ns", False),
]


def one_run(qemu, smp, profile=False):
    """One boot; retried when the binary cannot start (being rebuilt)."""
    for attempt in range(3):
        try:
            return _one_run(qemu, smp, profile)
        except (OSError, xg.QMPError) as e:
            if attempt == 2:
                raise
            print("  (%s: %s; retrying)" % (qemu, e), flush=True)
            time.sleep(10)


def _one_run(qemu, smp, profile):
    with xg.GuestVM(qemu, smp, BOOTARGS, xg.EDU4, name="bench") as g:
        if profile:
            g.vm.hmp("sync-profile on")
        g.cont()
        passed, text = g.wait_result(300)
        prof = g.vm.hmp("info sync-profile 10") if profile else ""
        g.vm.quit()
    if not passed:
        raise RuntimeError("bench guest failed on %s:\n%s" % (qemu,
                                                              text[-3000:]))
    res = {}
    for r in xg.parse_records(text, "BENCH"):
        if r["name"] in ("ipi", "dev"):
            res[r["name"]] = r["per_sec"]
        elif r["name"] == "eoi":
            res["eoi"] = r["ns_per_call"]
            res["ipoll"] = r["ipoll_ns_per_call"]
    return res, prof


def profile_rows(prof):
    """Rows of "info sync-profile": (type, call site, wait, count, avg)."""
    rows = []
    for line in prof.splitlines():
        m = re.match(r"(BQL mutex|mutex|rec_mutex|condvar)\s+(\S+|\[\s*\d+\])"
                     r"\s+(\S+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)", line)
        if m:
            rows.append((m.group(1), m.group(3), float(m.group(4)),
                         int(m.group(5)), float(m.group(6))))
    return rows


def main():
    fork, stock = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    bins = {"fork": fork, "stock": stock}
    results = {(b, s): [] for b in bins for s in SMPS}
    start = time.time()
    for smp in SMPS:
        for r in range(runs):
            order = ("fork", "stock") if r % 2 == 0 else ("stock", "fork")
            for b in order:
                res, _ = one_run(bins[b], smp)
                results[(b, smp)].append(res)
                print("  smp=%d run %d %-5s %s" % (
                    smp, r + 1, b, " ".join("%s=%d" % kv
                                            for kv in sorted(res.items()))),
                      flush=True)

    print()
    print("XICS guest benchmark: %d runs per cell, medians; %s, %d host "
          "CPUs; %.0f s" % (runs, platform.node(), os.cpu_count(),
                            time.time() - start))
    print("| metric | vCPUs | fork | stock | fork/stock |")
    print("|---|---|---|---|---|")
    for key, label, unit, _ in METRICS:
        for smp in SMPS:
            f = statistics.median(x[key] for x in results[("fork", smp)])
            s = statistics.median(x[key] for x in results[("stock", smp)])
            print("| %s | %d | %d %s | %d %s | %.2f |" % (
                label, smp, f, unit, s, unit, f / s if s else 0))

    print()
    print("BQL wait per call site, one run at 2 vCPUs (HMP info "
          "sync-profile 10):")
    for b in ("fork", "stock"):
        _, prof = one_run(bins[b], 2, profile=True)
        rows = profile_rows(prof)
        bql = [r for r in rows if r[0] == "BQL mutex"]
        print("%s: BQL wait %.4f s in the top 10 call sites; other locks "
              "in the top 10: %.4f s" % (
                  b, sum(r[2] for r in bql),
                  sum(r[2] for r in rows if r[0] != "BQL mutex")))
        print("| call site | BQL wait (s) | calls | average (us) |")
        print("|---|---|---|---|")
        for _, site, wait, count, avg in bql:
            print("| %s | %.4f | %d | %.2f |" % (site, wait, count, avg))
        if not rows:
            print(prof)
    return 0


if __name__ == "__main__":
    sys.exit(main())
