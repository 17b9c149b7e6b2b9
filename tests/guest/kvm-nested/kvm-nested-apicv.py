#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The fork's APIC virtualization negotiation on a real KVM: a Debian
kernel as L1 host under the fork's TCG (testbed.py), kvm_amd loaded with
avic=1 force_avic=1, so that L1's KVM runs its AVIC code and tracks
inhibits (L0's CPU here offers neither avic nor x2avic, hence
force_avic: L1 believes it has AVIC without x2AVIC; every case below
runs with the guest paused, so nothing relies on the missing feature;
L2 boots are kvm-nested-smoke.py's, on L1's real configuration, and
kvm-nested-avic.py's, on the fork's emulated AVIC and x2AVIC).

For each configuration the fork's binary in L1 is started the way users
start it and checked:
- it starts, or is refused with exit 1 and the documented error (never
  a signal);
- x-query-kvm-apicv's certain inhibits equal what L1's KVM reports
  (the fork's own tracepoint reader, "observed"), mapped to KVM's
  names, and the reader agrees with tracefs (the mask of the
  kvm_apicv_inhibit_changed line it last saw);
- the rules keyed by kernel release hold on this kernel: nested SVM
  (-cpu host) and an x2APIC guest inhibit nothing (Linux 5.19+, 6.0+);
  a vCPU with APIC ID 255 is refused at creation before 6.17 and
  inhibits AVIC (PHYSICAL_ID_TOO_BIG) since.

Usage: kvm-nested-apicv.py QEMU HOSTDIR
       (QEMU serves as L0 and L1; HOSTDIR from fetch-kvm-host.sh)
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testbed import TestbedError, run_testbed, verdict  # noqa: E402

QUERY = {"execute": "x-query-kvm-apicv"}
SPLIT = "q35,kernel-irqchip=split"

# KVM's inhibit names -> the fork's reasons; the others are transient
# (set by what a running guest does) or bookkeeping.
KVM_TO_FORK = {
    "PIT_REINJ": "pit-reinject", "ABSENT": "no-irqchip",
    "HYPERV": "hyperv", "NESTED": "nested",
    "X2APIC": "x2apic-without-x2avic", "SEV": "sev",
    "PHYSICAL_ID_TOO_BIG": "apic-id-too-big",
}

# name, L1 QEMU arguments, expected: "start" with the certain inhibits,
# or "refuse" with text the error must contain
CASES = [
    ("q35", ["-accel", "kvm", "-M", "q35"], "start", ["pit-reinject"]),
    ("pc", ["-accel", "kvm", "-M", "pc"], "start", ["pit-reinject"]),
    ("q35-pit-discard", ["-accel", "kvm", "-M", "q35", "-global",
                         "kvm-pit.lost_tick_policy=discard"], "start", []),
    ("q35-apicv-pit-discard", ["-accel", "kvm,apicv-pit-discard=on",
                               "-M", "q35"], "start", []),
    ("split", ["-accel", "kvm", "-M", SPLIT], "start", []),
    ("on-host-nested", ["-accel", "kvm,apicv=on", "-M", SPLIT,
                        "-cpu", "host"], "start", []),
    ("on-host-x2apic", ["-accel", "kvm,apicv=on", "-M", SPLIT,
                        "-cpu", "host,+x2apic", "-smp", "2"], "start", []),
    ("hyperv-synic", ["-accel", "kvm", "-M", SPLIT, "-cpu",
                      "host,hv-vpindex,hv-synic,hv-time,hv-relaxed"],
     "start", []),
    ("on-pit-reinject", ["-accel", "kvm,apicv=on", "-M", "q35"], "refuse",
     ["apicv=on: KVM would inhibit", "pit-reinject",
      "lost_tick_policy=discard"]),
    ("off", ["-accel", "kvm,apicv=off", "-M", SPLIT], "refuse",
     ["apicv=off: KVM has no per-VM switch", "kvm_amd avic=0"]),
    # inhibited anyway: off is what the VM gets
    ("off-pit-reinject", ["-accel", "kvm,apicv=off", "-M", "q35"], "start",
     ["pit-reinject"]),
]


def release(uname):
    m = re.match(r"(\d+)\.(\d+)", uname)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def trace_mask_at_query(trace, events):
    """The mask tracefs shows after the changes the fork's reader saw:
    line 0 is the VM's creation (before QEMU's reader opens, Linux
    6.10+: one event), then the @events it saw up to the query; the VM's
    teardown at quit comes after."""
    masks = [int(m.group(1), 16) for m in
             (re.search(r"kvm_apicv_inhibit_changed:.*inhibits=(0x[0-9a-f]+)",
                        line) for line in trace) if m]
    return masks[events] if len(masks) > events else None


def check_case(name, run, expect, want, errors):
    rc = run["rc"]
    reply = (run["qmp"] or [None])[0] or {}
    q = reply.get("return")
    if rc is None or rc >= 128:
        errors.append("%s: died (rc %s): %s" % (name, rc,
                                                run["stderr"][-400:]))
        return "died"
    if expect == "refuse":
        missing = [w for w in want if w not in run["stderr"]]
        if rc != 1 or missing:
            errors.append("%s: expected a refusal naming %s, got rc %s: %s"
                          % (name, missing, rc, run["stderr"][-400:]))
        return "refused: " + run["stderr"].strip().splitlines()[-2:][0][:100]
    if rc != 0 or not q or not q.get("kvm"):
        errors.append("%s: did not start (rc %s): %s"
                      % (name, rc, run["stderr"][-400:]))
        return "failed"
    certain = sorted(i["reason"] for i in q.get("inhibits", [])
                     if i["likelihood"] == "certain")
    possible = sorted(i["reason"] for i in q.get("inhibits", [])
                      if i["likelihood"] == "possible")
    obs = q.get("observed", {})
    if certain != sorted(want):
        errors.append("%s: predicted %s, expected %s" % (name, certain,
                                                         sorted(want)))
    if not obs.get("available"):
        errors.append("%s: tracepoints not read: %s" % (name,
                                                        obs.get("detail")))
        return "no observation"
    seen = sorted(KVM_TO_FORK[n] for n in obs.get("inhibits", [])
                  if n in KVM_TO_FORK)
    if seen != certain:
        errors.append("%s: KVM reports %s (mask 0x%x), fork predicted %s"
                      % (name, obs.get("inhibits"),
                         obs.get("inhibit-mask", 0), certain))
    traced = trace_mask_at_query(run["trace"], obs.get("inhibit-events", 0))
    if traced is not None and traced != obs.get("inhibit-mask"):
        errors.append("%s: tracefs says mask 0x%x, the fork's reader 0x%x"
                      % (name, traced, obs.get("inhibit-mask", -1)))
    return "mode %s, predicted %s%s, KVM %s" % (
        q.get("mode"), certain, " possible %s" % possible if possible else "",
        obs.get("inhibits"))


def main():
    qemu, hostdir = sys.argv[1:3]
    start = time.time()
    cases = [{"name": n, "args": a + ["-S"], "qmp": [QUERY]}
             for (n, a, _, _) in CASES]
    # APIC IDs 255 and 259 (L1 has no x2AVIC): refused at vCPU creation
    # before Linux 6.17, an inhibit since.
    for n in (256, 260):
        cases.append({"name": "smp-%d" % n, "qmp": [QUERY],
                      "args": ["-accel", "kvm", "-M", SPLIT, "-cpu",
                               "host,+x2apic", "-smp", str(n), "-S"]})
    try:
        res = run_testbed(qemu, qemu, hostdir, cases, l2_boot=False,
                          kvm_amd_params="avic=1 force_avic=1")
    except TestbedError as e:
        print("FAIL: %s\n%s" % (e, e.console[-3000:]))
        return 1
    l1 = res["l1"]
    kver = release(l1["uname"])
    print("L1 %s, kvm_amd: %s" % (l1["uname"], " ".join(
        "%s=%s" % kv for kv in sorted(l1["params"].items()))))
    errors = []
    if l1["params"].get("avic") != "Y":
        errors.append("L1's KVM did not enable AVIC (avic=%s)"
                      % l1["params"].get("avic"))
    for (name, _, expect, want) in CASES:
        outcome = check_case(name, res["cases"][name], expect, want, errors)
        print("%-22s %s" % (name, outcome))
    if kver < (6, 17):
        big = {"smp-256": ("refuse", ["-smp", "APIC ID 255", "avic=0"]),
               "smp-260": ("refuse", ["-smp", "APIC ID 255", "avic=0"])}
    elif kver >= (6, 17):
        big = {"smp-256": ("start", ["apic-id-too-big"]),
               "smp-260": ("start", ["apic-id-too-big"])}
    else:
        big = {}
        print("APIC ID cases not judged on Linux %d.%d" % kver)
    for name, (expect, want) in big.items():
        outcome = check_case(name, res["cases"][name], expect, want, errors)
        print("%-22s %s" % (name, outcome))
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
