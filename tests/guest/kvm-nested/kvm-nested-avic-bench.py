#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Benchmark of the emulated AVIC (make bench-avic): the nested test
bed's L1 (a Debian kernel, KVM host under the fork's TCG, L0 offering
avic and x2avic) boots a 2-vCPU x2APIC L2 Linux that runs ipi-bench's
membarrier (IPIs to running vCPUs) and futex ping-pong (wake-ups of
idle vCPUs), with kvm_amd avic=1 and avic=0 alternating, RUNS times
each.  Per workload: the L2's rate, its IPIs per second, and L1 KVM's
exits per IPI (KVM's exit count from debugfs, stamped on the L2's
output lines by L1, from the workload's start to its result); medians,
and avic=1 against avic=0 as ratios.  Prints a Markdown table.

Usage: kvm-nested-avic-bench.py QEMU HOSTDIR RUNS SECONDS
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testbed import TestbedError, run_testbed  # noqa: E402
import avic  # noqa: E402


def one_run(qemu, hostdir, tmp, seconds, avic_param):
    res = run_testbed(qemu, qemu, hostdir, [],
                      l2=avic.l2_spec(tmp, seconds),
                      kvm_amd_params="avic=%d" % avic_param,
                      l0_extra_args=avic.L0_ARGS, timeout=900)
    return avic.parse_load(res["l2"].get("stdout", ""))


def main():
    qemu, hostdir, runs, seconds = sys.argv[1:5]
    runs = int(runs)
    samples = {(a, w): [] for a in (1, 0) for w in avic.WORKLOADS}
    with avic.tmpdir() as tmp:
        for r in range(runs):
            for a in ((1, 0) if r % 2 == 0 else (0, 1)):
                try:
                    load = one_run(qemu, hostdir, tmp, seconds, a)
                except TestbedError as e:
                    print("run %d avic=%d: %s" % (r, a, e))
                    continue
                for w in avic.WORKLOADS:
                    if w in load:
                        x = load[w]
                        samples[(a, w)].append(x)
                        print("run %d avic=%d %s: %.0f ops/s, %.0f IPIs/s, "
                              "%d exits for %d IPIs" % (
                                  r, a, w, x["ops_per_s"],
                                  x["ipis"] / x["seconds"], x["exits"],
                                  x["ipis"]), flush=True)
                    else:
                        print("run %d avic=%d %s: no result" % (r, a, w))

    def med(a, w, key):
        vals = [key(x) for x in samples[(a, w)] if x["ipis"] > 0]
        return statistics.median(vals) if vals else float("nan")

    print()
    print("| workload (2-vCPU L2) | avic=1 | avic=0 | ratio |")
    print("|---|---|---|---|")
    for w in avic.WORKLOADS:
        rows = [("%s, ops/s" % w, lambda x: x["ops_per_s"]),
                ("%s, IPIs/s" % w, lambda x: x["ipis"] / x["seconds"]),
                ("%s, L1 exits per IPI" % w,
                 lambda x: x["exits"] / x["ipis"])]
        for label, key in rows:
            on, off = med(1, w, key), med(0, w, key)
            print("| %s | %.2f | %.2f | %.2f |" % (label, on, off,
                                                   on / off if off else 0))
    print("\nmedians of %d runs each (%s), %s s per workload" % (
        runs, ", ".join("avic=%d %s: %d" % (a, w, len(samples[(a, w)]))
                        for a in (1, 0) for w in avic.WORKLOADS), seconds))
    return 0 if all(samples.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
