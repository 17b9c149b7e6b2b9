# SPDX-License-Identifier: GPL-2.0-or-later
"""Nested KVM test bed: a Debian kernel (tests/guest/fetch-kvm-host.sh)
runs as a real KVM host (L1, kvm_amd) under an L0 QEMU with TCG, and
runs an L1 QEMU (normally the fork's binary) on KVM once per case,
driven through QMP on stdio, then optionally boots an L2 Linux guest.
KVM's tracepoints in L1 (kvm_apicv_inhibit_changed, kvm_pi_irte_update,
kvm_avic_*) show what KVM really did for each run.

    from testbed import run_testbed
    res = run_testbed(qemu, qemu, hostdir, [
        {"name": "q35", "args": ["-accel", "kvm", "-M", "q35", "-S"],
         "qmp": [{"execute": "query-kvm"}]}])

The L1 side is l1-init.sh; it reports on L1's second serial port.
"""

import base64
import ctypes
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from initramfs import pack

# verdict(): shared with the other x86 guest tests, re-exported here
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "x86"))
from guest_output import verdict  # noqa: E402,F401

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "scripts"))
from qmp import QMPConnection, QMPError  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
L2_MARKER = "KVM-NESTED-L2-UP"
# x-southbridge=on: Linux 7.x as L1 keeps interrupt remapping
# (docs/amd-iommu-ga.md)
L0_IOMMU = "amd-iommu,intremap=on,x-southbridge=on"
RUN_TIMEOUT = 120          # seconds, each L1 QEMU run inside L1
FIRMWARE = ["/usr/share/seabios/bios-256k.bin",
            "/usr/share/qemu/kvmvapic.bin",
            "/usr/share/qemu/linuxboot_dma.bin",
            "/usr/share/qemu/multiboot_dma.bin"]
L1_QEMU_ARGS = ["-L", "/fw", "-display", "none", "-nodefaults"]
L2_ARGS = ["-accel", "kvm", "-M", "q35", "-cpu", "host", "-smp", "2",
           "-m", "256M", "-kernel", "/l2/vmlinuz", "-initrd", "/l2/initrd",
           "-append", "console=ttyS0 quiet panic=-1 no_timer_check",
           "-serial", "stdio",
           "-no-reboot"]


class TestbedError(Exception):
    """L0, L1 or a QEMU run in L1 failed (see run_testbed); console
    holds L1's kernel console, report what L1 wrote of its report
    (l1-init.sh), diagnostics L0's registers and backtraces where
    taken."""

    def __init__(self, msg, console="", report="", diagnostics=""):
        super().__init__(msg)
        self.console = console
        self.report = report
        self.diagnostics = diagnostics

    def report_end(self):
        """Where L1's report stops: its last marker and how many
        bytes follow it."""
        marks = list(re.finditer(r"=== (.*) ===", self.report))
        if not marks:
            return "no marker in %d bytes" % len(self.report)
        return "last marker %r, %d bytes after it" % (
            marks[-1].group(1), len(self.report) - marks[-1].end())


def _copy(src, root, dst=None):
    dst = os.path.join(root, (dst or src).lstrip("/"))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy(src, dst)
    return dst


def _add_busybox_init(hostdir, root, script):
    _copy(os.path.join(hostdir, "busybox"), root, "bin/busybox")
    init = _copy(os.path.join(HERE, script), root, "init")
    os.chmod(init, 0o755)


def _add_qemu(qemu, root):
    """The binary without debug info as /usr/bin/qemu-system-x86_64,
    with its shared libraries and loader at the paths ldd names."""
    dst = os.path.join(root, "usr/bin/qemu-system-x86_64")
    os.makedirs(os.path.dirname(dst))
    subprocess.run(["strip", "--strip-debug", "-o", dst, qemu], check=True)
    ldd = subprocess.run(["ldd", qemu], check=True, capture_output=True,
                         text=True).stdout
    for lib in re.findall(r"(/\S+) \(0x", ldd):
        _copy(lib, root)


