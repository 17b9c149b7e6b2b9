# SPDX-License-Identifier: GPL-2.0-or-later
"""The posted-interrupt pipeline of the nested test bed (testbed.py),
used by kvm-nested-posted.py (the test) and kvm-nested-posted-bench.py
(the benchmark):

- L0: the fork under TCG with AVIC and x2AVIC (avic.py's CPU), the
  emulated AMD IOMMU in GA mode (intremap=on,xtsup=on,x-ga-vapic=on)
  and an emulated NVMe controller behind it (MSI-X, DMA remapped), its
  irq-device counters polled over QMP (query-stats) during the run;
- L1: a Debian kernel, kvm_amd avic=1, the controller bound to vfio-pci
  (l1-init.sh's tb_vfio);
- L2: a Debian kernel run by the fork in L1 under KVM
  (q35,kernel-irqchip=split, x2APIC) with the controller assigned
  (-device vfio-pci), its nvme driver (fetch-kvm-host.sh's l2-modules)
  reading the disk with O_DIRECT from one reader per vCPU, each pinned
  to its vCPU (one completion interrupt per read, on that vCPU's queue).
"""

import os
import re
import sys
import tempfile
import threading
import time

from testbed import L2_ARGS, RUN_TIMEOUT, run_testbed, stamped_lines
import avic

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "scripts"))
from qmp import QMPConnection, QMPError  # noqa: E402

BDF = "0000:00:05.0"
L0_IOMMU = "amd-iommu,intremap=on,xtsup=on,x-ga-vapic=on,x-southbridge=on"
# after L2: the fork's own host view in L1, as an administrator of an
# AVIC host reads it (query-stats target host: /proc/interrupts rows)
HOST_STATS = {"name": "host-stats",
              "args": ["-accel", "kvm", "-M", "q35", "-S"],
              "qmp": [{"execute": "query-stats",
                       "arguments": {"target": "host"}}]}
COUNTERS = ("amdvi-remapped-interrupts", "amdvi-posted-interrupts",
            "amdvi-doorbells", "amdvi-ga-log-entries",
            "amdvi-ga-log-interrupts", "amdvi-ga-log-overflows")


class StatsPoller(threading.Thread):
    """Polls L0's query-stats (irq-device) once a second over its QMP
    socket.  L0 runs with -action shutdown=pause: once it has shut
    down (L1 powered off, or reset itself under -no-reboot), the poller
    takes the final answer, so nothing L1 did is missed, and quits L0.
    Reconnects when L0 is started again (the test bed repeats a run),
    so first and last are the answers of the newest L0."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.first = self.last = None
        self.final = False
        self.stop = False

    def run(self):
        while not self.stop:
            try:
                conn = QMPConnection.attach(self.path, "L0")
            except (OSError, QMPError):
                time.sleep(0.2)
                continue
            self.first = self.last = None
            self.final = False
            try:
                while True:
                    status = conn.cmd("query-status")["status"]
                    c = counters(conn.cmd("query-stats",
                                          target="irq-device"))
                    if self.first is None:
                        self.first = c
                    self.last = c
                    if status == "shutdown":
                        self.final = True
                        conn.cmd("quit")
                        break
                    time.sleep(0.5)
            except (OSError, ValueError, QMPError):
                pass
            finally:
                conn.sock.close()
                time.sleep(0.5)


def counters(stats):
    """The IOMMU's counters from a query-stats irq-device answer."""
    out = {}
    for prov in stats:
        for s in prov.get("stats", []):
            if s["name"] in COUNTERS:
                out[s["name"]] = out.get(s["name"], 0) + s["value"]
    return out


# The load's regimes (make bench-posted): "blocking", one reader per L2
# vCPU, which blocks on its completion; "preempted", the same readers
# with a CPU-bound loop pinned beside each, so that L2's vCPUs stay
# runnable and L1's scheduler preempts them while interrupts arrive
REGIMES = ("blocking", "preempted")


