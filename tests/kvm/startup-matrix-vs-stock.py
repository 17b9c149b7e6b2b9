#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Start the fork's qemu-system-x86_64 on /dev/kvm where it exists, in the
usual configurations (q35 and pc; in-kernel, split and userspace
irqchip; PIT policies; -cpu default, host, x2APIC on and off; every
apicv and device-posted-irqs value; a repeated -accel as libvirt plus
<qemu:commandline> give it) and check that each starts, runs and
answers x-query-kvm-apicv, or fails the documented way: exit status 1
and an error naming the option; never a signal, never half-started.

A configuration this host's KVM cannot run at all is recognised by
running stock QEMU of the same base the same way (without the fork's
options): where stock fails alike, the case is reported as a host
limitation, not as the fork's failure.

The expectations follow from the host: the query of a plain VM tells
what the host offers, and the test checks each case against it and
against the configuration (pit-reinject predicted exactly for an AMD
host with the in-kernel PIT re-injecting, no-irqchip exactly for
kernel-irqchip=off, apicv=on refused exactly when the host offers
nothing or an inhibit is certain, ...).

Usage: startup-matrix-vs-stock.py QEMU-SYSTEM-X86_64 [STOCK-QEMU-SYSTEM-X86_64]
Exits 77 (skipped) with a "SKIP" line where /dev/kvm is missing.
"""

import json
import os
import subprocess
import sys
import time

FW = ["-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
      "-L", "/usr/lib/ipxe/qemu"]


def run(qemu, args, cmds=("x-query-kvm-apicv",), hmp=None):
    """Start QEMU paused with QMP on stdio, run @cmds, let the guest run
    a moment, quit.  Returns (rc, replies by command, stderr)."""
    argv = [qemu, "-S", "-display", "none", "-nodefaults", "-m", "128",
            "-qmp", "stdio"] + FW + args
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    msgs = [{"execute": "qmp_capabilities"}]
    msgs += [{"execute": c} for c in cmds]
    if hmp:
        msgs.append({"execute": "human-monitor-command",
                     "arguments": {"command-line": hmp}})
    msgs += [{"execute": "cont"}]
    replies = {}
    try:
        for m in msgs:
            proc.stdin.write((json.dumps(m) + "\n").encode())
            proc.stdin.flush()
        time.sleep(0.3)     # the guest (SeaBIOS) runs for a moment
        for m in ({"execute": "query-status"}, {"execute": "quit"}):
            proc.stdin.write((json.dumps(m) + "\n").encode())
            proc.stdin.flush()
    except BrokenPipeError:
        pass                # QEMU already exited: rc and stderr say why
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return -999, {}, err.decode(errors="replace") + "\n(timeout)"
    names = [m["execute"] for m in msgs] + ["query-status", "quit"]
    i = 0
    for line in out.decode(errors="replace").splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if "QMP" in r or "event" in r:
            continue
        if i < len(names):
            replies[names[i]] = r.get("return", r.get("error"))
            i += 1
    return proc.returncode, replies, err.decode(errors="replace")


def stock_args(args):
    """@args without the fork's accelerator options."""
    out = []
    for a in args:
        if a.startswith("kvm,"):
            a = ",".join(o for o in a.split(",")
                         if not o.startswith(("apicv", "device-posted-irqs")))
        out.append(a)
    return out


def inhibits(q, likelihood=None):
    return sorted(i["reason"] for i in q.get("inhibits", [])
                  if likelihood is None or i["likelihood"] == likelihood)