def _l2_initrd(hostdir, path, files=None):
    """L2's initramfs; files: {path in L2: host file}, e.g. /l2-run,
    which l2-init.sh runs after the marker if present."""
    with tempfile.TemporaryDirectory() as root:
        _add_busybox_init(hostdir, root, "l2-init.sh")
        for dst, src in (files or {}).items():
            os.chmod(_copy(src, root, dst), 0o755)
        pack(root, path)


def _write_run(root, index, name, args, qmp=None, stamp=False,
               qmp_at=None, hist_window=None):
    d = os.path.join(root, "runs", "%02d" % index)
    os.makedirs(d)
    with open(os.path.join(d, "name"), "w") as f:
        f.write(name)
    if stamp:
        # l1-init.sh prefixes each stdout line with L1's uptime and
        # KVM's exit count (debugfs kvm/exits, all VMs) at that moment
        open(os.path.join(d, "stamp"), "w").close()
    if hist_window is not None:
        # with tb_hist in L1's command line: L1's histograms count from
        # the first text's line of stdout to the second's (its HIST)
        if not stamp or len(hist_window) != 2:
            raise ValueError("run %s: hist_window wants a stamped run and "
                             "two texts" % name)
        with open(os.path.join(d, "hist_window"), "w") as f:
            f.writelines(t + "\n" for t in hist_window)
    if stamp and qmp is not None and qmp_at is None:
        raise ValueError("run %s: a stamped run's QMP needs qmp_at" % name)
    if qmp_at is not None:
        # a stamped run's QMP: sent to a pipe monitor once its stdout
        # shows qmp_at (a text, or a list of texts: the n-th command
        # when the n-th shows), the replies reported as its QMP section
        with open(os.path.join(d, "qmp_at"), "w") as f:
            f.writelines(t + "\n" for t in
                         ([qmp_at] if isinstance(qmp_at, str) else qmp_at))
        args = list(args) + ["-chardev", "pipe,id=tbq,path=/tmp/tbq",
                             "-mon", "chardev=tbq,mode=control"]
    with open(os.path.join(d, "args"), "w") as f:
        f.writelines(a + "\n" for a in L1_QEMU_ARGS + list(args))
    if qmp is not None:
        cmds = ([{"execute": "qmp_capabilities", "id": "cap"}] +
                [dict(c, id=i) for i, c in enumerate(qmp)] +
                ([] if qmp_at is not None else
                 [{"execute": "quit", "id": "quit"}]))
        with open(os.path.join(d, "qmp"), "w") as f:
            f.writelines(json.dumps(c) + "\n" for c in cmds)


def build_l1_initrd(qemu_l1, hostdir, cases, l2, path, after=()):
    """Write L1's initramfs (uncompressed cpio) to path: the runs of
    cases, then L2's, then those of after."""
    with tempfile.TemporaryDirectory() as root:
        _add_busybox_init(hostdir, root, "l1-init.sh")
        shutil.copytree(os.path.join(hostdir, "modules"),
                        os.path.join(root, "modules"))
        _copy(os.path.join(hostdir, "modules.order"), root,
              "modules/modules.order")
        _add_qemu(qemu_l1, root)
        for fw in FIRMWARE:
            _copy(fw, root, "fw/" + os.path.basename(fw))
        for i, case in enumerate(list(cases) + list(after)):
            if not re.fullmatch(r"[A-Za-z0-9_.+-]+", case["name"]) or \
                    case["name"] == "l2":
                raise ValueError("bad case name %r" % case["name"])
            if i < len(cases):
                _write_run(root, i, case["name"], case["args"],
                           case.get("qmp", []), case.get("stamp", False))
        if l2 is not None:
            _copy(l2.get("kernel") or os.path.join(hostdir, "vmlinuz"),
                  root, "l2/vmlinuz")
            _l2_initrd(hostdir, os.path.join(root, "l2/initrd"),
                       l2.get("files"))
            _write_run(root, len(cases), "l2", L2_ARGS + list(l2["args"]),
                       l2.get("qmp"), stamp=l2.get("stamp", False),
                       qmp_at=l2.get("qmp_at"),
                       hist_window=l2.get("hist_window"))
        for i, case in enumerate(after):
            _write_run(root, len(cases) + 1 + i, case["name"],
                       case["args"], case.get("qmp", []))
        pack(root, path)