def l2_files(tmp, hostdir, readers, reads, regime="blocking", hist=False,
             sched_features=()):
    """L2's nvme modules and its /l2-run: readers dd's in parallel, each
    pinned to one vCPU, each reading its own reads blocks; in the
    preempted regime a busy loop shares each reader's vCPU.  hist: L2
    prints, after the reads, its hrtimers' expiries by function ("L2
    HRTIMER"), its scheduler features and preemption model.
    sched_features: scheduler features L2 sets before the reads."""
    if regime not in REGIMES:
        raise ValueError("regime %r: want one of %s" % (regime, REGIMES))
    mods = os.path.join(hostdir, "l2-modules")
    with open(os.path.join(hostdir, "l2-modules.order")) as f:
        order = f.read().split()
    files = {"/lib/l2mod/" + m: os.path.join(mods, m) for m in order}
    run = os.path.join(tmp, "l2-run")
    with open(run, "w") as f:
        f.write("#!/bin/sh\n")
        f.write("mkdir -p /dev /sys; mount -t devtmpfs dev /dev; "
                "mount -t sysfs sys /sys\n")
        for m in order:
            f.write("insmod /lib/l2mod/%s || echo INSMOD-ERROR %s\n"
                    % (m, m))
        f.write("i=0; while [ ! -b /dev/nvme0n1 ] && [ $i -lt 200 ]; do "
                "usleep 100000; i=$((i+1)); done\n")
        if sched_features:
            f.write("mount -t debugfs none /sys/kernel/debug\n")
        for feature in sched_features:
            f.write("echo %s > /sys/kernel/debug/sched/features\n" % feature)
        if regime == "preempted":
            for r in range(readers):
                f.write("taskset -c %d sh -c 'while :; do :; done' & "
                        "busy=\"$busy $!\"\n" % r)
        if hist:
            # L2's own hrtimers over the reads, by function (hist trigger)
            f.write("mount -t tracefs none /sys/kernel/tracing; "
                    "h=/sys/kernel/tracing/events/timer/hrtimer_expire_entry"
                    "; echo 'hist:keys=function.sym' > $h/trigger\n")
        f.write("echo '=== POSTED BEFORE ==='; grep nvme /proc/interrupts\n")
        # L2's jiffies: with the stamps (L1's uptime), its tick rate
        f.write("sed -n 's/^timestamp /L2 JIFFIES /p' /proc/schedstat\n")
        for r in range(readers):
            f.write("taskset -c %d dd if=/dev/nvme0n1 of=/dev/null bs=4096 "
                    "skip=%d count=%d iflag=direct 2>&1 | sed 's/^/DD /' & "
                    "readers=\"$readers $!\"\n"
                    % (r, r * reads, reads))
        if regime == "preempted":
            # the readers, not the busy loops, end the run
            f.write("wait $readers; kill $busy\n")
        else:
            f.write("wait\n")
        f.write("echo '=== POSTED AFTER ==='; grep nvme /proc/interrupts\n")
        if hist:
            f.write("echo 'hist:keys=function.sym:pause' >> $h/trigger; "
                    "grep hitcount $h/hist | sed 's/^/L2 HRTIMER /'; "
                    "mount -t debugfs none /sys/kernel/debug 2>/dev/null; "
                    "echo \"L2 SCHED $(cat /sys/kernel/debug/sched/features)\""
                    "; dmesg | grep -i preempt | sed 's/^/L2 DMESG /'\n")
        f.write("sed -n 's/^timestamp /L2 JIFFIES /p' /proc/schedstat\n")
        # time for the query (qmp_at) to be answered before power-off
        f.write("sleep 2\n")
        f.write("echo '=== POSTED END ==='\n")
    os.chmod(run, 0o755)
    files["/l2-run"] = run
    return files


def irte_updates(trace):
    """L1's kvm_pi_irte_update lines: [(time, gsi, enabled, vcpu)], in
    trace order (time: the trace clock, L1's uptime)."""
    out = []
    for line in trace:
        m = re.search(r" ([0-9]+\.[0-9]+): kvm_pi_irte_update: PI is "
                      r"(enabled|disabled).*?vcpu (-?\d+), gsi: 0x([0-9a-f]+)",
                      line)
        if m:
            out.append((float(m.group(1)), int(m.group(4), 16),
                        m.group(2) == "enabled", int(m.group(3))))
    return out


