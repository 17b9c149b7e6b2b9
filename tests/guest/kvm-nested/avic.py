# SPDX-License-Identifier: GPL-2.0-or-later
"""The emulated AVIC's share of the nested test bed (testbed.py), used
by kvm-nested-avic.py (the test) and kvm-nested-avic-bench.py (the
benchmark): L0 offers AVIC and x2AVIC under TCG, L1's kvm_amd runs with
avic=1 (or 0, for the benchmark's baseline), and an L2 Linux runs an
IPI load (ipi-bench, built for x86 by ipi-bench.mk) whose output lines
L1 stamps with its uptime and KVM's exit count, so each workload's L1
exits can be told apart from the boot's.
"""

import os
import re
import tempfile

from testbed import L2_ARGS, stamped_lines

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
IPI_BENCH = os.path.join(TOP, "build", "guest-x86", "ipi-bench")

# L0's CPU: Zen 3, since Linux 6.17+ leaves IPI virtualization off on
# Zen 2 (erratum #1235: IsRunning never set, every IPI exits); EPYC
# models have no x2APIC of their own
L0_CPU = "EPYC-Milan,+x2apic,+avic,+x2avic"
L0_ARGS = ["-cpu", L0_CPU]
# Without a PIT that re-injects, KVM does not inhibit AVIC for L2
L2_AVIC_ARGS = ["-global", "kvm-pit.lost_tick_policy=discard"]
WORKLOADS = ("membarrier", "futex-pingpong")


def l2_files(tmpdir, seconds):
    """The L2 initramfs' extra files: ipi-bench and /l2-run for it."""
    if not os.path.exists(IPI_BENCH):
        raise FileNotFoundError("%s is missing: make ipi-bench-x86"
                                % IPI_BENCH)
    run = os.path.join(tmpdir, "l2-run")
    with open(run, "w") as f:
        f.write("#!/bin/sh\n")
        # the APIC mode Linux chose, for the test to check
        f.write('dmesg | grep -i -m 2 -e "apic routing" -e x2apic\n')
        for w in WORKLOADS:
            f.write('echo "=== L2-LOAD %s BEGIN ==="\n' % w)
            f.write("/bin/ipi-bench %s %s || echo BENCH-ERROR %s $?\n"
                    % (w, seconds, w))
        f.write('echo "=== L2-LOAD END ==="\n')
    return {"/l2-run": run, "/bin/ipi-bench": IPI_BENCH}


def l2_spec(tmpdir, seconds, extra_args=()):
    return {"args": L2_AVIC_ARGS + list(extra_args),
            "files": l2_files(tmpdir, seconds), "stamp": True}


def l2_case(name, tmpdir, seconds, extra_args):
    """A case that boots another L2 (the same initramfs as the l2 run)
    with extra_args, stamped, without QMP."""
    return {"name": name, "args": L2_ARGS + L2_AVIC_ARGS + list(extra_args),
            "qmp": None, "stamp": True}


def parse_load(stdout):
    """{workload: {"ops_per_s", "ipis", "seconds", "exits"}} from an L2
    run's stamped stdout: exits are KVM's exits in L1 from the
    workload's BEGIN line to its BENCH line."""
    begin = {}
    out = {}
    for _, exits, text in stamped_lines(stdout):
        if exits is None:
            continue
        b = re.search(r"=== L2-LOAD (\S+) BEGIN ===", text)
        if b:
            begin[b.group(1)] = exits
            continue
        r = re.search(r"BENCH (\S+) ([\d.]+) ops=(\d+) seconds=([\d.]+) "
                      r"cpus=(\d+) ipis=(\d+)", text)
        if r and r.group(1) in begin:
            out[r.group(1)] = {
                "ops_per_s": float(r.group(2)), "ops": int(r.group(3)),
                "seconds": float(r.group(4)), "cpus": int(r.group(5)),
                "ipis": int(r.group(6)),
                "exits": exits - begin[r.group(1)]}
    return out


def trace_counts(trace):
    counts = {}
    for line in trace:
        m = re.search(r" (kvm_\w+):", line)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def window_counts(stdout, trace, workload, events):
    """How many of @events L1's trace shows while @workload ran: between
    its BEGIN and BENCH lines (L1's uptime on the stamped lines; the
    trace's timestamps count from the same boot).  None without both
    lines."""
    start = end = None
    for uptime, _, text in stamped_lines(stdout):
        if "=== L2-LOAD %s BEGIN ===" % workload in text:
            start = uptime
        elif start is not None and end is None and \
                text.startswith("BENCH %s " % workload):
            end = uptime
    if start is None or end is None:
        return None
    n = 0
    for line in trace:
        m = re.search(r" ([0-9]+\.[0-9]+): (kvm_\w+):", line)
        if m and m.group(2) in events and \
                start <= float(m.group(1)) <= end:
            n += 1
    return n


def tmpdir():
    return tempfile.TemporaryDirectory(prefix="kvm-nested-avic-")