def stamped_lines(stdout):
    """(uptime, exits, text) for each line of a stamped run's stdout
    (l1-init.sh's stamp: L1's uptime in seconds and KVM's exit count,
    None where debugfs had none, before the line)."""
    for line in stdout.splitlines():
        m = re.match(r"([0-9.]+) ([0-9]+|-) ?(.*)$", line.rstrip("\r"))
        if m:
            yield (float(m.group(1)),
                   int(m.group(2)) if m.group(2) != "-" else None,
                   m.group(3))


def parse_report(text):
    """Split the report of l1-init.sh into {(scope..., tag): bytes}:
    ("L1", "UNAME"), ("CASE", name, "STDOUT"), ...; an RC marker gives
    ("CASE", name, "RC") -> the number as text."""
    sections = {}
    cur = None
    for line in text.replace("\r", "").splitlines():
        m = re.fullmatch(r"=== (.*) ===", line)
        if m:
            words = m.group(1).split()
            if words[-2:-1] == ["RC"]:
                sections[tuple(words[:-1])] = words[-1].encode()
                cur = None
            else:
                cur = tuple(words)
                sections[cur] = []
        elif cur is not None:
            # a list, joined once: += on a str held in the dict copies
            # it each time (minutes for a large trace)
            sections[cur].append(line)
    return {k: v if isinstance(v, bytes) else base64.b64decode("".join(v))
            for k, v in sections.items()}


def _run_result(sec, name, ncmds):
    def text(tag):
        return sec.get(("CASE", name, tag), b"").decode(errors="replace")

    replies = {}
    events = []
    for line in (text("STDOUT") + "\n" + text("QMP")).splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if "event" in msg:
            events.append(msg)
        elif "id" in msg:
            replies[msg["id"]] = msg
    rc = sec.get(("CASE", name, "RC"))
    return {"rc": int(rc) if rc is not None else None,
            "stdout": text("STDOUT"), "stderr": text("STDERR"),
            "qmp": [replies.get(i) for i in range(ncmds)],
            "events": events,
            "trace": [l for l in text("TRACE").splitlines() if l.strip()],
            "hist": text("HIST"),
            "hang": _monitor_text(text("HANG"))}


def _monitor_text(text):
    """An HMP monitor's output without its readline echo: each prompt
    line keeps only the command as finally typed."""
    lines = []
    for line in text.splitlines():
        if line.startswith("(qemu) "):
            pieces = [p for p in re.split(r"\x1b\[[0-9;]*[A-Za-z]",
                                          line[7:]) if p]
            line = "(qemu) " + (pieces[-1] if pieces else "")
        lines.append(line)
    return "\n".join(lines)


def l2_stopped(run):
    """Why an L2 run (an entry of res["cases"] or res["l2"]) ended
    before its marker, if it ended by a reset (its QEMU exits 0 under
    -no-reboot) or hung until l1-init.sh killed it (rc 137); None
    otherwise."""
    if run is None or L2_MARKER in (run.get("stdout") or ""):
        return None
    if run.get("rc") == 0:
        return "L2 stopped mid-boot (a reset)"
    if run.get("rc") == 137:
        return "L2 hung (killed after %d s)" % RUN_TIMEOUT
    return None


def _print_hang(run):
    """What L2's QEMU monitor showed just before a hung L2 was killed
    (l1-init.sh's hang_dump), if it was."""
    if run and run.get("hang"):
        print("--- L2's registers and local APICs before the kill ---")
        print(run["hang"].rstrip(), flush=True)


def repeat_budget():
    """How many times one run_testbed() call may repeat a run whose L2
    reset or hung: TESTBED_REPEATS, 0 when unset (scripts/run-checks.sh
    sets it from REPEAT_BUDGET in the Makefile and fails make check when
    all tests together repeated more often than that)."""
    value = os.environ.get("TESTBED_REPEATS", "0")
    if not value.isdigit():
        raise ValueError("TESTBED_REPEATS=%r: want a count (0, 1, ...)"
                         % value)
    return int(value)


def _cause_field(text):
    return json.dumps(" ".join(text.split())[:300])