def irte_vcpus_between(updates, gsi, start, end):
    """The vCPUs KVM's IRTE for gsi was set up to post to at some time
    in [start, end] (None: not posting)."""
    state, seen = None, set()
    for t, g, enabled, vcpu in updates:
        if g != gsi:
            continue
        if t > end:
            break
        if t > start:
            seen.add(state)
        state = vcpu if enabled else None
    seen.add(state)
    return seen


VCPU_COMM = re.compile(r"CPU (\d+)/KVM")


def ga_log_split(trace, start, end):
    """L1's GA-log wake-ups (kvm_avic_ga_log) between start and end
    (L1's uptime), by what the vCPU's thread was doing when its
    interrupt was logged: its last sched_switch off its CPU before then
    with prev_state S or D ("blocking": it halted in KVM), R ("preempted":
    scheduled out while runnable), or none since it last ran
    ("running"), or no switch seen ("unknown").  The trace needs
    sched:sched_switch (l1-init.sh's tb_events)."""
    state, out = {}, {"blocking": 0, "preempted": 0, "running": 0,
                      "unknown": 0}
    for line in trace:
        m = re.search(r" ([0-9]+\.[0-9]+): (sched_switch|kvm_avic_ga_log): "
                      r"(.*)", line)
        if not m:
            continue
        t, event, rest = float(m.group(1)), m.group(2), m.group(3)
        if event == "sched_switch":
            sw = re.match(r"prev_comm=(.*?) prev_pid=\d+ prev_prio=\d+ "
                          r"prev_state=(\S+) ==> next_comm=(.*?) next_pid=",
                          rest)
            if not sw:
                continue
            prev, next_ = VCPU_COMM.fullmatch(sw.group(1)), \
                VCPU_COMM.fullmatch(sw.group(3))
            if prev:
                st = sw.group(2)
                state[int(prev.group(1))] = ("preempted" if st[0] == "R"
                                             else "blocking")
            if next_:
                state[int(next_.group(1))] = "running"
        elif start <= t <= end:
            v = re.search(r"vcpuid=(\d+)", rest)     # KVM's vCPU id
            kind = state.get(int(v.group(1)), "unknown") if v else "unknown"
            out[kind] += 1
    return out


def exit_reasons(trace, start, end):
    """L1 KVM's kvm_exit reasons between start and end (L1's uptime)."""
    out = {}
    for line in trace:
        m = re.search(r" ([0-9]+\.[0-9]+): kvm_exit: .*?reason (\S+)", line)
        if m and start <= float(m.group(1)) <= end:
            out[m.group(2)] = out.get(m.group(2), 0) + 1
    return out


def l1_hists(text):
    """L1's histograms (l1-init.sh's HIST) as {event: {key: hits}}, the
    key the line's fields before hitcount ("ecx: 0x830 write: 1"), and
    "L1 HZ": {"jiffies/s": L1's tick rate over the window}."""
    out, cur = {}, None
    clocks = []
    for line in text.splitlines():
        m = re.fullmatch(r"clock ([0-9]+) ([0-9.]+)", line.strip())
        if m:
            clocks.append((int(m.group(1)), float(m.group(2))))
            continue
        if line.startswith("## "):
            cur = out.setdefault(line[3:].strip(), {})
            continue
        m = re.match(r"\{\s*(.*?)\s*\}\s*hitcount:\s*([0-9]+)", line)
        if m and cur is not None:
            key = " ".join(m.group(1).replace(",", " ").split())
            cur[key] = cur.get(key, 0) + int(m.group(2))
    if len(clocks) == 2 and clocks[1][1] > clocks[0][1]:
        # L1's tick rate over the window: jiffies per second
        out["L1 HZ"] = {"jiffies/s": round((clocks[1][0] - clocks[0][0]) /
                                           (clocks[1][1] - clocks[0][1]))}
    return out


def tb_events(sched_trace, exit_trace):
    """l1-init.sh's tb_events for run_pipeline()'s extra traces."""
    events = (["sched:sched_switch"] if sched_trace else []) + \
        (["kvm:kvm_exit"] if exit_trace else [])
    return " tb_events=" + ",".join(events) if events else ""


