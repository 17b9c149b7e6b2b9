#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The emulated AVIC's exits, checked by our own freestanding L1
hypervisor (avic-l1.c, built by avic-l1.mk): under TCG with -cpu
EPYC-Milan,+x2apic,+avic,+x2avic, on q35 and pc, every check it prints
must be OK and it must end with "DONE 0" through isa-debug-exit.
Also, the CPU model side:
- without +avic the same guest sees no AVIC at all (its checks fail:
  the int_ctl bit is ignored, as by stock QEMU), so the checks are not
  vacuous;
- +x2avic without +avic, and +avic without npt, are refused at start
  with an error naming what to add;
- under KVM (if /dev/kvm is there), -cpu host,+avic starts: KVM does
  not offer AVIC to guests, so the feature is filtered with QEMU's usual
  warning, and with enforce it is an error.  Without a usable /dev/kvm
  these three cases are not run: one "SUBTEST-SKIP: <case>: <reason>"
  line each, which scripts/run-checks.sh counts as skips.

Usage: avic-exits.py QEMU ELF
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from guest_output import verdict  # noqa: E402

CPU = "EPYC-Milan,+x2apic,+avic,+x2avic"


def run(qemu, args, timeout=60):
    p = subprocess.run([qemu, "-display", "none", "-nodefaults"] + args,
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def guest(qemu, elf, machine, cpu, smp=1):
    # 2 CPUs (the second never started): TCG's parallel code (MTTCG)
    return run(qemu, ["-accel", "tcg", "-M", machine, "-cpu", cpu,
                      "-smp", str(smp),
                      "-kernel", elf, "-debugcon", "stdio",
                      "-device", "isa-debug-exit,iobase=0xf4,iosize=1"])


def main():
    qemu, elf = sys.argv[1:3]
    start = time.time()
    errors = []
    for machine, smp in (("q35", 2), ("pc", 1)):
        rc, out, err = guest(qemu, elf, machine, CPU, smp)
        lines = out.splitlines()
        fails = [l for l in lines if l.startswith("FAIL")]
        oks = [l for l in lines if l.startswith("OK")]
        print("%s: rc %d, %d OK, %d FAIL" % (machine, rc, len(oks),
                                              len(fails)))
        if rc != 1 or fails or "DONE 0" not in lines or len(oks) < 30:
            errors.append("%s: rc %d, %s\n%s" % (machine, rc, fails[:5],
                                                 err[-500:]))

    rc, out, err = guest(qemu, elf, "q35", "EPYC-Milan,+x2apic")
    fails = [l for l in out.splitlines() if l.startswith("FAIL")]
    print("without avic: rc %d, %d FAIL" % (rc, len(fails)))
    if rc != 3 or not fails:
        errors.append("without +avic the checks passed (rc %d)" % rc)

    for cpu, want in (("EPYC-Milan,+x2apic,+x2avic,-avic",
                       "'x2avic' needs 'avic': add +avic"),
                      ("EPYC-Milan,+avic,-npt", "'avic' needs 'npt'"),
                      ("EPYC-Milan,+avic,+x2avic",
                       "'x2avic' needs 'x2apic': add +x2apic")):
        rc, out, err = run(qemu, ["-accel", "tcg", "-cpu", cpu, "-S"])
        print("-cpu %s: rc %d, %s" % (cpu, rc, err.strip()[-120:]))
        if rc != 1 or want not in err:
            errors.append("-cpu %s: rc %d, want refusal with %r: %s"
                          % (cpu, rc, want, err[-300:]))

    if os.access("/dev/kvm", os.R_OK | os.W_OK):
        for machine in ("q35", "pc"):
            p = subprocess.run(
                [qemu, "-display", "none", "-nodefaults", "-accel", "kvm",
                 "-M", machine, "-cpu", "host,+avic", "-S", "-qmp", "stdio"],
                input='{"execute":"qmp_capabilities"}\n'
                      '{"execute":"quit"}\n',
                capture_output=True, text=True, timeout=30)
            print("kvm %s -cpu host,+avic: rc %d" % (machine, p.returncode))
            if p.returncode != 0:
                errors.append("kvm %s -cpu host,+avic: rc %d: %s"
                              % (machine, p.returncode, p.stderr[-300:]))
        rc, out, err = run(qemu, ["-accel", "kvm", "-cpu",
                                  "host,+avic,enforce", "-S"], timeout=30)
        print("kvm -cpu host,+avic,enforce: rc %d" % rc)
        if rc != 1 or "avic" not in err:
            errors.append("kvm enforce: rc %d: %s" % (rc, err[-300:]))
    else:
        for case in ("kvm q35 -cpu host,+avic", "kvm pc -cpu host,+avic",
                     "kvm -cpu host,+avic,enforce"):
            print("SUBTEST-SKIP: %s: no usable /dev/kvm on this machine"
                  % case)

    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