def run_testbed(qemu_l0, qemu_l1, hostdir, cases, l2=None, l2_boot=True,
                kvm_amd_params="avic=1", l0_extra_args=(), timeout=300,
                retry=None, l0_iommu=L0_IOMMU, l1_append="",
                run_timeout=RUN_TIMEOUT, after=(), l0_shutdown_grace=0):
    """Boot L1 under qemu_l0, run each case with qemu_l1 in L1, then
    (if l2_boot) an L2 guest with l2["args"] added (l2 may also have
    "kernel", a kernel image instead of HOSTDIR's, "files" for its
    initramfs, "stamp" for stamped stdout lines, and
    "qmp" commands sent once its stdout shows l2["qmp_at"], or the
    n-th command when it shows the n-th of a list of texts, their
    replies in res["l2"]["qmp"]; "hist_window", two texts of its
    stdout between which L1's histograms count when l1_append has
    tb_hist=1, reported in res["l2"]["hist"]).  A case is
    {"name": str, "args": [L1 QEMU args], "qmp": [commands]}; the
    L1 QEMU always gets -L /fw -display none -nodefaults, and -qmp stdio
    fed with qmp_capabilities, the commands (ids 0, 1, ...) and quit.
    Returns {"l1": {...}, "cases": {name: {...}}, "l2": {...}, "raw",
    "console"}.
    l0_iommu: L0's IOMMU device; l1_append: more of L1's command line
    (l1-init.sh's tb_* options, e.g. tb_vfio=BDF to bind a device to
    vfio-pci before the runs); run_timeout: seconds L1 gives each run
    of its QEMU before killing it; after: cases run after the L2 run
    (with l2_boot), reported in "cases" too; l0_shutdown_grace: seconds
    L0 stays paused after L1 shut down, for a QMP client of the caller's
    (l0_extra_args) to read it and quit it.

    Never repeated: L0 timing out or failing, L1 stopping before its
    report ended (a triple fault, a reset, a panic) or hanging, a
    panic, BUG, Oops or WARNING on L1's console, a KVM error (internal
    error, entry failed, emulation failure) in any QEMU run inside L1.
    Each raises TestbedError after printing a "TESTBED-FAILURE" line
    naming the layer and the cause, L1's last console lines, L0's vCPU
    registers (HMP info registers -a) and, for a hang, L0's thread
    backtraces (gdb, where installed).

    Repeated only within repeat_budget() (0 unless TESTBED_REPEATS
    says otherwise): a run whose L2 reset or hung before its marker, or
    for which retry(res), the test's own check, returns a reason.  Each
    repeat prints one "TESTBED-REPEAT layer=L2 cause=..." line, which
    scripts/run-checks.sh counts; past the budget the last run's result
    is returned after a "TESTBED-FAILURE layer=L2" line, for the test
    to fail on."""
    budget = repeat_budget()
    for attempt in range(1, budget + 2):
        res = _run_testbed_once(qemu_l0, qemu_l1, hostdir, cases, l2,
                                l2_boot, kvm_amd_params, l0_extra_args,
                                timeout, l0_iommu, l1_append,
                                run_timeout, after, l0_shutdown_grace)
        why = l2_stopped(res.get("l2")) or (retry(res) if retry else None)
        if not why:
            return res
        why = why.replace("after %d s" % RUN_TIMEOUT,
                          "after %d s" % run_timeout)
        _print_hang(res.get("l2"))
        if attempt <= budget:
            print("TESTBED-REPEAT layer=L2 cause=%s run=%d budget=%d"
                  % (_cause_field(why), attempt, budget), flush=True)
            continue
        print("TESTBED-FAILURE layer=L2 cause=%s runs=%d"
              % (_cause_field(why), attempt), flush=True)
        return res


# L1's console: a line that means L1's kernel failed, though it may
# have gone on and finished its report.
L1_FAILURE = re.compile(r"Kernel panic|BUG:|Oops|general protection fault"
                        r"|WARNING: CPU:|watchdog: BUG|rcu_sched self-detected"
                        r"|INFO: task .* blocked")
