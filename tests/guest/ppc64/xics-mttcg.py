#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""XICS under MTTCG with a guest of our own (tests/guest/ppc64/guest):
boots xics-guest on -M pseries,ic-mode=xics,x-vof=on with
-accel tcg,thread=multi at 1, 2 and 4 vCPUs, four edu devices (their
INTx are four LSIs of the ICS), once with four e1000 instead (their
interrupt mitigation timer raises the line from the main loop) and once
with two of the edu switched to MSI (ibm,change-msi).  The
guest runs an all-to-all IPI storm, a device interrupt load with EOIs,
both mixed, priority order, masking (int-off, set-xive 0xff) and CPPR
rejects/resends, checks that every message and interrupt arrived exactly
once, and prints a verdict.  Then the fork's XICS counters (query-stats,
provider "irq") must agree with what the guest counted: per vCPU
accepted and EOIs equal, IPIs and rejects at least the guest's; LSI
and MSI events equal to the raises; the resend passes visit only marked
sources.  Stalls (an IPI its vCPU did not take for 200 ms) are printed,
not failed.  With a second binary (stock QEMU) the guest also runs there,
verdict only (stock has no counters); named but not there, that case is
skipped with a "SUBTEST-SKIP: stock-smp2: <reason>" line.

Usage: xics-mttcg.py QEMU-SYSTEM-PPC64 [STOCK-QEMU-SYSTEM-PPC64]
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xics_guest as xg  # noqa: E402


# A decrementer every 0.5 s (dec=) bounds how long a lost wake-up of a
# ceded vCPU could hold a run up, should one come back (this harness
# found one: an IPI raised without the BQL racing with the vCPU's wait,
# fixed by the per-vCPU wake-up event); it is still long enough for such
# a stall to be reported (200 ms).
DEC = " dec=0x10000000"
CONFIGS = [
    # label, vCPUs, bootargs, devices
    ("smp1", 1, "mode=test n=500" + DEC, xg.EDU4),
    ("smp2", 2, "mode=test n=400" + DEC, xg.EDU4),
    ("smp4", 4, "mode=test n=250" + DEC, xg.EDU4),
    ("smp2-e1000", 2, "mode=test n=200 phases=dev,mixed,mask" + DEC,
     xg.E1000_4),
    ("smp2-msi", 2, "mode=test n=200 msi=2" + DEC, xg.EDU4),
]


def check_counters(label, vm, text, errors):
    cpus = sorted(xg.parse_records(text, "CPU"), key=lambda c: c["server"])
    devs = xg.parse_records(text, "DEVSTAT")
    per_vcpu, ics = xg.irq_stats(vm)
    if ics is None:
        errors.append("no XICS counters over QMP (provider irq)")
        return
    paths = xg.vcpu_paths(vm)
    if len(paths) != len(cpus):
        errors.append("%d vCPUs over QMP, %d in the guest" % (len(paths),
                                                             len(cpus)))
        return
    for c, path in zip(cpus, paths):
        st = per_vcpu.get(path)
        if st is None:
            errors.append("no counters for %s" % path)
            continue
        who = "vCPU %s (server %d)" % (path, c["server"])
        if st["xics-icp-accepted"] != c["accepted"]:
            errors.append("%s: xics-icp-accepted %d, guest accepted %d" % (
                who, st["xics-icp-accepted"], c["accepted"]))
        if st["xics-icp-eois"] != c["eois"]:
            errors.append("%s: xics-icp-eois %d, guest EOIs %d" % (
                who, st["xics-icp-eois"], c["eois"]))
        if st["xics-icp-ipis"] < c["ipis"]:
            errors.append("%s: xics-icp-ipis %d < IPIs the guest took %d" % (
                who, st["xics-icp-ipis"], c["ipis"]))
        if st["xics-icp-rejects"] < c["rejects"]:
            errors.append("%s: xics-icp-rejects %d < rejects the guest "
                          "forced %d" % (who, st["xics-icp-rejects"],
                                         c["rejects"]))
        if st["xics-icp-presented"] < st["xics-icp-accepted"]:
            errors.append("%s: presented %d < accepted %d" % (
                who, st["xics-icp-presented"], st["xics-icp-accepted"]))
    for kind in ("lsi", "msi"):
        raised = sum(d["raised"] for d in devs if d["type"] == kind)
        if ics["xics-ics-%s-events" % kind] != raised:
            errors.append("xics-ics-%s-events %d, guest raised %d %ss" % (
                kind, ics["xics-ics-%s-events" % kind], raised, kind.upper()))
    resends = sum(c["resends"] for c in cpus)
    if ics["xics-ics-resent"] < resends:
        errors.append("xics-ics-resent %d < resends the guest forced %d" % (
            ics["xics-ics-resent"], resends))
    # Only device LSIs can need a resend, so a pass visits at most those.
    if ics["xics-ics-resend-scanned"] > ics["xics-ics-resend-passes"] * \
            len(devs):
        errors.append("resend passes visited %d sources in %d passes" % (
            ics["xics-ics-resend-scanned"], ics["xics-ics-resend-passes"]))
    return ("accepted %d, EOIs %d, LSI events %d, MSI events %d, rejects %d, "
            "resent %d" % (
        sum(c["accepted"] for c in cpus), sum(c["eois"] for c in cpus),
        ics["xics-ics-lsi-events"], ics["xics-ics-msi-events"],
        sum(s["xics-icp-rejects"] for s in per_vcpu.values()),
        ics["xics-ics-resent"]))


def run(qemu, label, smp, bootargs, devices, counters):
    errors = []
    start = time.time()
    with xg.GuestVM(qemu, smp, bootargs, devices, name=label) as g:
        g.cont()
        passed, text = g.wait_result(180)
        if not passed:
            errors.append("guest verdict is not PASS")
        summary = None
        if passed and counters:
            summary = check_counters(label, g.vm, text, errors)
        g.vm.quit()
    if errors:
        print("%s: FAIL: %s" % (label, "; ".join(errors)))
        print(text[-4000:])
        return False
    tot = xg.parse_records(text, "TOTAL")[0]
    print("%s: PASS in %.1f s: %d CPUs, %d IPI messages, %d of %d device "
          "interrupts%s" % (label, time.time() - start, tot["cpus"],
                            tot["msgs"], tot["delivered"], tot["raised"],
                            "; counters agree: " + summary if summary
                            else ""))
    # Not a failure (no timing assertions), but worth seeing: a message
    # or wake-up IPI that its vCPU did not take for 200 ms.
    stalls = sum(c.get("stalls", 0) for c in xg.parse_records(text, "CPU"))
    if stalls:
        print("  note: %d stalls of 200 ms or more:" % stalls)
        for line in text.splitlines():
            if line.startswith("XICS-GUEST STALL"):
                print("    " + line)
    return True


def main():
    fork = sys.argv[1]
    stock = sys.argv[2] if len(sys.argv) > 2 else None
    ok = True
    for label, smp, bootargs, devices in CONFIGS:
        ok = run(fork, label, smp, bootargs, devices, True) and ok
    if stock and os.path.exists(stock):
        ok = run(stock, "stock-smp2", 2, "mode=test n=200" + DEC, xg.EDU4,
                 False) and ok
    elif stock:
        print("SUBTEST-SKIP: stock-smp2: %s is not there (make stock)"
              % stock)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
