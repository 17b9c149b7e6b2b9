#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Linux-guest XICS benchmark (make bench, make bench-linux): boots
Debian's ppc64le kernel (tests/guest/fetch-ppc64-guest.sh) with an
initramfs whose /init (ipi-bench-init.sh) runs ipi-bench (ipi-bench.c,
built by ipi-bench.mk): futex ping-pong between CPU 0 and CPU 1 (round
trips/s; with cpuidle.off=1 every wake-up is an IPI to a vCPU in
H_CEDE) and membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) from CPU 0
while the other CPUs spin (calls/s; each call IPIs all of them), both
timed by the guest's clock.  On -M pseries,x-vof=on under MTTCG at 1, 2
and 4 vCPUs, three configurations alternating: the fork with
ic-mode=xics, stock QEMU with ic-mode=xics and stock with ic-mode=xive.
Prints medians, fork/stock ratios and the guest's IPIs per operation as
markdown tables.  A boot that does not print its BENCH lines within the
timeout is killed, reported and retried once.

Usage: xics-linux-bench.py FORK-QEMU STOCK-QEMU [RUNS]
           [--seconds S] [--smp 1,2,4] [--timeout T] [--guest-dir DIR]
(RUNS defaults to 5, or $BENCH_RUNS; S to 5, or $BENCH_LINUX_SECONDS)
"""

import argparse
import os
import platform
import re
import select
import statistics
import subprocess
import sys
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                   "..", "..", ".."))
OUT = os.path.join(TOP, "build", "guest-ppc64-linux")
WORKLOADS = [
    # name printed by the guest, label, unit
    ("futex-pingpong", "futex ping-pong", "round trips/s"),
    ("membarrier", "membarrier (private expedited)", "calls/s"),
]
CONFIGS = [
    # key, binary argument, ic-mode
    ("fork", "fork", "xics"),
    ("stock", "stock", "xics"),
    ("stock-xive", "stock", "xive"),
]


def prepare(guest_dir):
    """Build ipi-bench and its initramfs; return (vmlinux, initrd)."""
    subprocess.run(["make", "-s", "-C", TOP, "-f",
                    "tests/guest/ppc64-linux/ipi-bench.mk", "ipi-bench"],
                   check=True)
    if guest_dir is None:
        res = subprocess.run(["sh", os.path.join(
            TOP, "tests/guest/fetch-ppc64-guest.sh")],
            check=True, stdout=subprocess.PIPE, text=True)
        guest_dir = res.stdout.strip().splitlines()[-1]
    initrd = os.path.join(OUT, "ipi-bench-initrd.gz")
    subprocess.run(["/usr/bin/python3",
                    os.path.join(TOP, "tests/guest/mkinitramfs.py"), initrd,
                    os.path.join(guest_dir, "root", "bin", "busybox"),
                    os.path.join(TOP, "tests/guest/ppc64-linux/"
                                 "ipi-bench-init.sh"),
                    "bin/ipi-bench=" + os.path.join(OUT, "ipi-bench")],
                   check=True)
    return os.path.join(guest_dir, "vmlinux"), initrd


def parse(text):
    """{workload: {"rate": float, "ops": int, "ipis": int, ...}}."""
    res = {}
    for m in re.finditer(r"^BENCH (\S+) ([0-9.]+)(.*)$", text, re.M):
        r = {"rate": float(m.group(2))}
        for kv in m.group(3).split():
            k, _, v = kv.partition("=")
            try:
                r[k] = float(v)
            except ValueError:
                pass
        res[m.group(1)] = r
    return res


def boot(qemu, ic_mode, smp, kernel, initrd, secs, timeout):
    """One boot: (results, None) or (None, reason and console tail)."""
    cmd = [qemu, "-M", "pseries,ic-mode=%s,x-vof=on" % ic_mode,
           "-accel", "tcg,thread=multi", "-vga", "none", "-nographic",
           "-no-reboot", "-m", "1G", "-smp", str(smp),
           "-kernel", kernel, "-initrd", initrd,
           "-append", "console=hvc0 cpuidle.off=1 quiet ipibench.seconds=%g"
           % secs]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    buf = b""
    deadline = time.time() + timeout
    reason = None
    try:
        while b"=== IPI-BENCH END" not in buf:
            left = deadline - time.time()
            if left <= 0:
                reason = "no BENCH lines within %d s" % timeout
                break
            ready, _, _ = select.select([proc.stdout], [], [], min(left, 1))
            if not ready:
                continue
            data = os.read(proc.stdout.fileno(), 65536)
            if not data:
                reason = "QEMU exited (status %s) before the end" % (
                    proc.wait())
                break
            buf += data
        if reason is None:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                pass       # results are in; the power-off does not matter
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    text = buf.decode(errors="replace").replace("\r", "")
    res = parse(text)
    if reason is None:
        missing = [w for w, _, _ in WORKLOADS if w not in res]
        bad = [w for w, r in res.items() if r.get("cpus", smp) != smp]
        if missing:
            reason = "no BENCH line for %s" % ", ".join(missing)
        elif bad:
            reason = "the guest saw %d CPUs, not %d" % (
                res[bad[0]]["cpus"], smp)
    if reason:
        tail = "\n".join(text.splitlines()[-15:])
        return None, "%s; console tail:\n%s" % (reason, tail)
    return res, None


def one_run(label, qemu, ic_mode, smp, kernel, initrd, secs, timeout):
    """A boot, retried once; None when both attempts fail."""
    for attempt in (1, 2):
        res, why = boot(qemu, ic_mode, smp, kernel, initrd, secs, timeout)
        if res is not None:
            return res
        print("  %s smp=%d attempt %d FAILED: %s" % (label, smp, attempt,
                                                     why), flush=True)
    return None


def median(values):
    return statistics.median(values) if values else None


def fmt(v, spec="%.0f"):
    return "n/a" if v is None else spec % v


def ratio(a, b):
    return "n/a" if a is None or not b else "%.2f" % (a / b)


def main():
    ap = argparse.ArgumentParser(
        description="Linux-guest XICS benchmark: fork against stock QEMU")
    ap.add_argument("fork")
    ap.add_argument("stock")
    ap.add_argument("runs", nargs="?", type=int,
                    default=int(os.environ.get("BENCH_RUNS", 5)))
    ap.add_argument("--seconds", type=float,
                    default=float(os.environ.get("BENCH_LINUX_SECONDS", 5)),
                    help="length of each workload phase, guest seconds")
    ap.add_argument("--smp", default=os.environ.get("BENCH_LINUX_SMP",
                                                    "1,2,4"),
                    help="comma-separated vCPU counts")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds per boot before it is killed "
                    "(default 150 + 4 x phase length)")
    ap.add_argument("--guest-dir", default=None,
                    help="folder with vmlinux and root/bin/busybox "
                    "(default: tests/guest/fetch-ppc64-guest.sh)")
    args = ap.parse_args()
    smps = [int(x) for x in args.smp.split(",") if x]
    timeout = args.timeout or 150 + 4 * args.seconds
    bins = {"fork": args.fork, "stock": args.stock}
    for b in bins.values():
        if not os.access(b, os.X_OK):
            print("xics-linux-bench: %s is missing (make build / make "
                  "stock)" % b, file=sys.stderr)
            return 1
    kernel, initrd = prepare(args.guest_dir)

    results = {(c, s): [] for c, _, _ in CONFIGS for s in smps}
    failed = {(c, s): 0 for c, _, _ in CONFIGS for s in smps}
    start = time.time()
    for smp in smps:
        for r in range(args.runs):
            for key, b, ic_mode in CONFIGS:
                res = one_run(key, bins[b], ic_mode, smp, kernel, initrd,
                              args.seconds, timeout)
                if res is None:
                    failed[(key, smp)] += 1
                    continue
                results[(key, smp)].append(res)
                print("  smp=%d run %d %-10s %s" % (
                    smp, r + 1, key, " ".join(
                        "%s=%.0f (%.2f IPIs/op)" % (
                            w, res[w]["rate"],
                            res[w].get("ipis", 0) / max(res[w]["ops"], 1))
                        for w, _, _ in WORKLOADS)), flush=True)

    def med(key, smp, w, what="rate"):
        vals = [x[w][what] if what == "rate" else
                x[w].get("ipis", 0) / max(x[w]["ops"], 1)
                for x in results[(key, smp)]]
        return median(vals)

    print()
    print("Linux guest XICS benchmark: %d runs per cell, medians; %g s per "
          "phase; %s, %d host CPUs; %.0f s" % (
              args.runs, args.seconds, platform.node(), os.cpu_count(),
              time.time() - start))
    print("| workload | vCPUs | fork (xics) | stock (xics) | stock (xive) "
          "| fork/stock-xics | fork/stock-xive |")
    print("|---|---|---|---|---|---|---|")
    for w, label, unit in WORKLOADS:
        for smp in smps:
            f, s, x = (med(c, smp, w) for c, _, _ in CONFIGS)
            print("| %s (%s) | %d | %s | %s | %s | %s | %s |" % (
                label, unit, smp, fmt(f), fmt(s), fmt(x), ratio(f, s),
                ratio(f, x)))
    print()
    print("Guest IPIs per operation (its /proc/interrupts IPI rows, all "
          "CPUs), medians:")
    print("| workload | vCPUs | fork (xics) | stock (xics) | stock (xive) |")
    print("|---|---|---|---|---|")
    for w, label, _ in WORKLOADS:
        for smp in smps:
            print("| %s | %d | %s |" % (label, smp, " | ".join(
                fmt(med(c, smp, w, "ipis"), "%.2f") for c, _, _ in CONFIGS)))
    bad = {k: v for k, v in failed.items() if v}
    if bad:
        print()
        print("Runs that failed twice (not in the medians): %s" % ", ".join(
            "%s smp=%d: %d" % (k[0], k[1], v) for k, v in sorted(bad.items())))
    empty = [k for k, v in results.items() if not v]
    return 1 if empty else 0


if __name__ == "__main__":
    sys.exit(main())