# A QEMU run inside L1 (a case or L2): KVM could not run its guest.
L2_KVM_FAILURE = re.compile(r"KVM internal error|KVM: entry failed"
                            r"|emulation failure")


def _l1_failure_line(console):
    """The first line of L1's console that says its kernel failed, or
    None."""
    for line in console.splitlines():
        if L1_FAILURE.search(line):
            return line.strip()[-200:]
    return None


def _fail(layer, cause, console="", report="", diagnostics=""):
    """Print what helps with a failure, then raise TestbedError."""
    print("TESTBED-FAILURE layer=%s cause=%s" % (layer, _cause_field(cause)))
    tail = console.splitlines()[-40:]
    if tail:
        print("--- L1's last %d console lines ---" % len(tail))
        print("\n".join(tail))
    if diagnostics:
        print(diagnostics.rstrip())
    # TESTBED_KEEP=DIR: L1's whole console and report (its trace ring)
    # are kept there for a failure seen once in many runs
    keep = os.environ.get("TESTBED_KEEP")
    if keep:
        os.makedirs(keep, exist_ok=True)
        stem = os.path.join(keep, "failure-%s-%d" % (
            time.strftime("%Y%m%d-%H%M%S"), os.getpid()))
        for what, text in (("console", console), ("report", report)):
            with open("%s-%s.log" % (stem, what), "w") as f:
                f.write(text)
        print("--- kept in %s-{console,report}.log ---" % stem)
    print("--- end of the test bed's failure report ---", flush=True)
    raise TestbedError("%s: %s" % (layer, cause), console, report,
                       diagnostics)


class L0Watcher(threading.Thread):
    """Holds the test bed's own QMP connection to L0 (which runs with
    -action shutdown=pause): takes L0's vCPU registers when L1 resets
    itself (a triple fault under -no-reboot pauses L0 at the fault) or
    when asked (a hang), and quits L0 grace seconds after any shutdown
    unless someone else (posted.py's poller) did."""

    def __init__(self, path, proc, grace=0):
        super().__init__(daemon=True)
        self.path = path
        self.proc = proc
        self.grace = grace
        self.shutdown_reason = None
        self.registers = None
        self._want = threading.Event()
        self._answer = threading.Event()
        self._answer_text = None

    def run(self):
        conn = None
        while conn is None and self.proc.poll() is None:
            try:
                conn = QMPConnection.attach(self.path, "L0")
            except (OSError, QMPError):
                time.sleep(0.1)
        if conn is None:
            return
        quit_at = None
        try:
            while self.proc.poll() is None:
                if self._want.is_set():
                    self._want.clear()
                    self._answer_text = self._hmp(conn)
                    self._answer.set()
                if quit_at is not None and time.time() > quit_at:
                    conn.cmd("quit")
                    break
                ready = select.select([conn.sock], [], [], 0.2)[0]
                if not ready and b"\n" not in conn.buf:
                    continue
                msg = conn._recv()
                reason = msg.get("data", {}).get("reason", "?")
                # the first shutdown only, and not the quit of a test
                # bed thread (posted.py's poller) or of a signal
                if msg.get("event") == "SHUTDOWN" and \
                        self.shutdown_reason is None and \
                        reason not in ("host-qmp-quit", "host-signal"):
                    self.shutdown_reason = reason
                    if reason != "guest-shutdown":
                        self.registers = self._hmp(conn)
                    quit_at = time.time() + self.grace
        except (OSError, ValueError, QMPError):
            pass
        finally:
            conn.sock.close()
            self._answer.set()

    @staticmethod
    def _hmp(conn):
        try:
            out = ["--- L0: %s ---\n%s" % (c, conn.hmp(c))
                   for c in ("info status", "info cpus",
                             "info registers -a")]
            # each vCPU's stack top: the return addresses of what L1
            # was doing (a spinning CPU's callers)
            cpus = len(re.findall(r"CPU #\d+", out[1]))
            for i in range(cpus):
                out.append("--- L0: CPU %d: x /32gx $sp ---\n%s" % (
                    i, conn.cmd("human-monitor-command",
                                **{"command-line": "x /32gx $sp",
                                   "cpu-index": i})))
            # each vCPU's local APIC: IRR, ISR, the timer (a lost wake-up
            # of a halted L1 shows here)
            for i in range(cpus):
                out.append("--- L0: CPU %d: info lapic ---\n%s" % (
                    i, conn.cmd("human-monitor-command",
                                **{"command-line": "info lapic",
                                   "cpu-index": i})))
            return "\n".join(out)
        except (OSError, ValueError, QMPError) as e:
            return "--- L0: no monitor answer (%s) ---" % e

    def snapshot(self, timeout=30):
        """L0's registers now, from the watcher's connection; None if
        the monitor does not answer within timeout (a BQL deadlock)."""
        self._answer.clear()
        self._want.set()
        if self._answer.wait(timeout):
            return self._answer_text
        return None


