#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""How often the nested test bed (testbed.py) fails, by layer and
cause, with stock QEMU and with the fork as L0: the same L1 (a Debian
kernel as KVM host, the fork's binary as its QEMU) and the same L2
boots, nothing repeated.  Runs the L0 configurations in turn, run by
run, so a busy moment of the host falls on all of them alike, and ends
with one table row per configuration (docs/benchmarks.md, "Nested test
bed failure rates").

L0 configurations:
  stock       stock QEMU 10.0.13 (make stock), EPYC-Rome,
              amd-iommu,intremap=on
  fork        the fork, the same command line
  fork-avic   the fork with AVIC and x2AVIC (avic.py's CPU), the
              AMD IOMMU in GA mode (posted.py's), kvm_amd avic=1
L2 workloads:
  smoke       an L2 boot, q35 with a split irqchip, 2 vCPUs
  smp8        an L2 boot, q35 with a split irqchip, 8 vCPUs

Usage: reset-rate.py FORK STOCK HOSTDIR RUNS [L0S] [WORKLOADS]
       (L0S, WORKLOADS: comma-separated, default all; SIGINT or SIGTERM
       ends it early with the table of the runs done)
"""

import collections
import io
import os
import signal
import sys
import time
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testbed import TestbedError, l2_stopped, run_testbed  # noqa: E402
import avic  # noqa: E402
import posted  # noqa: E402

# A run that succeeds takes 15-45 s here: limits of several times that
# keep a hang from costing the measurement ten minutes.
# L2 boots without "quiet" and without KASLR, so a hang shows how far
# L2 got and the RIPs of its registers (l1-init.sh's hang_dump) are
# the kernel's own addresses.
L2_APPEND = ["-append", "console=ttyS0 panic=-1 no_timer_check nokaslr"]
WORKLOADS = {
    "smoke": {"args": ["-M", "q35,kernel-irqchip=split", "-smp", "2"] +
              L2_APPEND, "run_timeout": 90},
    "smp8": {"args": ["-M", "q35,kernel-irqchip=split", "-smp", "8"] +
             L2_APPEND, "run_timeout": 120},
}
STOCK_IOMMU = "amd-iommu,intremap=on"


def l0_config(name, fork, stock):
    """(L0 binary, run_testbed keyword arguments) of a configuration."""
    # stock's platform for both: no x-southbridge (stock has none), so
    # the same L1 (Linux 7.3 then runs without interrupt remapping)
    if name == "stock":
        return stock, {"l0_iommu": STOCK_IOMMU}
    if name == "fork":
        return fork, {"l0_iommu": STOCK_IOMMU}
    if name == "fork-avic":
        return fork, {"l0_extra_args": avic.L0_ARGS,
                      "l0_iommu": posted.L0_IOMMU,
                      "kvm_amd_params": "avic=1"}
    raise ValueError("unknown L0 configuration %r" % name)


def one_run(l0, fork, hostdir, workload, kwargs):
    """One test bed run; the outcome as (layer, cause), ("ok", "")
    when L2 booted."""
    w = WORKLOADS[workload]
    out = io.StringIO()
    try:
        with redirect_stdout(out):
            res = run_testbed(l0, fork, hostdir, [],
                              l2={"args": w["args"]},
                              run_timeout=w["run_timeout"],
                              timeout=w["run_timeout"] + 60,
                              **kwargs)
    except TestbedError as e:
        layer, _, cause = str(e).partition(": ")
        return layer, cause, out.getvalue()
    why = l2_stopped(res["l2"])
    if not why and not res["l2"]["booted"]:
        why = "rc %s without the marker" % res["l2"]["rc"]
    if why:
        # what L2 and L1 printed, for the failure's log
        text = out.getvalue() + "--- L2's output ---\n" + \
            "\n".join((res["l2"].get("stdout") or "").splitlines()[-60:]) + \
            "\n--- L1's console, last 60 lines ---\n" + \
            "\n".join((res.get("console") or "").splitlines()[-60:]) + \
            "\n--- L2's QEMU monitor before the kill ---\n" + \
            (res["l2"].get("hang") or "(not taken)") + "\n"
        return "L2", why.split(" (")[0], text
    return "ok", "", out.getvalue()


def short(cause):
    """The kind of a cause, for counting."""
    for key in ("timed out", "reset itself", "panicked", "kernel failed",
                "KVM internal error", "entry failed", "emulation failure",
                "stopped mid-boot", "hung", "exited with"):
        if key in cause:
            return key
    return cause[:60]


def main():
    fork, stock, hostdir, runs = sys.argv[1:5]
    l0s = (sys.argv[5] if len(sys.argv) > 5 else
           "stock,fork,fork-avic").split(",")
    workloads = (sys.argv[6] if len(sys.argv) > 6 else
                 "smoke,smp8").split(",")
    os.environ["TESTBED_REPEATS"] = "0"
    tally = collections.OrderedDict()
    logdir = os.environ.get("RESET_RATE_LOGS")
    try:
        rounds(int(runs), l0s, workloads, fork, stock, hostdir, tally,
               logdir)
    except KeyboardInterrupt:
        # stopped by hand (Ctrl-C, or SIGTERM below): the table of the
        # runs that ended
        print("stopped by a signal; the run then going is not counted")
    print()
    print("| L0 | L2 | runs | L2 booted | failures |")
    print("|---|---|---|---|---|")
    for (name, workload), t in tally.items():
        fails = ", ".join("%s %d" % (k, v) for k, v in sorted(t.items())
                          if k not in ("runs", "ok"))
        print("| %s | %s | %d | %d | %s |" % (name, workload, t["runs"],
                                              t["ok"], fails or "none"))
    return 0


def rounds(runs, l0s, workloads, fork, stock, hostdir, tally, logdir):
    """RUNS rounds of every (workload, L0) pair, L0s in turn (reversed
    every other round), into tally; failures' logs into logdir."""
    for r in range(runs):
        for workload in workloads:
            for name in (l0s if r % 2 == 0 else l0s[::-1]):
                l0, kwargs = l0_config(name, fork, stock)
                start = time.time()
                layer, cause, out = one_run(l0, fork, hostdir, workload,
                                            kwargs)
                key = (name, workload)
                t = tally.setdefault(key, collections.Counter())
                t["runs"] += 1
                t[layer if layer == "ok" else
                  "%s: %s" % (layer, short(cause))] += 1
                print("run %d %s %s: %s%s (%.0f s)" % (
                    r, name, workload, layer,
                    (" " + cause[:300]) if cause else "",
                    time.time() - start), flush=True)
                if layer != "ok" and logdir:
                    os.makedirs(logdir, exist_ok=True)
                    with open(os.path.join(logdir, "%s-%s-%d.log" % (
                            name, workload, r)), "w") as f:
                        f.write(out)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    sys.exit(main())
