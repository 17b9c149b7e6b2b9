#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Benchmark of posted device interrupts on the emulated AVIC host
(make bench-posted): the nested test bed's posted-interrupt pipeline
(posted.py) with L1 Linux 6.12 (before KVM's 2025 device-posted-IRQ
overhaul) and 7.3 (after), at several L2 vCPU counts, the same load
(one O_DIRECT reader per L2 vCPU, READS 4 KiB reads each), in each of
the REGIMES (posted.REGIMES): "blocking", the readers alone, so a vCPU
that is not running is nearly always one that blocked; "preempted", a
CPU-bound loop pinned beside each reader, so vCPUs stay runnable and
L1's scheduler preempts them while their interrupts arrive (there,
interrupts that reach a preempted vCPU merge in its IRR, and L2 counts
fewer interrupts than reads: reported as "merged").  Per cell,
medians of RUNS runs (kernels alternating): GA-log entries and
interrupts, doorbells and posted interrupts from L0's query-stats, L1
KVM's GA-log wake-ups (kvm_avic_ga_log) and exits, and the reads per
second L2 saw.  The wake-ups during the reads are split by what the
vCPU thread was doing when its interrupt was logged, from L1's
sched_switch (posted.ga_log_split()): blocking (halted in KVM),
preempted (scheduled out while runnable), other (running: a race with
the log, or never seen switching).  L0 and L1 have 2 vCPUs: L2s above 2 vCPUs are
oversubscribed.  Prints a Markdown table.  With BENCH_POSTED_HIST=1 in
the environment, each run also prints L1's histograms over the reads
(posted.run_pipeline(hist=True)): the MSR accesses its KVM handled, by
MSR, and its interrupts by vector and IRQ.  BENCH_POSTED_L2_APPEND adds
to L2's kernel command line (TESTBED_L1_APPEND to L1's), e.g.
preempt=full to both.  BENCH_POSTED_SCHED_FEATURES: scheduler features
L1 and L2 set before the reads (e.g. "NO_HRTICK NO_HRTICK_DL").
BENCH_POSTED_L2_KERNEL (e.g. 6.12): every L2 boots that kernel, with
its nvme modules, whatever L1 runs, so that the rows differ only in
L1's KVM (by default L2 runs L1's kernel).

Usage: kvm-nested-posted-bench.py QEMU "KERNEL..." "VCPUS..." RUNS READS
       ["REGIME..."]
       (QEMU serves as L0 and L1; kernels as fetch-kvm-host.sh takes;
       regimes: blocking preempted, both by default)