# bound here, not in the forked child (no dlopen between fork and exec)
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def _die_with_parent():
    """In L0's child before exec: SIGKILL when the test's process dies
    (killed on its own, say by hand), so no L0 outlives its test."""
    _prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG


GDB_VCPU_STATE = """\
set $c = cpus_queue.tqh_first
while $c
  printf "vcpu %d: halted %d interrupt_request 0x%x hflags 0x%x \
hflags2 0x%x eflags 0x%lx\\n", $c->cpu_index, $c->halted, \
$c->interrupt_request, ((X86CPU *)$c)->env.hflags, \
((X86CPU *)$c)->env.hflags2, ((X86CPU *)$c)->env.eflags
  set $c = $c->node.tqe_next
end
"""


def _backtraces(pid):
    """All threads' backtraces of process pid, where gdb is installed."""
    gdb = shutil.which("gdb")
    if not gdb:
        return "--- L0 thread backtraces: gdb not installed ---"
    # and each vCPU's interrupt state, which HMP does not show: GIF is
    # bit 0 of hflags2, CPU_INTERRUPT_HARD bit 1 of interrupt_request
    with tempfile.NamedTemporaryFile("w", suffix=".gdb") as script:
        script.write(GDB_VCPU_STATE)
        script.flush()
        try:
            out = subprocess.run([gdb, "-p", str(pid), "-batch", "-nx",
                                  "-ex", "thread apply all bt 30",
                                  "-x", script.name],
                                 stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True,
                                 timeout=120).stdout
        except subprocess.TimeoutExpired:
            return "--- L0 thread backtraces: gdb timed out ---"
    keep = [l for l in out.splitlines()
            if l.startswith(("Thread ", "#", "vcpu "))]
    return "--- L0 thread backtraces ---\n" + "\n".join(keep)


