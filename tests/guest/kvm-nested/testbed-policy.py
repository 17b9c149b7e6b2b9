#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The nested test bed's failure policy (testbed.py), without a VM:
run_testbed() is driven with canned results of single runs in place of
L0, and the classifiers get canned L1 consoles and QEMU error output.
Checks that an L2 reset is repeated only within TESTBED_REPEATS, each
repeat printing one TESTBED-REPEAT line; that past the budget the last
result comes back after a TESTBED-FAILURE line; that L0/L1 failures
are raised at once, never repeated; that L1 panics, Oopses, BUGs and
WARNINGs and KVM errors of QEMUs in L1 are recognised.

Usage: testbed-policy.py   (make check runs it)
"""

import contextlib
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testbed  # noqa: E402

ERRORS = []


def check(cond, what):
    if not cond:
        ERRORS.append(what)


def l2_result(booted, rc=0, stderr=""):
    out = (testbed.L2_MARKER + " 6.12\n") if booted else "Linux version"
    return {"l1": {}, "cases": {},
            "l2": {"rc": rc, "stdout": out, "stderr": stderr,
                   "booted": booted}}


def drive(outcomes, repeats, retry=None):
    """run_testbed() with _run_testbed_once() giving outcomes in turn
    (a result, or an exception to raise); returns (result or the
    exception, runs taken, stdout)."""
    taken = []

    def fake_once(*args, **kwargs):
        taken.append(1)
        o = outcomes[len(taken) - 1]
        if isinstance(o, Exception):
            raise o
        return o

    real = testbed._run_testbed_once
    testbed._run_testbed_once = fake_once
    os.environ["TESTBED_REPEATS"] = str(repeats)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            try:
                got = testbed.run_testbed("l0", "l1", "/h", [],
                                          retry=retry)
            except testbed.TestbedError as e:
                got = e
    finally:
        testbed._run_testbed_once = real
    return got, len(taken), out.getvalue()


def lines(text, prefix):
    return [l for l in text.splitlines() if l.startswith(prefix)]


def main():
    ok, reset = l2_result(True), l2_result(False, rc=0)
    hung = l2_result(False, rc=137)

    got, runs, out = drive([ok], 0)
    check(got is ok and runs == 1 and not lines(out, "TESTBED-"),
          "a clean run: one run, no TESTBED line (%d runs, %r)"
          % (runs, out))

    got, runs, out = drive([reset, ok], 0)
    check(got is reset and runs == 1,
          "budget 0: an L2 reset is not repeated (%d runs)" % runs)
    check(len(lines(out, "TESTBED-FAILURE layer=L2 ")) == 1 and
          not lines(out, "TESTBED-REPEAT"),
          "budget 0: one TESTBED-FAILURE line for L2, no repeat: %r" % out)

    got, runs, out = drive([reset, hung, ok], 2)
    check(got is ok and runs == 3,
          "budget 2: reset, hang, then the clean run (%d runs)" % runs)
    reps = lines(out, "TESTBED-REPEAT layer=L2 ")
    check(len(reps) == 2 and "reset" in reps[0] and "hung" in reps[1],
          "budget 2: two TESTBED-REPEAT lines naming the causes: %r" % reps)

    got, runs, out = drive([reset, reset], 1)
    check(got is reset and runs == 2 and
          len(lines(out, "TESTBED-REPEAT")) == 1 and
          len(lines(out, "TESTBED-FAILURE")) == 1,
          "budget 1 spent: the second reset comes back as a failure "
          "(%d runs, %r)" % (runs, out))

    l1_stop = testbed.TestbedError("L1: stopped before its report ended")
    got, runs, out = drive([l1_stop, ok], 3)
    check(got is l1_stop and runs == 1,
          "an L1 stop is raised at once, whatever the budget (%d runs)"
          % runs)

    got, runs, out = drive([ok, ok], 1,
                           retry=lambda res: "the test's own reason")
    check(runs == 2 and "the test's own reason" in out,
          "retry(res)'s reason repeats within the budget: %r" % out)

    for line in ("[   12.5] Kernel panic - not syncing: Fatal exception",
                 "[    3.1] BUG: kernel NULL pointer dereference, "
                 "address: 0000000000000008",
                 "[    3.1] Oops: 0000 [#1] PREEMPT SMP NOPTI",
                 "[    9.9] WARNING: CPU: 1 PID: 250 at "
                 "arch/x86/kvm/svm/avic.c:123 avic_x+0x1/0x2 [kvm_amd]",
                 "[   30.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!"):
        check(testbed._l1_failure_line("boot\n" + line + "\nmore") ==
              line.strip(), "not an L1 failure: %r" % line)
    clean = ("[    0.0] Linux version 6.12\n[    1.0] kvm_amd: AVIC enabled\n"
             "[    1.1] WARNING: this line has no CPU field\n")
    check(testbed._l1_failure_line(clean) is None,
          "a clean L1 console seen as a failure")

    for err in ("KVM internal error. Suberror: 1\nemulation failure\n",
                "error: kvm run failed Bad address\n"
                "KVM: entry failed, hardware error 0x80000021\n"):
        res = l2_result(True, stderr=err)
        check(testbed._kvm_error(res) is not None,
              "a KVM error not seen: %r" % err)
    res = l2_result(True, stderr="qemu-system-x86_64: warning: host "
                    "doesn't support requested feature\n")
    res["cases"]["q35"] = {"rc": 1, "stderr": "qemu-system-x86_64: "
                           "-accel kvm,apicv=on: APIC virtualization "
                           "unavailable\n"}
    check(testbed._kvm_error(res) is None,
          "a warning or a refused start seen as a KVM error")
    res["cases"]["pc"] = {"rc": 0, "stderr": "KVM internal error. "
                          "Suberror: 3\n"}
    check(testbed._kvm_error(res) is not None and
          testbed._kvm_error(res).startswith("pc: "),
          "a case's KVM error not named by its case")

    os.environ["TESTBED_REPEATS"] = "two"
    try:
        testbed.repeat_budget()
        ERRORS.append("TESTBED_REPEATS=two accepted")
    except ValueError:
        pass

    for e in ERRORS:
        print("FAIL: " + e)
    print("PASS" if not ERRORS else "FAIL")
    return 1 if ERRORS else 0


if __name__ == "__main__":
    sys.exit(main())
