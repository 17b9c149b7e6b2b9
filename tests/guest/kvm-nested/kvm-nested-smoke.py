#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Smoke test of the nested KVM test bed: in a Debian kernel acting as
KVM host (L1) under TCG, start QEMU on KVM with q35 + split irqchip,
with pc, and with -cpu host, ask x-query-kvm-apicv, then boot an L2
Linux guest.  Checks that no run died by a signal, that every query
answered "kvm": true and that L2 came up; prints per run the exit
status, the query's mode/inhibits and the kvm_apicv_inhibit_changed
trace lines of L1.

Usage: kvm-nested-smoke.py QEMU HOSTDIR
       (QEMU serves as L0 and L1; HOSTDIR from fetch-kvm-host.sh)
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testbed import TestbedError, run_testbed, verdict  # noqa: E402

QUERY = {"execute": "x-query-kvm-apicv"}
CASES = [
    {"name": "q35-split",
     "args": ["-accel", "kvm", "-M", "q35,kernel-irqchip=split", "-S"]},
    {"name": "pc", "args": ["-accel", "kvm", "-M", "pc", "-S"]},
    {"name": "q35-split-host",
     "args": ["-accel", "kvm", "-M", "q35,kernel-irqchip=split",
              "-cpu", "host", "-S"]},
]
for c in CASES:
    c["qmp"] = [QUERY]


def summary(reply):
    """mode, host-mode, predicted and observed inhibits of a reply."""
    if "return" not in reply:
        return "%s: %s" % (QUERY["execute"], reply.get("error", "no reply"))
    ret = reply["return"]
    obs = ret.get("observed", {})
    if obs.get("available"):
        observed = "%d changes, now %s" % (obs.get("inhibit-events", 0),
                                           obs.get("inhibits", []))
    else:
        observed = "unavailable (%s)" % obs.get("detail")
    return "kvm %s, mode %s, host-mode %s, inhibits %s, observed %s" % (
        ret.get("kvm"), ret.get("mode"), ret.get("host-mode"),
        [i["reason"] for i in ret.get("inhibits", [])], observed)


def inhibit_lines(trace):
    return [l.strip() for l in trace if "kvm_apicv_inhibit_changed" in l]


def main():
    qemu, hostdir = sys.argv[1:3]
    start = time.time()
    try:
        res = run_testbed(qemu, qemu, hostdir, CASES)
    except TestbedError as e:
        print("FAIL: %s\n%s" % (e, e.console[-3000:]))
        return 1
    l1 = res["l1"]
    print("L1 %s, kvm_amd: %s" % (l1["uname"], " ".join(
        "%s=%s" % kv for kv in sorted(l1["params"].items()))))
    print("L1 AMD IOMMU features: %s" % l1["iommu_features"])
    errors = []
    for name, run in res["cases"].items():
        reply = run["qmp"][0] or {}
        print("%s: rc %s, %s" % (name, run["rc"], summary(reply)))
        for line in inhibit_lines(run["trace"]):
            print("    " + line)
        if run["rc"] is None or run["rc"] >= 128:
            errors.append("%s: rc %s, stderr: %s" % (
                name, run["rc"], run["stderr"].strip()[-500:]))
        elif reply.get("return", {}).get("kvm") is not True:
            errors.append("%s: %s did not answer kvm: true"
                          % (name, QUERY["execute"]))
    l2 = res["l2"]
    print("L2: rc %s, booted: %s, %d trace lines" % (
        l2["rc"], l2["booted"], len(l2["trace"])))
    for line in inhibit_lines(l2["trace"])[:10]:
        print("    " + line)
    if not l2["booted"]:
        errors.append("L2 did not boot: rc %s, stderr: %s, console tail: %s"
                      % (l2["rc"], l2["stderr"].strip()[-500:],
                         l2["console"][-1000:]))
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
