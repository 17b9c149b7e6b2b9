#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A vCPU stopped with RTAS stop-self stays stopped while IPIs are fired
at it, under MTTCG with the fork's BQL-free XICS hypercalls: boots
xics-guest (tests/guest/ppc64/guest, mode=stopself) on
-M pseries,ic-mode=xics,x-vof=on at 2 and 4 vCPUs.  In every iteration
the boot CPU starts CPU 1 with start-cpu, CPU 1 takes a few IPIs (with
MSR[EE] set or masked, polling), masks and calls stop-self while the
other vCPUs fire H_IPI at its server; stop-self must never return (a
raise judged against CPU 1's old MSR/LPCR, left as a hard interrupt
request after it halted, would wake it), start-cpu must never find it
running and query-cpu-stopped-state must report it stopped.  Checks the
guest's verdict and counts (every iteration done, no return, IPIs taken
by CPU 1 in every iteration) and, where the irq stats provider exists
(the fork), that QEMU's per-vCPU accepted and EOI counters equal what
the guest counted.  With a second binary (stock QEMU) the guest runs
there too, verdict and counts only; named but not there, those cases
are skipped with one "SUBTEST-SKIP: stock-<config>: <reason>" line
each.

Usage: xics-stop-self.py QEMU-SYSTEM-PPC64 [STOCK-QEMU-SYSTEM-PPC64]
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xics_guest as xg  # noqa: E402

CONFIGS = [
    # label, vCPUs, iterations
    ("smp2", 2, 2000),
    ("smp4", 4, 2000),
]


def check_counters(vm, cpus, errors):
    per_vcpu, ics = xg.irq_stats(vm)
    if ics is None:
        return "no irq stats provider"
    paths = xg.vcpu_paths(vm)
    if len(paths) != len(cpus):
        errors.append("%d vCPUs over QMP, %d in the guest" % (len(paths),
                                                             len(cpus)))
        return None
    for c, path in zip(cpus, paths):
        st = per_vcpu.get(path)
        if st is None:
            errors.append("no counters for %s" % path)
            continue
        for name, mine in (("xics-icp-accepted", c["accepted"]),
                           ("xics-icp-eois", c["eois"])):
            if st[name] != mine:
                errors.append("CPU %d: %s %d, the guest counted %d" % (
                    c["idx"], name, st[name], mine))
        if st["xics-icp-ipis"] < c["ipis"]:
            errors.append("CPU %d: xics-icp-ipis %d < IPIs taken %d" % (
                c["idx"], st["xics-icp-ipis"], c["ipis"]))
    victim = per_vcpu.get(paths[1], {})
    return "CPU 1: %d IPIs presented, %d accepted" % (
        victim.get("xics-icp-ipis", 0), victim.get("xics-icp-accepted", 0))


def run(qemu, label, smp, n):
    errors = []
    start = time.time()
    with xg.GuestVM(qemu, smp, "mode=stopself n=%d" % n, devices=[],
                    name=label) as g:
        g.cont()
        passed, text = g.wait_result(240)
        if not passed:
            errors.append("guest verdict is not PASS")
        recs = xg.parse_records(text, "STOPSELF")
        cpus = sorted(xg.parse_records(text, "CPU"), key=lambda c: c["idx"])
        summary = None
        if not recs or len(cpus) != smp:
            errors.append("no STOPSELF / CPU records")
        else:
            r = recs[0]
            if r["iterations"] != n:
                errors.append("%d of %d iterations" % (r["iterations"], n))
            if r["returned"]:
                errors.append("stop-self returned %d times" % r["returned"])
            if r["start_errors"]:
                errors.append("start-cpu found CPU 1 running %d times" %
                              r["start_errors"])
            # One to three IPIs per iteration, all taken before stop-self.
            if r["ipis_ee"] + r["ipis_polled"] < n:
                errors.append("CPU 1 took %d IPIs in %d iterations" % (
                    r["ipis_ee"] + r["ipis_polled"], n))
            if r["ipis_ee"] == 0 or r["ipis_polled"] == 0:
                errors.append("CPU 1 took IPIs only one way: %d with "
                              "MSR[EE], %d polled" % (r["ipis_ee"],
                                                      r["ipis_polled"]))
            if passed:
                summary = check_counters(g.vm, cpus, errors)
        g.vm.quit()
    if errors:
        print("%s: FAIL: %s" % (label, "; ".join(errors)))
        print(text[-4000:])
        return False
    r = recs[0]
    print("%s: PASS in %.1f s: %d iterations, stop-self never returned; "
          "%d H_IPI fired, CPU 1 took %d with MSR[EE] and %d masked; "
          "guest time %d ms%s" % (label, time.time() - start,
                                  r["iterations"], r["ipis_sent"],
                                  r["ipis_ee"], r["ipis_polled"], r["ms"],
                                  "; " + summary if summary else ""))
    return True


def main():
    fork = sys.argv[1]
    stock = sys.argv[2] if len(sys.argv) > 2 else None
    ok = True
    for label, smp, n in CONFIGS:
        ok = run(fork, label, smp, n) and ok
    if stock and os.path.exists(stock):
        for label, smp, n in CONFIGS:
            ok = run(stock, "stock-" + label, smp, n) and ok
    elif stock:
        for label, smp, n in CONFIGS:
            print("SUBTEST-SKIP: stock-%s: %s is not there (make stock)"
                  % (label, stock))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