def irq_row(line):
    """The per-CPU counts of a /proc/interrupts row, summed."""
    total = 0
    for field in line.split()[1:]:
        if not field.isdigit():
            break
        total += int(field)
    return total


def nvme_irqs(text):
    """Sum of the nvme rows of /proc/interrupts in text."""
    return sum(irq_row(l) for l in text.splitlines() if "nvme" in l)


def unstamp(out):
    """A stamped run's stdout without the stamps."""
    return "\n".join(text for _, _, text in stamped_lines(out))


def section(out, name):
    m = re.search(r"=== POSTED %s ===\n(.*?)(?:^===|\Z)" % name, out,
                  re.S | re.M)
    return m.group(1) if m else ""



def stopped_early(res):
    """A reset of L2 after its marker, before the reads finished (its
    QEMU exits 0 under -no-reboot): repeated like the test bed's own
    flakes; None otherwise."""
    l2 = res["l2"]
    if l2["rc"] == 0 and "=== POSTED END ===" not in l2["stdout"]:
        return "L2 stopped before its reads finished (rc 0, as on a reset)"
    return None


def run_pipeline(qemu, hostdir, vcpus=2, reads=2000, kvm_amd="avic=1",
                 run_timeout=None, regime="blocking", sched_trace=False,
                 exit_trace=False, hist=False, l2_append="",
                 sched_features=(), l2_hostdir=None):
    """One run; returns {"res": the test bed's result, "l0_first",
    "l0_last": L0's counters, "l2": {"before", "after": nvme interrupts,
    "rows": the nvme rows after, "dd": dd's lines, "seconds": the reads'
    time, "l1_exits": L1 KVM's exits meanwhile}, "trace": L1's trace
    counts, "l1_ga_irqs": L1's AMD-Vi GA row or None}.  reads per
    reader, one reader per vCPU; run_timeout: L1's limit for the L2
    run (default: the test bed's, plus 60 s per vCPU above 2, since
    L0 and L1 have 2 and oversubscribed L2s boot slower).  sched_trace:
    L1 traces sched_switch too, and "ga_log_split" is ga_log_split()
    over the reads (else None).  exit_trace: L1 traces kvm_exit too, and
    "exit_reasons" counts its reasons over the reads (else None).
    hist: L1 counts, during the reads, the MSR accesses its KVM handled
    (by MSR), its interrupt vectors and device IRQs: "hists" is
    l1_hists() of them (else None).  l2_append: more of L2's kernel
    command line.  sched_features: scheduler features L1 and L2 set
    (e.g. NO_HRTICK).  l2_hostdir: L2's kernel and nvme modules from
    this host directory instead of L1's (the same kernel by default)."""
    if run_timeout is None:
        run_timeout = RUN_TIMEOUT + 60 * max(0, vcpus - 2)
    with tempfile.TemporaryDirectory(prefix="kvm-nested-posted-") as tmp:
        disk = os.path.join(tmp, "nvme.img")
        with open(disk, "wb") as f:
            f.truncate(max(64 << 20, vcpus * reads * 4096))
        sock = os.path.join(tmp, "l0.qmp")
        l0_args = avic.L0_ARGS + [
            "-drive", "file=%s,format=raw,if=none,id=nv0" % disk,
            "-device", "nvme,drive=nv0,serial=posted0,addr=05.0",
            "-qmp", "unix:%s,server=on,wait=off" % sock,
            "-action", "shutdown=pause"]
        l2 = {"args": avic.L2_AVIC_ARGS +
              ["-M", "q35,kernel-irqchip=split", "-cpu", "host,+x2apic",
               "-smp", str(vcpus), "-device", "vfio-pci,host=" + BDF] +
              # vCPU threads named "CPU n/KVM" in L1's sched_switch
              (["-name", "debug-threads=on"] if sched_trace else []) +
              # the last -append counts: L2_ARGS's, and more
              (["-append", L2_ARGS[L2_ARGS.index("-append") + 1] + " " +
                l2_append] if l2_append else []),
              "kernel": os.path.join(l2_hostdir or hostdir, "vmlinuz"),
              "files": l2_files(tmp, l2_hostdir or hostdir, vcpus, reads,
                                regime, hist,
                                sched_features),
              "stamp": True,
              # L2's QEMU asked while the readers run (vectors set up)
              "qmp": [{"execute": "x-query-kvm-apicv"}],
              "qmp_at": "=== POSTED BEFORE ==="}
        if hist:
            l2["hist_window"] = ["=== POSTED BEFORE ===",
                                 "=== POSTED AFTER ==="]
        poller = StatsPoller(sock)
        poller.start()
        try:
            res = run_testbed(qemu, qemu, hostdir, [], l2=l2,
                              kvm_amd_params=kvm_amd,
                              l0_extra_args=l0_args,
                              timeout=run_timeout + 180,
                              l0_iommu=L0_IOMMU,
                              # a ring that keeps the whole L2 run
                              l1_append="tb_vfio=%s tb_trace_kb=8192%s"
                              % (BDF, tb_events(sched_trace, exit_trace)) +
                              (" tb_hist=1" if hist else "") +
                              (" tb_sched_features=" +
                               ",".join(sched_features)
                               if sched_features else ""),
                              run_timeout=run_timeout,
                              after=[HOST_STATS], retry=stopped_early,
                              l0_shutdown_grace=5)
        finally:
            poller.stop = True
        poller.join(5)
    raw = res["l2"]["stdout"]
    out = unstamp(raw)
    stamps = {}
    jiffies = []
    for uptime, exits, text in stamped_lines(raw):
        m = re.fullmatch(r"=== POSTED (\w+) ===", text)
        if m:
            stamps[m.group(1)] = (uptime, exits)
        m = re.fullmatch(r"L2 JIFFIES ([0-9]+)", text)
        if m:
            jiffies.append((int(m.group(1)), uptime))
    l2_hz = None
    if len(jiffies) == 2 and jiffies[1][1] > jiffies[0][1]:
        l2_hz = round((jiffies[1][0] - jiffies[0][0]) /
                      (jiffies[1][1] - jiffies[0][1]))
    seconds = l1_exits = None
    if "BEFORE" in stamps and "AFTER" in stamps:
        seconds = stamps["AFTER"][0] - stamps["BEFORE"][0]
        if None not in (stamps["BEFORE"][1], stamps["AFTER"][1]):
            l1_exits = stamps["AFTER"][1] - stamps["BEFORE"][1]
    ga_rows = [l.strip() for l in res["l1"]["interrupts"].splitlines()
               if l.strip().endswith("-GA")]
    host = {}
    reply = (res["cases"]["host-stats"]["qmp"] or [None])[0] or {}
    for prov in reply.get("return", []):
        for st in prov.get("stats", []):
            host[st["name"]] = st["value"]
    return {"res": res, "l0_first": poller.first, "stamps": stamps,
            "l0_last": poller.last if poller.final else None,
            "l1_host_stats": host,
            "apicv": (res["l2"]["qmp"] or [None])[0],
            "l2": {"before": nvme_irqs(section(out, "BEFORE")),
                   "after": nvme_irqs(section(out, "AFTER")),
                   "rows": section(out, "AFTER"),
                   "dd": [l[3:] for l in out.splitlines()
                          if l.startswith("DD ")],
                   "finished": "=== POSTED END ===" in out,
                   "out": out, "seconds": seconds, "l1_exits": l1_exits,
                   # L2's tick rate during the reads (jiffies per second)
                   "hz": l2_hz},
           "trace": avic.trace_counts(res["l2"]["trace"]),
           "ga_log_split": (ga_log_split(res["l2"]["trace"],
                                         stamps["BEFORE"][0],
                                         stamps["AFTER"][0])
                            if sched_trace and "BEFORE" in stamps and
                            "AFTER" in stamps else None),
           "exit_reasons": (exit_reasons(res["l2"]["trace"],
                                         stamps["BEFORE"][0],
                                         stamps["AFTER"][0])
                            if exit_trace and "BEFORE" in stamps and
                            "AFTER" in stamps else None),
           "hists": l1_hists(res["l2"]["hist"]) if hist else None,
           "l1_ga_irqs": (sum(irq_row(l) for l in ga_rows)
                          if ga_rows else None)}