def _run_testbed_once(qemu_l0, qemu_l1, hostdir, cases, l2, l2_boot,
                      kvm_amd_params, l0_extra_args, timeout,
                      l0_iommu=None, l1_append="",
                      run_timeout=RUN_TIMEOUT, after=(),
                      l0_shutdown_grace=0):
    l2 = (l2 or {"args": []}) if l2_boot else None
    with tempfile.TemporaryDirectory(prefix="kvm-nested-") as tmp:
        initrd = os.path.join(tmp, "l1.cpio")
        build_l1_initrd(qemu_l1, hostdir, cases, l2, initrd, after)
        console = os.path.join(tmp, "console.log")
        report = os.path.join(tmp, "report.log")
        sock = os.path.join(tmp, "tb-l0.qmp")
        # nokaslr: the RIPs of a failure report (L0's registers and
        # stacks) are the same in every boot of the pinned kernel, so
        # any L1's /proc/kallsyms names them
        cmdline = ('console=ttyS0 panic=-1 nokaslr tb_kvm_amd="%s" '
                   'tb_timeout=%d' % (kvm_amd_params, run_timeout))
        # TESTBED_L1_APPEND: more of L1's command line, e.g.
        # tb_events=kvm:kvm_exit tb_trace_kb=512 (l1-init.sh)
        for more in (l1_append, os.environ.get("TESTBED_L1_APPEND")):
            if more:
                cmdline += " " + more
        cmd = [qemu_l0, "-accel", "tcg,thread=multi", "-M", "q35",
               "-cpu", "EPYC-Rome", "-smp", "2", "-m", "2G",
               "-device", l0_iommu or L0_IOMMU, "-nodefaults",
               "-display", "none", "-no-reboot",
               "-action", "shutdown=pause",
               "-qmp", "unix:%s,server=on,wait=off" % sock,
               "-serial", "file:" + console, "-serial", "file:" + report,
               "-kernel", os.path.join(hostdir, "vmlinuz"),
               "-initrd", initrd, "-append", cmdline] + list(l0_extra_args)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT,
                                preexec_fn=_die_with_parent)
        watcher = L0Watcher(sock, proc, l0_shutdown_grace)
        watcher.start()
        diagnostics = ""
        try:
            l0_out = proc.communicate(timeout=timeout)[0].decode(
                errors="replace")
            error = None if proc.returncode == 0 else \
                "L0 exited with %d: %s" % (proc.returncode, l0_out[-2000:])
        except subprocess.TimeoutExpired:
            error = "L0 timed out after %d s" % timeout
            diagnostics = (watcher.snapshot() or
                           "--- L0: the monitor did not answer ---")
            diagnostics += "\n" + _backtraces(proc.pid)
            proc.kill()
            proc.communicate()
        watcher.join(10)
        with open(console, errors="replace") as f:
            console_text = f.read()
        raw = ""
        if os.path.exists(report):
            with open(report, errors="replace") as f:
                raw = f.read()
    panic = _l1_failure_line(console_text)
    if error:
        _fail("L0", error + ("; L1 said: " + panic if panic else ""),
              console_text, raw, diagnostics)
    if "=== L1 END ===" not in raw:
        how = {"guest-reset": "L1 reset itself (a triple fault or a "
                              "reboot under -no-reboot)",
               "guest-panic": "L1 panicked"}.get(
            watcher.shutdown_reason,
            "L0 shut down (%s)" % watcher.shutdown_reason)
        cause = "L1 stopped before its report ended: %s; %s; %s" % (
            how, panic or "no panic on the console",
            TestbedError("", report=raw).report_end())
        _fail("L1", cause, console_text, raw, watcher.registers or "")
    if panic:
        _fail("L1", "L1's kernel failed: " + panic, console_text, raw)

    sec = parse_report(raw)

    def l1(tag):
        return sec.get(("L1", tag), b"").decode(errors="replace")

    params = dict(l.split("=", 1) for l in l1("PARAMS").splitlines()
                  if "=" in l)
    res = {"l1": {"uname": l1("UNAME").strip(), "params": params,
                  "iommu_features": l1("IOMMU").strip() or None,
                  "insmod": l1("INSMOD"), "events": l1("EVENTS").split(),
                  "vfio": l1("VFIO"), "interrupts": l1("INTERRUPTS"),
                  "dmesg": l1("DMESG")},
           "cases": {c["name"]: _run_result(sec, c["name"],
                                            len(c.get("qmp") or []))
                     for c in list(cases) + list(after)},
           "raw": raw, "console": console_text}
    if l2 is not None:
        run = _run_result(sec, "l2", len(l2.get("qmp") or []))
        res["l2"] = {"rc": run["rc"], "console": run["stdout"],
                     "stdout": run["stdout"],
                     "stderr": run["stderr"], "trace": run["trace"],
                     "qmp": run["qmp"], "hang": run["hang"],
                     "hist": run["hist"],
                     "booted": L2_MARKER in run["stdout"]}
    kvm_error = _kvm_error(res)
    if kvm_error:
        _fail("L2", kvm_error, console_text, raw)
    return res


def _kvm_error(res):
    """What the first QEMU run in L1 (a case or L2) that reported a KVM
    error said, or None."""
    runs = dict(res["cases"])
    if res.get("l2") is not None:
        runs["l2"] = res["l2"]
    for name, run in runs.items():
        for line in (run.get("stderr") or "").splitlines():
            if L2_KVM_FAILURE.search(line):
                return "%s: QEMU in L1 reported %r (rc %s); its stderr " \
                    "ends: %s" % (name, line.strip(), run.get("rc"),
                                  run["stderr"][-1500:])
    return None