"""

import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testbed import TestbedError  # noqa: E402
import posted  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FETCH = os.path.join(os.path.dirname(HERE), "fetch-kvm-host.sh")


def one(qemu, hostdir, vcpus, reads, regime, l2_hostdir=None):
    hist = os.environ.get("BENCH_POSTED_HIST") == "1"
    run = posted.run_pipeline(qemu, hostdir, vcpus, reads, regime=regime,
                              l2_hostdir=l2_hostdir,
                              sched_trace=True, hist=hist,
                              l2_append=os.environ.get(
                                  "BENCH_POSTED_L2_APPEND", ""),
                              sched_features=os.environ.get(
                                  "BENCH_POSTED_SCHED_FEATURES", "").split())
    last, l2 = run["l0_last"] or {}, run["l2"]
    if hist:
        print("  L2 jiffies/s: %s" % l2["hz"])
        for line in l2["out"].splitlines():
            if line.startswith(("L2 HRTIMER", "L2 SCHED", "L2 DMESG")):
                print("  " + line)
        for line in run["res"]["l2"]["hist"].splitlines():
            if line.startswith(("sched_features", "dmesg")):
                print("  L1 " + line)
        # where L1's exits and interrupts go during the reads
        for event, counts in sorted((run["hists"] or {}).items()):
            top = sorted(counts.items(), key=lambda kv: -kv[1])[:8]
            print("  L1 %s: %s" % (event, ", ".join(
                "%s = %d" % kv for kv in top) or "none"))
    total = vcpus * reads
    if not l2["finished"] or not l2["seconds"]:
        print("  L2 rc %s did not finish: %s" % (run["res"]["l2"]["rc"],
                                                 l2["out"][-600:]))
        return None
    irqs = l2["after"] - l2["before"]
    split = run["ga_log_split"] or {}
    if irqs < total and regime == "blocking":
        print("  L2 counted %d interrupts for %d reads" % (irqs, total))
        return None
    return {
        # completions whose interrupt merged with another's
        "merged": max(0, total - irqs),
        "ga-log entries": last.get("amdvi-ga-log-entries", 0),
        "ga-log interrupts": last.get("amdvi-ga-log-interrupts", 0),
        "doorbells": last.get("amdvi-doorbells", 0),
        "posted": last.get("amdvi-posted-interrupts", 0),
        # IsRun=0 without GALogIntr: KVM asked for no wake-up
        "posted only": last.get("amdvi-posted-interrupts", 0) -
        last.get("amdvi-doorbells", 0) - last.get("amdvi-ga-log-entries", 0),
        "L1 wake-ups": run["trace"].get("kvm_avic_ga_log", 0),
        # of those during the reads, for a vCPU that halted / was
        # scheduled out while runnable / other (L1's sched_switch)
        "wake-ups blocking": split.get("blocking", 0),
        "wake-ups preempted": split.get("preempted", 0),
        "wake-ups other": split.get("running", 0) + split.get("unknown", 0),
        "L1 exits per read": (l2["l1_exits"] / total
                              if l2["l1_exits"] is not None
                              else float("nan")),
        "reads/s": total / l2["seconds"]}


def main():
    qemu, kernels, vcpu_list, runs, reads = sys.argv[1:6]
    regimes = (sys.argv[6] if len(sys.argv) > 6
               else " ".join(posted.REGIMES)).split()
    for g in regimes:
        if g not in posted.REGIMES:
            print("regime %r: want one of %s" % (g, " ".join(posted.REGIMES)))
            return 2
    kernels, runs, reads = kernels.split(), int(runs), int(reads)
    vcpu_list = [int(v) for v in vcpu_list.split()]
    # BENCH_POSTED_L2_KERNEL: one kernel for every L2 (else L1's own),
    # so that only L1's KVM differs between the rows
    l2_kernel = os.environ.get("BENCH_POSTED_L2_KERNEL", "")
    hosts = {k: subprocess.run(["sh", FETCH, k], check=True,
                               capture_output=True, text=True
                               ).stdout.strip()
             for k in set(kernels) | ({l2_kernel} if l2_kernel else set())}
    samples, failed = {}, {}
    for r in range(runs):
        for g in regimes:
            for v in vcpu_list:
                order = kernels if r % 2 == 0 else kernels[::-1]
                for k in order:
                    try:
                        x = one(qemu, hosts[k], v, reads, g,
                                hosts[l2_kernel] if l2_kernel else None)
                    except TestbedError as e:
                        x = None
                        print("  %s" % e)
                    print("run %d %s, L1 %s, %d vCPUs: %s" % (r, g, k, v, x),
                          flush=True)
                    if x:
                        samples.setdefault((g, k, v), []).append(x)
                    else:
                        failed[(g, k, v)] = failed.get((g, k, v), 0) + 1
    keys = ("ga-log interrupts", "ga-log entries", "L1 wake-ups",
            "wake-ups blocking", "wake-ups preempted", "wake-ups other",
            "doorbells", "posted only", "posted", "merged",
            "L1 exits per read", "reads/s")
    print()
    print("| regime | L2 vCPUs | L1 | " + " | ".join(keys) +
          " | runs | not finished |")
    print("|---|---|---|" + "---|" * len(keys) + "---|---|")
    for g in regimes:
        for v in vcpu_list:
            for k in kernels:
                xs = samples.get((g, k, v), [])
                cells = ["%.0f" % statistics.median(x[c] for x in xs)
                         if xs else "-" for c in keys]
                cells[keys.index("L1 exits per read")] = (
                    "%.2f" % statistics.median(x["L1 exits per read"]
                                               for x in xs) if xs else "-")
                print("| %s | %d | %s | %s | %d | %d |"
                      % (g, v, k, " | ".join(cells), len(xs),
                         failed.get((g, k, v), 0)))
    print("\nmedians; %d reads of 4 KiB per L2 vCPU, one O_DIRECT reader "
          "each, pinned" % reads)
    return 0 if all(samples.get((g, k, v)) for g in regimes
                    for k in kernels for v in vcpu_list) else 1


if __name__ == "__main__":
    sys.exit(main())