def main():
    qemu = sys.argv[1]
    stock = sys.argv[2] if len(sys.argv) > 2 else None
    limits = 0
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        print("SKIP: no usable /dev/kvm on this machine")
        return 77

    rc, rep, err = run(qemu, ["-accel", "kvm", "-M", "q35"])
    if rc != 0 or "x-query-kvm-apicv" not in rep:
        print("FAIL: a plain -accel kvm -M q35 does not start (rc %d):\n%s"
              % (rc, err))
        return 1
    base = rep["x-query-kvm-apicv"]
    facts = {f["name"]: f["value"] for f in base["host-facts"]}
    amd = facts["vendor"] == "amd"
    host_mode = base["host-mode"]
    print("host: vendor=%s kernel=%s host-mode=%s (%s) device-posting=%s"
          % (facts["vendor"], facts["kernel"], host_mode,
             base.get("host-detail", ""), base["device-posting"]))
    print("observed: %s" % json.dumps(base["observed"]))

    machines = ["q35", "pc"]
    irqchips = ["on", "split", "off"]
    pits = [None, "delay", "discard"]
    cpus = [None, "host", "qemu64,+x2apic", "qemu64,-x2apic"]
    cases = []
    for m in machines:
        for irq in irqchips:
            for pit in pits:
                cases.append((m, irq, pit, None, "auto", "auto"))
    for cpu in cpus:
        for m in machines:
            cases.append((m, "on", None, cpu, "auto", "auto"))
    for apicv in ("auto", "on", "off"):
        for post in ("auto", "on", "off"):
            for irq in ("on", "split"):
                cases.append(("q35", irq, None, "host", apicv, post))

    failures = []
    for (m, irq, pit, cpu, apicv, post) in cases:
        accel = "kvm"
        if apicv != "auto":
            accel += ",apicv=" + apicv
        if post != "auto":
            accel += ",device-posted-irqs=" + post
        args = ["-accel", accel, "-M", "%s,kernel-irqchip=%s" % (m, irq)]
        if pit:
            args += ["-global", "kvm-pit.lost_tick_policy=" + pit]
        if cpu:
            args += ["-cpu", cpu]
        label = " ".join(args)
        rc, rep, err = run(qemu, args)
        q = rep.get("x-query-kvm-apicv")
        problems = []
        # what the configuration implies, independently of the fork
        pit_reinjects = irq == "on" and pit != "discard"
        expect = set()
        if amd and pit_reinjects:
            expect.add("pit-reinject")
        if irq == "off":
            expect.add("no-irqchip")
        refuse = []
        if apicv == "on" and host_mode == "none":
            refuse.append("apicv=on: the host offers no APIC virtualization")
        if apicv == "on" and host_mode != "none" and expect:
            refuse.append("apicv=on: KVM would inhibit")
        # off is refused only where this VM would run with APICv
        if apicv == "off" and host_mode != "none" and not expect:
            refuse.append("apicv=off: KVM has no per-VM switch")
        if post == "on" and base["device-posting"] != "on" and not refuse:
            refuse.append("device-posted-irqs=on:")
        died = "died: rc %d" % rc if rc < 0 or rc > 1 else None
        refused = rc == 1 and any(r in err for r in refuse)
        if rc != 0 and not refused and stock:
            src, srep, serr = run(stock, stock_args(args), cmds=())
            if src == rc and (died or src != 0):
                # stock fails alike: what this host's KVM cannot do
                limits += 1
                print("ok    %-80s host limitation, stock alike (rc %d): %s"
                      % (label, rc, err.strip().splitlines()[-1][:60]))
                continue
        if refuse:
            if died:
                problems.append(died)
            if rc != 1:
                problems.append("expected a refusal (%s), got rc %d"
                                % (refuse[0], rc))
            elif not refused:
                problems.append("error does not name %r: %s"
                                % (refuse[0], err.strip()))
            elif "-accel kvm," not in err:
                problems.append("error does not name the option: %s"
                                % err.strip())
            elif "Operation not permitted" in err:
                problems.append("stray EPERM line: %s" % err.strip())
            outcome = "refused: " + err.strip().splitlines()[0][:90]
        else:
            if died:
                problems.append(died)
            if rc != 0 or q is None:
                problems.append("did not start (rc %d): %s"
                                % (rc, err.strip()))
            else:
                st = rep.get("query-status", {})
                if st.get("status") != "running":
                    problems.append("guest not running: %s" % st)
                if not q.get("kvm"):
                    problems.append("query says kvm false")
                elif q["requested"] != apicv or \
                        q["requested-device-posting"] != post:
                    problems.append("options not taken: %s/%s"
                                    % (q["requested"],
                                       q["requested-device-posting"]))
                got = set(inhibits(q, "certain"))
                if got != expect:
                    problems.append("predicted %s, configuration implies %s"
                                    % (sorted(got), sorted(expect)))
                if q.get("pit-discard"):
                    problems.append("auto changed the PIT policy")
            outcome = "started, mode %s, inhibits %s" % (
                q and q.get("mode"), q and inhibits(q))
        print("%s  %-80s %s" % ("FAIL" if problems else "ok  ", label,
                                outcome))
        for p in problems:
            print("      " + p)
        if problems:
            failures.append(label)

    # libvirt's "-accel kvm" plus <qemu:commandline>'s "-accel kvm,..."
    rc, rep, err = run(qemu, ["-accel", "kvm", "-M", "q35",
                              "-accel", "kvm,device-posted-irqs=off"])
    q = rep.get("x-query-kvm-apicv") or {}
    ok = rc == 0 and q.get("requested-device-posting") == "off"
    print("%s  repeated -accel kvm merges into the first: %s"
          % ("ok  " if ok else "FAIL", q.get("requested-device-posting")))
    if not ok:
        failures.append("repeated -accel (rc %d) %s" % (rc, err))

    # the explicit opt-in changes the PIT, on every host alike
    rc, rep, err = run(qemu, ["-accel", "kvm,apicv-pit-discard=on",
                              "-M", "q35"], hmp="info kvm-apicv")
    q = rep.get("x-query-kvm-apicv") or {}
    hmp = rep.get("human-monitor-command") or ""
    want = True
    ok = rc == 0 and q.get("pit-discard") == want and \
        ("lost_tick_policy=discard (apicv-pit-discard=on)" in hmp) == want \
        and "host probe:" in hmp
    print("%s  apicv-pit-discard=on: pit-discard=%s (expected %s)"
          % ("ok  " if ok else "FAIL", q.get("pit-discard"), want))
    if not ok:
        failures.append("apicv-pit-discard (rc %d) %s %s" % (rc, err, hmp))

    print("%d cases, %d failed, %d host limitations shared with stock"
          % (len(cases) + 2, len(failures), limits))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
