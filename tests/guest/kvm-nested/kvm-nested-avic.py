#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The fork's emulated AVIC and x2AVIC (TCG, nested SVM) under a real
guest hypervisor: a Debian kernel as L1 host (testbed.py) whose L0 CPU
offers avic and x2avic, kvm_amd loaded with plain avic=1 (no
force_avic), then:

- L1's KVM says "AVIC enabled" and "x2AVIC enabled", and its avic
  parameter is on;
- the fork's binary in L1 is accepted with -accel kvm,apicv=on and
  -cpu host (x2APIC), reports mode x2avic with no inhibit, and the
  inhibit mask it observed equals L1's tracefs at the query;
- a 2-vCPU L2 Linux in x2APIC mode (the l2 run) and one in xAPIC mode
  (-cpu host,-x2apic: the APIC BAR page) boot and run an IPI load
  (ipi-bench membarrier and futex ping-pong);
- L1's AVIC tracepoints fire: doorbells (L1 rings the doorbell MSR),
  incomplete IPIs (to vCPUs that are not running, and INIT/SIPI), and,
  in xAPIC mode, unaccelerated accesses (trap writes to SVR, LVTs...);
- no DISABLED inhibit is ever set;
- L1 printed none of KVM's AVIC complaints (a trap-style read, an
  invalid backing page or IPI target, an unknown incomplete-IPI cause)
  on its console (everything L1's kernel prints while the test runs)
  or in the kernel log l1-init.sh reports at set-up; the WARN_ONCE ones
  also print "WARNING: CPU:", which fails the test bed itself
  (testbed.L1_FAILURE), so this check adds the pr_err / vcpu_unimpl
  ones and names the complaint;
- the IPIs to running vCPUs (membarrier against spinning threads) are
  accelerated: L1's incomplete-IPI and unaccelerated-access exits while
  membarrier ran (one for each IPI AVIC does not accelerate; the trace's
  timestamps against L1's uptime on L2's stamped lines) are fewer than
  half its IPIs (measured: under 1%), while futex-pingpong's, which
  wake halted vCPUs, do exit (measured: 70-90%).

Usage: kvm-nested-avic.py QEMU HOSTDIR
       (QEMU serves as L0 and L1; HOSTDIR from fetch-kvm-host.sh)
"""

import importlib.util
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testbed import (L2_MARKER, TestbedError, l2_stopped,  # noqa: E402
                     run_testbed, verdict)
import avic  # noqa: E402

# the apicv test's reading of tracefs at the time of the query
_spec = importlib.util.spec_from_file_location(
    "kvm_nested_apicv", os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "kvm-nested-apicv.py"))
_apicv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_apicv)

SECONDS = 2
QUERY = {"execute": "x-query-kvm-apicv"}
SPLIT = "q35,kernel-irqchip=split"


def stopped_early(res):
    """Why the run should be repeated, if an L2 ended the way upstream's
    nested SVM under TCG now and then ends one (testbed.py): the l2-xapic
    case stopped before its marker, or either L2 exited 0 (a reset under
    -no-reboot) before its load finished.  None otherwise."""
    xapic = res["cases"]["l2-xapic"]
    why = l2_stopped(xapic)
    if why:
        return "l2-xapic: " + why
    for name, run in (("l2", res["l2"]), ("l2-xapic", xapic)):
        load = avic.parse_load(run.get("stdout", ""))
        if run.get("rc") == 0 and any(w not in load
                                      for w in avic.WORKLOADS):
            return "%s stopped before its load finished (rc 0, as on " \
                "a reset)" % name
    return None


def check_l2(name, run, x2apic, errors):
    out = run.get("stdout", "")
    load = avic.parse_load(out)
    counts = avic.trace_counts(run.get("trace", []))
    print("%s: rc %s, load %s" % (name, run.get("rc"), load))
    print("%s: L1 tracepoints %s" % (name, counts))
    if L2_MARKER not in out:
        errors.append("%s: L2 did not boot (rc %s): %s"
                      % (name, run.get("rc"), out[-1500:]))
        return
    if ("x2apic" in out.lower()) != x2apic:
        errors.append("%s: L2 not in %s mode: %s" % (
            name, "x2APIC" if x2apic else "xAPIC",
            [l for l in out.splitlines() if "apic" in l.lower()][:3]))
    for w in avic.WORKLOADS:
        if w not in load:
            errors.append("%s: no BENCH line for %s; L2 said: %s"
                          % (name, w, out[-1500:]))
        elif load[w]["ipis"] <= 0:
            errors.append("%s: %s counted no IPIs" % (name, w))
    for tp in ("kvm_avic_doorbell", "kvm_avic_incomplete_ipi"):
        if not counts.get(tp):
            errors.append("%s: %s never fired in L1" % (name, tp))
    for line in run.get("trace", []):
        if "kvm_apicv_inhibit_changed: set" in line and "DISABLED" in line:
            errors.append("%s: AVIC DISABLED inhibit: %s" % (name, line))
            break
    # Every IPI AVIC does not accelerate exits to L1 as one of these (a
    # target not running, an unaccelerated ICR access); accelerated
    # ones do not exit.  Counted while membarrier ran (its IPIs go to
    # spinning vCPUs): L1's total exits are no measure, its timer and
    # halt exits grow with the host's load while the IPIs fall.
    mb = load.get("membarrier")
    slow = avic.window_counts(out, run.get("trace", []), "membarrier",
                              ("kvm_avic_incomplete_ipi",
                               "kvm_avic_unaccelerated_access"))
    # the same count while futex-pingpong ran, whose IPIs wake halted
    # vCPUs and so all exit: it shows the window holds the events
    fx = load.get("futex-pingpong")
    fx_slow = avic.window_counts(out, run.get("trace", []),
                                 "futex-pingpong",
                                 ("kvm_avic_incomplete_ipi",
                                  "kvm_avic_unaccelerated_access"))
    print("%s: membarrier: %s IPIs, %s unaccelerated; futex-pingpong: "
          "%s IPIs, %s unaccelerated" % (
              name, mb["ipis"] if mb else None, slow,
              fx["ipis"] if fx else None, fx_slow))
    if fx and fx["ipis"] > 0 and not fx_slow:
        errors.append("%s: no incomplete-IPI exit while futex-pingpong "
                      "woke halted vCPUs (%d IPIs): the trace window is "
                      "empty" % (name, fx["ipis"]))
    if mb and mb["ipis"] > 0:
        if slow is None:
            errors.append("%s: no membarrier window in L2's output" % name)
        elif slow * 2 >= mb["ipis"]:
            errors.append("%s: membarrier IPIs not accelerated: %d IPIs, "
                          "%d incomplete-IPI or unaccelerated-access exits "
                          "in L1 meanwhile" % (name, mb["ipis"], slow))
    return counts


# What Linux's arch/x86/kvm/svm/avic.c prints when the AVIC it runs on
# does what it should not (WARN_ONCE texts, pr_err, vcpu_unimpl), 6.12
# to 7.3 and the older "Invalid IPI target".
L1_AVIC_ERRORS = re.compile(r"Handling trap read|Invalid backing page"
                            r"|Invalid IPI target"
                            r"|Unknown (avic incomplete )?IPI interception",
                            re.I)


def l1_avic_errors(*texts):
    """The lines of L1's console and kernel log that are KVM's AVIC
    complaints."""
    return [line.strip()[-200:] for text in texts
            for line in (text or "").splitlines()
            if L1_AVIC_ERRORS.search(line)]


def main():
    qemu, hostdir = sys.argv[1:3]
    start = time.time()
    errors = []
    with avic.tmpdir() as tmp:
        cases = [
            {"name": "apicv-on-host-x2apic",
             "args": ["-accel", "kvm,apicv=on", "-M", SPLIT, "-cpu",
                      "host,+x2apic", "-smp", "2", "-S"],
             "qmp": [QUERY]},
            avic.l2_case("l2-xapic", tmp, SECONDS,
                         ["-cpu", "host,-x2apic"]),
        ]
        try:
            res = run_testbed(qemu, qemu, hostdir, cases,
                              l2=avic.l2_spec(tmp, SECONDS),
                              kvm_amd_params="avic=1",
                              l0_extra_args=avic.L0_ARGS, timeout=240,
                              retry=stopped_early)
        except TestbedError as e:
            print(e.console[-3000:])
            return verdict(["testbed: %s" % e], start)
    l1 = res["l1"]
    print("L1 %s, kvm_amd avic=%s" % (l1["uname"],
                                      l1["params"].get("avic")))
    for want in ("AVIC enabled", "x2AVIC enabled"):
        if want not in l1["dmesg"]:
            errors.append("L1's kvm_amd did not say %r: %s"
                          % (want, l1["dmesg"][-800:]))
    for line in l1_avic_errors(res.get("console"), l1["dmesg"]):
        errors.append("L1's KVM complained about AVIC: %s" % line)
    if l1["params"].get("avic") not in ("Y", "1"):
        errors.append("L1's kvm_amd avic=%s" % l1["params"].get("avic"))

    q = res["cases"]["apicv-on-host-x2apic"]
    reply = (q["qmp"] or [None])[0] or {}
    ret = reply.get("return", {})
    obs = ret.get("observed", {})
    print("query: rc %s, mode %s, inhibits %s, observed %s" % (
        q["rc"], ret.get("mode"), ret.get("inhibits"), obs.get("inhibits")))
    if q["rc"] != 0 or "return" not in reply:
        errors.append("apicv=on with -cpu host refused in L1: %s %s"
                      % (reply, q["stderr"][-500:]))
    else:
        if ret.get("mode") != "x2avic":
            errors.append("mode %r, not x2avic" % ret.get("mode"))
        if ret.get("inhibits") or obs.get("inhibits"):
            errors.append("inhibits %s / observed %s, want none"
                          % (ret.get("inhibits"), obs.get("inhibits")))
        mask = _apicv.trace_mask_at_query(q["trace"],
                                          obs.get("inhibit-events", 0))
        print("tracefs mask at the query: %s, observed %s"
              % (mask, obs.get("inhibit-mask")))
        if mask is None or mask != obs.get("inhibit-mask"):
            errors.append("observed inhibit mask %s, tracefs %s"
                          % (obs.get("inhibit-mask"), mask))
        facts = {f["name"]: f["value"] for f in ret.get("host-facts", [])}
        for name in ("cpu.avic", "cpu.x2avic", "kvm_amd.avic"):
            if facts.get(name) != "yes":
                errors.append("host fact %s = %s" % (name, facts.get(name)))

    check_l2("l2-x2apic", res["l2"], True, errors)
    counts = check_l2("l2-xapic", res["cases"]["l2-xapic"], False, errors)
    if counts is not None and not counts.get("kvm_avic_unaccelerated_access"):
        errors.append("l2-xapic: no kvm_avic_unaccelerated_access in L1")
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
