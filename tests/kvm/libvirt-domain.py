#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Start guests through the real libvirt (Debian's 11.3 from
bookworm-backports, scripts/install-deps.sh) with the fork's installed
qemu-irq-fork-system-x86_64 (make install) as <emulator>, confined the
way Debian ships libvirt: QEMU runs as the unprivileged libvirt-qemu
user and libvirt hands it its files by dynamic ownership.  On /dev/kvm
where it exists, <domain type='kvm'>: the fork's accelerator
options reach QEMU through <qemu:commandline> and x-query-kvm-apicv
answers through `virsh qemu-monitor-command`.  Everywhere, also without
/dev/kvm, <domain type='qemu'> (TCG): the confinement itself.

The test runs its own libvirtd, isolated from the system's: a private
mount and PID namespace (unshare) with temporary directories bound over
/etc/libvirt, /run/libvirt, /var/lib/libvirt, /var/log/libvirt and
/var/cache/libvirt, Debian's qemu.conf defaults (QEMU as libvirt-qemu,
dynamic_ownership and remember_owner on) with what a container without
systemd lacks turned off (no AppArmor, no mount namespace, no cgroups,
QEMU's output to a plain file instead of virtlogd), and this script itself as
the namespace's init, which reaps QEMU and kills whatever is left when
libvirtd ends.  virsh reaches the daemon through its socket in the
temporary directory.  When this script dies, the namespace dies with
it (PR_SET_PDEATHSIG on unshare, --kill-child), so no daemon or QEMU
survives it; the whole run is bounded by an alarm.

Cases, without KVM: confined-tcg, a q35 <domain type='qemu'> with a
disk image that root owns with mode 0600: QEMU runs as libvirt-qemu,
the image is libvirt-qemu's while the domain runs and root's again
after it, QEMU has it open, query-stats of the irq provider (targets
irq-vcpu and host) and x-query-kvm-apicv answer (kvm false), so does HMP info kvm-apicv.

Cases on KVM (a SUBTEST-SKIP each without a usable /dev/kvm): a plain
q35 domain (query: kvm true, requested auto; HMP
info kvm-apicv), -accel kvm,device-posted-irqs=off through
<qemu:commandline>, <timer name='pit'> tickpolicy delay vs discard
(pit-reinject predicted, certain, exactly with delay on an AMD host),
and -accel kvm,apicv=on refused with QEMU's error in libvirt's
message when the host offers no APIC virtualization (on a host that
offers it, that case is skipped: a "SUBTEST-SKIP: apicv-on: <reason>"
line, which scripts/run-checks.sh counts as a skip).

Usage: libvirt-domain.py INSTALLED-QEMU-IRQ-FORK-SYSTEM-X86_64
(its folders must let libvirt-qemu in: scripts/run-checks.sh installs
into a fresh folder of mode 0755)
(LIBVIRT_DOMAIN_KEEP=1 keeps the temporary directory: configuration,
libvirtd.log, log/qemu/NAME.log with QEMU's command lines.)
Prints one line per case and "N passed, N failed, N skipped"; exits 0
or 1, or 77 (skip) with the reason when libvirt is not usable here.
"""

import ctypes
import grp
import json
import os
import pwd
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOTAL_TIMEOUT = 300     # seconds for the whole run
CMD_TIMEOUT = 90        # seconds for one virsh command
DAEMON_TIMEOUT = 30     # seconds for libvirtd to answer

# Where the private directories go, relative to the temporary directory.
BINDS = [("etc", "/etc/libvirt"), ("run", "/run/libvirt"),
         ("lib", "/var/lib/libvirt"), ("log", "/var/log/libvirt"),
         ("cache", "/var/cache/libvirt")]

LIBVIRTD_CONF = """\
# private libvirtd of tests/kvm/libvirt-domain.py
auth_unix_ro = "none"
auth_unix_rw = "none"
log_outputs = "3:file:/var/log/libvirt/libvirtd.log"
"""

# Debian's defaults (user and group libvirt-qemu, dynamic_ownership and
# remember_owner on) as they are; a container without systemd has no
# machined, no cgroup delegation, no virtlogd and no AppArmor (no
# apparmor_parser, no profiles loaded): those are turned off.
QEMU_UID_NAME = "libvirt-qemu"
QEMU_CONF = """\
# private qemu.conf of tests/kvm/libvirt-domain.py
security_driver = "none"
namespaces = [ ]
cgroup_controllers = [ ]
stdio_handler = "file"
"""

DOMAIN = """\
<domain type='{type}' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>{name}</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='q35'>hvm</type></os>
  <features><acpi/><apic/>{features}</features>
{clock}  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>{emulator}</emulator>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
{devices}  </devices>
{qemu}</domain>
"""


def qemu_user_can_open_kvm():
    """Can libvirt's QEMU user (with its groups) read and write /dev/kvm?"""
    st = os.stat("/dev/kvm")
    user = pwd.getpwnam(QEMU_UID_NAME)
    groups = {user.pw_gid} | {g.gr_gid for g in grp.getgrall()
                              if QEMU_UID_NAME in g.gr_mem}
    if st.st_uid == user.pw_uid:
        return st.st_mode & 0o600 == 0o600
    if st.st_gid in groups:
        return st.st_mode & 0o060 == 0o060
    return st.st_mode & 0o006 == 0o006


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def subtest_skip(case, why):
    """One case not run while the others are: the line that
    scripts/run-checks.sh counts as one skip."""
    print("SUBTEST-SKIP: %s: %s" % (case, why))
    sys.stdout.flush()


# ---------------------------------------------------------------------
# Inside the namespace: mounts, libvirtd, reaping.

def ns_init(tmp):
    for sub, target in BINDS:
        subprocess.run(["mount", "--bind", os.path.join(tmp, sub), target],
                       check=True)
    # KVM's tracepoints for the query's "observed" (private mount, so
    # the host's /sys/kernel/tracing stays as it is).
    if not os.path.exists("/sys/kernel/tracing/events"):
        subprocess.run(["mount", "-t", "tracefs", "nodev",
                        "/sys/kernel/tracing"], stderr=subprocess.DEVNULL)
    out = open(os.path.join(tmp, "libvirtd.out"), "wb")
    daemon = subprocess.Popen(
        ["libvirtd", "-f", "/etc/libvirt/libvirtd.conf",
         "-p", "/run/libvirt/libvirtd.pid"],
        stdin=subprocess.DEVNULL, stdout=out, stderr=out)

    def stop(signum, frame):
        try:
            daemon.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
        signal.alarm(10)    # then everything goes

    def kill_all(signum, frame):
        os.kill(-1, signal.SIGKILL)     # all of the namespace but us
        os._exit(1)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGALRM, kill_all)
    rc = 0
    while True:
        try:
            pid, status = os.wait()     # QEMU is re-parented to us
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if pid == daemon.pid:
            rc = os.waitstatus_to_exitcode(status)
            break
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os._exit(0 if rc == 0 else 1)


# ---------------------------------------------------------------------
# Outside: the daemon's life and virsh.

class Libvirt:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="libvirt-domain-")
        # QEMU (libvirt-qemu) reaches the disk image in here
        os.chmod(self.tmp, 0o711)
        self.uri = ("qemu:///system?socket=%s/run/libvirt-sock" % self.tmp)
        self.proc = None
        self.domains = []

    def setup(self):
        for sub, target in BINDS:
            os.makedirs(os.path.join(self.tmp, sub))
            os.makedirs(target, exist_ok=True)  # the mount point
        with open(os.path.join(self.tmp, "etc", "libvirtd.conf"), "w") as f:
            f.write(LIBVIRTD_CONF)
        with open(os.path.join(self.tmp, "etc", "qemu.conf"), "w") as f:
            f.write(QEMU_CONF)

    def start(self):
        libc = ctypes.CDLL(None, use_errno=True)

        def die_with_parent():
            libc.prctl(1, signal.SIGKILL)       # PR_SET_PDEATHSIG

        self.proc = subprocess.Popen(
            ["unshare", "--mount", "--pid", "--fork", "--mount-proc",
             "--kill-child=SIGTERM", sys.executable,
             os.path.abspath(__file__), "--ns-init", self.tmp],
            stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
        deadline = time.monotonic() + DAEMON_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return "libvirtd exited (%s): %s" % (self.proc.returncode,
                                                     self.daemon_log())
            if os.path.exists(os.path.join(self.tmp, "run", "libvirt-sock")):
                r = self.virsh("version", timeout=10)
                if r.returncode == 0:
                    return None
            time.sleep(0.2)
        return "libvirtd did not answer in %d s: %s" % (DAEMON_TIMEOUT,
                                                        self.daemon_log())

    def daemon_log(self, n=15):
        text = ""
        for name in ("libvirtd.out", "log/libvirtd.log"):
            try:
                with open(os.path.join(self.tmp, name),
                          errors="replace") as f:
                    text += f.read()
            except OSError:
                pass
        return " | ".join(text.strip().splitlines()[-n:])

    def domain_log(self, name):
        try:
            with open(os.path.join(self.tmp, "log", "qemu", name + ".log"),
                      errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def virsh(self, *args, timeout=CMD_TIMEOUT):
        try:
            return subprocess.run(["virsh", "-q", "-c", self.uri] +
                                  list(args), capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(e.cmd, -999, "",
                                               "timeout after %d s" % timeout)

    def define(self, name, xml):
        path = os.path.join(self.tmp, name + ".xml")
        with open(path, "w") as f:
            f.write(xml)
        r = self.virsh("define", path)
        if r.returncode == 0:
            self.domains.append(name)
        return r

    def qmp(self, name, cmd):
        """cmd: a command name, or a whole command (dict)."""
        r = self.virsh("qemu-monitor-command", name, json.dumps(
            cmd if isinstance(cmd, dict) else {"execute": cmd}))
        if r.returncode != 0:
            raise RuntimeError("qemu-monitor-command %s: %s"
                               % (cmd, r.stderr.strip()))
        reply = json.loads(r.stdout)
        if "return" not in reply:
            raise RuntimeError("%s: %s" % (cmd, reply))
        return reply["return"]

    def stop(self):
        for name in self.domains:
            self.virsh("destroy", name, timeout=30)
            self.virsh("undefine", name, timeout=30)
        if self.proc and self.proc.poll() is None:
            # unshare --fork ignores SIGTERM: tell our init (its child)
            # to stop libvirtd; SIGKILL to unshare is the fallback, which
            # --kill-child turns into SIGTERM to the init.
            try:
                with open("/proc/%d/task/%d/children"
                          % (self.proc.pid, self.proc.pid)) as f:
                    for pid in f.read().split():
                        os.kill(int(pid), signal.SIGTERM)
            except (OSError, ValueError):
                self.proc.kill()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if os.environ.get("LIBVIRT_DOMAIN_KEEP"):
            print("kept " + self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


def domain_xml(name, emulator, clock="", qemu_args=(), features="",
               devices="", qemu_extra="", domain_type="kvm"):
    qemu = ""
    if qemu_args:
        qemu = "  <qemu:commandline>\n"
        qemu += "".join("    <qemu:arg value='%s'/>\n" % a
                        for a in qemu_args)
        qemu += "  </qemu:commandline>\n"
    return DOMAIN.format(type=domain_type, name=name, emulator=emulator,
                         clock=clock,
                         qemu=qemu + qemu_extra, features=features,
                         devices=devices)


# The emulated Intel IOMMU with interrupt posting, as
# docs/intel-iommu-posted.md tells libvirt users to write it.
IOMMU_POSTED_FEATURES = "<ioapic driver='qemu'/>"
IOMMU_POSTED_DEVICES = """\
    <iommu model='intel'>
      <driver intremap='on' eim='on'/>
      <alias name='ua-iommu0'/>
    </iommu>
"""
IOMMU_POSTED_OVERRIDE = """\
  <qemu:override>
    <qemu:device alias='ua-iommu0'>
      <qemu:frontend>
        <qemu:property name='x-posted-intr' type='bool' value='true'/>
      </qemu:frontend>
    </qemu:device>
  </qemu:override>
"""


def pit_clock(policy):
    return ("  <clock offset='utc'>\n"
            "    <timer name='pit' tickpolicy='%s'/>\n"
            "  </clock>\n" % policy)


def qemu_cmdline(log):
    """The words of the last QEMU command line libvirt logged for a
    domain (one option per line, continued with a backslash)."""
    lines = log.splitlines()
    starts = [i for i, l in enumerate(lines) if ": starting up libvirt" in l]
    if not starts:
        return []
    words = []
    for l in lines[starts[-1] + 1:]:
        cont = l.endswith("\\")
        words += shlex.split(l.rstrip("\\"))
        if not cont:
            break
    return words


def qemu_uids(name):
    """The real and effective uids of the QEMU process of domain @name
    (found by its -name guest=NAME in this namespace's /proc; libvirt's
    runs in its own PID namespace), or [] when there is none."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                args = f.read().split(b"\0")
            if "guest=%s," % name not in " ".join(
                    a.decode(errors="replace") for a in args) + ",":
                continue
            with open("/proc/%s/status" % pid) as f:
                for line in f:
                    if line.startswith("Uid:"):
                        return sorted(set(int(u) for u in
                                          line.split()[1:3]))
        except OSError:
            continue
    return []


def cmdline_opts(words, opt):
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w == opt]


# ---------------------------------------------------------------------
# The cases.

class Run:
    def __init__(self, lv, emulator):
        self.lv = lv
        self.emulator = emulator
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.host = None    # the plain domain's query

    def result(self, name, ok, detail):
        print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail))
        sys.stdout.flush()
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    def define_and_start(self, name, xml):
        """Define and start a domain; on failure report it as the
        case's result (with the end of QEMU's log) and return False."""
        r = self.lv.define(name, xml)
        if r.returncode != 0:
            self.result(name, False, "define: " + r.stderr.strip())
            return False
        r = self.lv.virsh("start", name)
        if r.returncode != 0:
            log = self.lv.domain_log(name)
            self.result(name, False, "virsh start failed: %s | log: %s" % (
                r.stderr.strip(), " | ".join(log.strip().splitlines()[-5:])))
            return False
        return True

    def boot(self, name, clock="", qemu_args=()):
        """Define and start a domain; returns (started, message)."""
        r = self.lv.define(name, domain_xml(name, self.emulator, clock,
                                            qemu_args))
        if r.returncode != 0:
            return False, "define: " + r.stderr.strip()
        r = self.lv.virsh("start", name)
        if r.returncode != 0:
            return False, r.stderr.strip()
        return True, ""

    def query_case(self, name, check, clock="", qemu_args=(), hmp=False,
                   want_opts=()):
        """Start a domain, check its query with @check, that libvirt
        gave QEMU each (option, value) of @want_opts, destroy it."""
        ok, msg = self.boot(name, clock, qemu_args)
        if not ok:
            log = self.lv.domain_log(name)
            self.result(name, False, "virsh start failed: %s%s"
                        % (msg, " | log: " + " | ".join(
                            log.strip().splitlines()[-5:]) if log else ""))
            return None
        try:
            q = self.lv.qmp(name, "x-query-kvm-apicv")
            errs = check(q)
            if hmp:
                r = self.lv.virsh("qemu-monitor-command", "--hmp", name,
                                  "info kvm-apicv")
                text = r.stdout.strip()
                if r.returncode != 0 or not text or \
                   "unknown command" in text.lower():
                    errs.append("HMP info kvm-apicv: %r %s"
                                % (text[:200], r.stderr.strip()))
                else:
                    print("  HMP info kvm-apicv: " +
                          " | ".join(text.splitlines()[:4]))
            st = self.lv.virsh("domstate", name).stdout.strip()
            if st != "running":
                errs.append("domstate %r after the query" % st)
        except (RuntimeError, ValueError) as e:
            q, errs = None, [str(e)]
        cmd = qemu_cmdline(self.lv.domain_log(name))
        for opt, val in want_opts:
            if val not in cmdline_opts(cmd, opt):
                errs.append("libvirt did not pass %s %s" % (opt, val))
        d = self.lv.virsh("destroy", name)
        if d.returncode != 0:
            errs.append("destroy: " + d.stderr.strip())
        detail = ("; ".join(errs) if errs else "ok") + \
            " [-accel %s%s]" % (
                " -accel ".join(cmdline_opts(cmd, "-accel")) or "?",
                "".join(" -global " + g for g in cmdline_opts(cmd, "-global")
                        if g.startswith("kvm-pit")))
        self.result(name, not errs, detail)
        return q

    def confined_tcg(self):
        """A TCG domain under Debian's confinement: QEMU as
        libvirt-qemu, a root-only disk image handed over by dynamic
        ownership and given back, the fork's queries answering."""
        name = "confined-tcg"
        image = os.path.join(self.lv.tmp, "disk.img")
        with open(image, "wb") as f:
            f.truncate(1 << 20)
        os.chmod(image, 0o600)
        os.chown(image, 0, 0)
        disk = ("    <disk type='file' device='disk'>\n"
                "      <driver name='qemu' type='raw'/>\n"
                "      <source file='%s'/>\n"
                "      <target dev='vda' bus='virtio'/>\n"
                "    </disk>\n" % image)
        if not self.define_and_start(name, domain_xml(
                name, self.emulator, devices=disk, domain_type="qemu")):
            return
        errs = []
        qemu_uid = pwd.getpwnam(QEMU_UID_NAME).pw_uid
        uids = qemu_uids(name)
        if uids != [qemu_uid]:
            errs.append("QEMU's real/effective uids %r, not %s's %d"
                        % (uids, QEMU_UID_NAME, qemu_uid))
        st = os.stat(image)
        if st.st_uid != qemu_uid:
            errs.append("the image is uid %d's while the domain runs, not "
                        "%s's (dynamic ownership)" % (st.st_uid,
                                                      QEMU_UID_NAME))
        try:
            blocks = self.lv.qmp(name, "query-block")
            files = [b.get("inserted", {}).get("file") for b in blocks]
            if image not in files:
                errs.append("QEMU has not opened the image: %r" % files)
            for target in ("irq-vcpu", "host"):
                stats = self.lv.qmp(name, {
                    "execute": "query-stats",
                    "arguments": {"target": target,
                                  "providers": [{"provider": "irq"}]}})
                if not any(s.get("stats") for s in stats):
                    errs.append("query-stats %s of the irq provider: %r"
                                % (target, stats))
            q = self.lv.qmp(name, "x-query-kvm-apicv")
            if q.get("kvm") is not False:
                errs.append("x-query-kvm-apicv under TCG: kvm %r"
                            % q.get("kvm"))
            h = self.lv.virsh("qemu-monitor-command", "--hmp", name,
                              "info kvm-apicv")
            if h.returncode != 0 or not h.stdout.strip() or \
               "error" in h.stdout.lower():
                errs.append("HMP info kvm-apicv: %r %s"
                            % (h.stdout.strip()[:200], h.stderr.strip()))
        except (RuntimeError, ValueError) as e:
            errs.append(str(e))
        d = self.lv.virsh("destroy", name)
        if d.returncode != 0:
            errs.append("destroy: " + d.stderr.strip())
        st = os.stat(image)
        if (st.st_uid, st.st_mode & 0o777) != (0, 0o600):
            errs.append("after the domain the image is uid %d mode %o, not "
                        "root's 0600 again (remember_owner)"
                        % (st.st_uid, st.st_mode & 0o777))
        self.result(name, not errs, "; ".join(errs) if errs else
                    "ok [QEMU uid %d (%s); image handed over and back]"
                    % (qemu_uid, QEMU_UID_NAME))

    def plain(self):
        def check(q):
            errs = []
            if q.get("kvm") is not True:
                errs.append("kvm is %r" % q.get("kvm"))
            if q.get("requested") != "auto":
                errs.append("requested is %r" % q.get("requested"))
            for k in ("host-mode", "mode", "inhibits", "host-facts"):
                if k not in q:
                    errs.append("no %s" % k)
            return errs
        q = self.query_case("plain", check, hmp=True)
        if q:
            self.host = q
            facts = {f["name"]: f["value"] for f in q.get("host-facts", [])}
            print("  host: vendor=%s kernel=%s host-mode=%s mode=%s "
                  "device-posting=%s inhibits=%s observed=%s"
                  % (facts.get("vendor"), facts.get("kernel"),
                     q.get("host-mode"), q.get("mode"),
                     q.get("device-posting"),
                     [(i["reason"], i["likelihood"])
                      for i in q.get("inhibits", [])],
                     json.dumps(q.get("observed"))))

    def device_posting_off(self):
        def check(q):
            v = q.get("requested-device-posting")
            return [] if v == "off" else \
                ["requested-device-posting is %r" % v]
        self.query_case("device-posted-irqs-off", check,
                        qemu_args=("-accel", "kvm,device-posted-irqs=off"),
                        want_opts=[("-accel", "kvm"),
                                   ("-accel", "kvm,device-posted-irqs=off")])

    def pit(self):
        if not self.host:
            self.result("pit", False, "no plain query to know the host by")
            return
        facts = {f["name"]: f["value"]
                 for f in self.host.get("host-facts", [])}
        if facts.get("vendor") not in ("amd", "intel"):
            self.result("pit", False, "host-facts name no vendor: %r"
                        % facts.get("vendor"))
            return
        amd = facts.get("vendor") == "amd"
        for policy in ("delay", "discard"):
            want = amd and policy == "delay"

            def check(q, want=want, policy=policy):
                certain = [i["reason"] for i in q.get("inhibits", [])
                           if i.get("likelihood") == "certain"]
                got = "pit-reinject" in certain
                if got != want:
                    return ["pit-reinject certain: %s, expected %s "
                            "(vendor %s, tickpolicy %s; inhibits %s)"
                            % (got, want, facts.get("vendor"), policy,
                               q.get("inhibits"))]
                return []
            self.query_case("pit-%s" % policy, check,
                            clock=pit_clock(policy),
                            want_opts=[("-global",
                                        "kvm-pit.lost_tick_policy=" +
                                        policy)])

    def intel_iommu_posted(self):
        """libvirt's <iommu model='intel'> with x-posted-intr set through
        <qemu:override>: the domain runs, the property is on and the
        IOMMU's posting counters are there over QMP."""
        name = "intel-iommu-posted"
        xml = domain_xml(name, self.emulator, features=IOMMU_POSTED_FEATURES,
                         devices=IOMMU_POSTED_DEVICES,
                         qemu_extra=IOMMU_POSTED_OVERRIDE)
        if not self.define_and_start(name, xml):
            return
        errs = []
        path = "/machine/peripheral/ua-iommu0"
        try:
            v = self.lv.qmp(name, {
                "execute": "qom-get",
                "arguments": {"path": path, "property": "x-posted-intr"}})
            if v is not True:
                errs.append("x-posted-intr is %r" % v)
            stats = self.lv.qmp(name, {
                "execute": "query-stats",
                "arguments": {"target": "irq-device",
                              "providers": [{"provider": "irq"}]}})
            names = [s["name"] for r in stats if r.get("qom-path") == path
                     for s in r["stats"]]
            if "vtd-posted-notifications" not in names:
                errs.append("no vtd-posted-* counters for %s: %s"
                            % (path, stats))
        except (RuntimeError, ValueError) as e:
            errs.append(str(e))
        cmd = qemu_cmdline(self.lv.domain_log(name))
        dev = [d for d in cmdline_opts(cmd, "-device") if "intel-iommu" in d]
        if not dev or "x-posted-intr" not in dev[0]:
            errs.append("libvirt's -device for the IOMMU: %r" % dev)
        machine = cmdline_opts(cmd, "-machine")
        if not any("kernel_irqchip=split" in m or "kernel-irqchip=split" in m
                   for m in machine):
            errs.append("no split irqchip: -machine %r" % machine)
        d = self.lv.virsh("destroy", name)
        if d.returncode != 0:
            errs.append("destroy: " + d.stderr.strip())
        self.result(name, not errs, "; ".join(errs) if errs else
                    "ok [-device %s]" % (dev[0] if dev else "?"))

    def apicv_on(self):
        if not self.host:
            self.result("apicv-on", False, "no plain query")
            return
        if self.host.get("host-mode") != "none":
            subtest_skip("apicv-on", "the host offers %s; apicv=on is not "
                         "refused for lack of it" % self.host.get("host-mode"))
            self.skipped += 1
            return
        name = "apicv-on"
        ok, msg = self.boot(name, qemu_args=("-accel", "kvm,apicv=on"))
        if ok:
            self.lv.virsh("destroy", name)
            self.result(name, False, "virsh start succeeded")
            return
        st = self.lv.virsh("domstate", name).stdout.strip()
        log = self.lv.domain_log(name)
        passed = "kvm,apicv=on" in cmdline_opts(qemu_cmdline(log), "-accel")
        # QEMU's own error (after "...system-x86_64: " in its log)
        # must name apicv=on and reach the user through libvirt's error.
        qerr = [l.split("system-x86_64: ", 1)[1]
                for l in log.splitlines()
                if "system-x86_64: " in l and "apicv=on" in l]
        errs = []
        if not qerr:
            errs.append("no QEMU error naming apicv=on in the domain log")
        elif qerr[0] not in msg:
            errs.append("libvirt's error lacks QEMU's %r" % qerr[0])
        if st != "shut off":
            errs.append("domstate %r" % st)
        if not passed:
            errs.append("-accel kvm,apicv=on not on QEMU's command line")
        self.result(name, not errs, "start refused: %s" % (
            "; ".join(errs) if errs else
            "libvirt says: ..." + qerr[0][:200]))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--ns-init":
        ns_init(sys.argv[2])
    if len(sys.argv) != 2:
        print("usage: libvirt-domain.py INSTALLED-QEMU-IRQ-FORK-SYSTEM-X86_64",
              file=sys.stderr)
        sys.exit(2)
    emulator = os.path.abspath(sys.argv[1])
    if not os.access(emulator, os.X_OK):
        print("FAIL: %s is not an executable" % emulator)
        sys.exit(1)
    no_kvm = None
    if not os.path.exists("/dev/kvm") or not os.access("/dev/kvm", os.R_OK |
                                                       os.W_OK):
        no_kvm = "/dev/kvm is missing or not accessible"
    for tool in ("libvirtd", "virsh", "unshare", "mount"):
        if not shutil.which(tool):
            skip("%s is not installed (scripts/install-deps.sh installs "
                 "libvirt 11.3 from bookworm-backports)" % tool)
    if os.geteuid() != 0:
        skip("a private system libvirtd needs root (mount namespace, "
             "QEMU started as %s)" % QEMU_UID_NAME)
    try:
        pwd.getpwnam(QEMU_UID_NAME)
    except KeyError:
        skip("no user %s (libvirt-daemon-driver-qemu creates it)"
             % QEMU_UID_NAME)
    if no_kvm is None and not qemu_user_can_open_kvm():
        st = os.stat("/dev/kvm")
        print("FAIL: /dev/kvm (mode %o, group %s) is not open to %s, as "
              "which libvirt runs QEMU: run scripts/install-deps.sh as root "
              "(it gives /dev/kvm to group kvm, mode 0660, as udev does)"
              % (st.st_mode & 0o777, grp.getgrgid(st.st_gid).gr_name,
                 QEMU_UID_NAME))
        sys.exit(1)
    drv = "/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/" \
          "libvirt_driver_qemu.so"
    if not os.path.exists(drv):
        skip("libvirt's QEMU driver (libvirt-daemon-driver-qemu) is missing")

    def alarm(signum, frame):
        if signum == signal.SIGALRM:
            raise TimeoutError("the test took more than %d s"
                               % TOTAL_TIMEOUT)
        raise TimeoutError("terminated by signal %d" % signum)
    signal.signal(signal.SIGALRM, alarm)
    signal.signal(signal.SIGTERM, alarm)
    signal.alarm(TOTAL_TIMEOUT)

    t0 = time.monotonic()
    lv = Libvirt()
    run = None
    try:
        lv.setup()
        err = lv.start()
        if err:
            lv.stop()
            skip("libvirt cannot run here: " + err)
        ver = [l for l in lv.virsh("version").stdout.splitlines()
               if "library" in l.lower()]
        emu = subprocess.run([emulator, "-version"], capture_output=True,
                             text=True, timeout=30).stdout.splitlines()
        print("libvirt: %s; emulator: %s" % (
            (ver or ["?"])[-1].split(":")[-1].strip(),
            emu[0] if emu else "?"))
        run = Run(lv, emulator)
        run.confined_tcg()
        if no_kvm:
            for case in ("plain", "device-posted-irqs-off", "pit",
                         "apicv-on", "intel-iommu-posted"):
                subtest_skip(case, no_kvm)
                run.skipped += 1
        else:
            run.plain()
            run.device_posting_off()
            run.pit()
            run.apicv_on()
            run.intel_iommu_posted()
    except TimeoutError as e:
        print("FAIL run: %s" % e)
        if run:
            run.failed += 1
        else:
            lv.stop()
            sys.exit(1)
    finally:
        signal.alarm(0)
        if run:
            lv.stop()
    print("(%.1f s)" % (time.monotonic() - t0))
    print("%d passed, %d failed, %d skipped" % (run.passed, run.failed,
                                                 run.skipped))
    sys.exit(0 if run.failed == 0 else 1)


if __name__ == "__main__":
    main()
