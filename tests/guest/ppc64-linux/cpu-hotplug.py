#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""vCPU hot-plug and hot-unplug under IPI load: Debian's ppc64le Linux
on -M pseries,ic-mode=xics under MTTCG, -smp 2,maxcpus=8, with an
initramfs (init-cpu-hotplug.sh) that keeps short-lived processes
pinned to every CPU running the whole time (reschedule and
call-function IPIs on all online CPUs).  The host plugs spapr CPU cores
(device_add of the core type query-hotpluggable-cpus names, core-id 2,
then 3, then 2 again, then 2 and 3 together; maxcpus=8 because TCG
does not reuse an unplugged vCPU's context); the guest kernel onlines
each new CPU on the hotplug event by itself, and the test waits until
the new CPUs take IPIs.  Then device_del while the load runs: the
guest offlines the CPU (RTAS stop-self) and releases it, QEMU destroys
the vCPU and its XICS presenter.  Checks after every step that QEMU is
alive and running, that the core is really plugged or removed
(query-hotpluggable-cpus, query-cpus-fast), that the guest sees the
online set change and its load goes on; at the end that the guest's
/proc/interrupts shows IPIs on every CPU, that the kernel reported no
oops, that the guest powers off on system_powerdown and QEMU exits
cleanly.

Usage: cpu-hotplug.py QEMU-SYSTEM-PPC64 GUEST-DIR
"""

import os
import re
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
from qmp import VM  # noqa: E402
linux = __import__("linux-mttcg")

BOOT_CPUS = 2
# Under TCG every vCPU thread ever created takes one of maxcpus TCG
# contexts, and an unplugged vCPU does not give its context back
# (tcg_register_thread(), upstream as well): boot CPUs plus all plugs
# must stay within maxcpus, or QEMU aborts on the next plug.
MAX_CPUS = 8
# Cores plugged together in each cycle, then unplugged together; the
# environment can set others, e.g. CPU_HOTPLUG_CYCLES="2 3 2 2,3".
CYCLES = [(2,), (3,), (2,), (2, 3)]
if os.environ.get("CPU_HOTPLUG_CYCLES"):
    CYCLES = [tuple(int(c) for c in cyc.split(","))
              for cyc in os.environ["CPU_HOTPLUG_CYCLES"].split()]
QMP_TIMEOUT = 60
STEP_TIMEOUT = 90
KERNEL_TROUBLE = re.compile(r"Oops|Kernel panic|BUG:|Unable to handle|"
                            r"soft lockup|hung_task|rcu_sched self-detected|"
                            r"rcu: INFO")


class Guest:
    """The running VM and its console, with checks between steps."""

    def __init__(self, vm, con):
        self.vm = vm
        self.con = con

    def alive(self):
        if self.vm.proc.poll() is not None:
            raise AssertionError("QEMU exited (%d): %s" % (
                self.vm.proc.returncode, self.vm.output()[-2000:]))
        status = self.vm.cmd("query-status")["status"]
        if status != "running":
            raise AssertionError("VM is %s, not running" % status)

    def read_some(self, timeout):
        self.con.sock.settimeout(timeout)
        try:
            data = self.con.sock.recv(65536)
        except socket.timeout:
            return
        if not data:
            time.sleep(1)
            raise AssertionError("console closed (QEMU %s); console:\n%s\n"
                                 "QEMU's output:\n%s" % (
                                     "exited with %s" % self.vm.proc.poll()
                                     if self.vm.proc.poll() is not None
                                     else "still running",
                                     self.con.text[-3000:],
                                     self.vm.output()[-3000:]))
        self.con.text += data.decode(errors="replace")

    def wait(self, what, cond, timeout=STEP_TIMEOUT):
        """Read the console until cond() returns something true."""
        deadline = time.time() + timeout
        while True:
            r = cond()
            if r:
                return r
            if time.time() > deadline:
                raise AssertionError("timed out waiting for %s; console:\n%s"
                                     % (what, self.con.text[-3000:]))
            self.alive()
            self.read_some(0.5)

    def console_after(self, pattern, pos):
        return re.compile(pattern).search(self.con.text, pos)

    def online_after(self, n, pos):
        """The first "GUEST ONLINE" line after pos with n CPUs online
        (group 2: the load's round then)."""
        for m in re.compile(r"=== GUEST ONLINE (\S+) round (\d+)").finditer(
                self.con.text, pos):
            if count_cpus(m.group(1)) == n:
                return m
        return None

    def load_after(self, pos):
        """[(end offset, round, online, [IPIs per CPU])] of the load's
        progress lines after pos."""
        out = []
        line = re.compile(r"=== GUEST LOAD (\d+) online (\S+) ipi (.*?) ===")
        for m in line.finditer(self.con.text[pos:]):
            words = m.group(3).split()
            counts = []
            for w in words[1:] if words and words[0].endswith(":") else words:
                if not w.isdigit():
                    break
                counts.append(int(w))
            out.append((pos + m.end(), int(m.group(1)), m.group(2), counts))
        return out


def count_cpus(online):
    """Number of CPUs in a cpulist such as "0-2" or "0-1,3"."""
    n = 0
    for part in online.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def slots(vm):
    """{core-id: qom-path or None} and the core type, from
    query-hotpluggable-cpus."""
    out, types = {}, set()
    for c in vm.cmd("query-hotpluggable-cpus"):
        out[c["props"]["core-id"]] = c.get("qom-path")
        types.add(c["type"])
    if len(types) != 1:
        raise AssertionError("not one core type: %r" % types)
    return out, types.pop()


def ncpus_qmp(vm):
    return len(vm.cmd("query-cpus-fast"))


def cycle(g, core_type, cores, n):
    vm = g.vm
    total = BOOT_CPUS + len(cores)
    ids = ["hp%d-%d" % (c, n) for c in cores]
    pos = len(g.con.text)
    t0 = time.time()
    for cid, dev in zip(cores, ids):
        vm.cmd("device_add", driver=core_type, id=dev, **{"core-id": cid})

    def plugged():
        s, _ = slots(vm)
        return all(s[c] for c in cores) and \
            ncpus_qmp(vm) == BOOT_CPUS + len(cores)
    g.wait("cores %r plugged (QMP)" % (cores,), plugged)
    m = g.wait("the guest to online %d CPUs" % total,
               lambda: g.online_after(total, pos))
    t_online = time.time() - t0

    # The new CPUs take IPIs from the load.
    def new_cpus_take_ipis():
        for end, rnd, online, counts in g.load_after(m.end()):
            if count_cpus(online) == total and len(counts) == total and \
                    all(x > 0 for x in counts[BOOT_CPUS:]):
                return end, rnd, counts
        return None
    end, rnd, counts = g.wait("IPIs on the plugged CPUs", new_cpus_take_ipis)

    # Unplug while the load runs.
    t1 = time.time()
    for dev in ids:
        vm.cmd("device_del", id=dev)

    def removed():
        s, _ = slots(vm)
        return not any(s[c] for c in cores) and ncpus_qmp(vm) == BOOT_CPUS
    g.wait("cores %r removed (QMP)" % (cores,), removed)
    m = g.wait("the guest to offline them",
               lambda: g.online_after(BOOT_CPUS, end))
    t_removed = time.time() - t1
    # The load goes on without them.
    off_round = int(m.group(2))
    g.wait("the load to go on",
           lambda: [x for x in g.load_after(m.end())
                    if x[1] > off_round and count_cpus(x[2]) == BOOT_CPUS])
    g.alive()
    qom = [c["qom-path"] for c in vm.cmd("query-cpus-fast")]
    if any(d in p for p in qom for d in ids):
        raise AssertionError("an unplugged vCPU is still there: %r" % qom)
    print("cycle %d: cores %r online in %.1f s, IPIs per CPU %r; removed "
          "in %.1f s under load (round %d), load goes on" % (
              n, cores, t_online, counts, t_removed, off_round))


def main():
    qemu, guest = sys.argv[1:3]
    tmp = tempfile.mkdtemp(prefix="ppc64-hotplug-")
    initrd = os.path.join(tmp, "initrd-cpu-hotplug.gz")
    subprocess.run([sys.executable,
                    os.path.join(HERE, "..", "mkinitramfs.py"), initrd,
                    os.path.join(guest, "root", "bin", "busybox"),
                    os.path.join(HERE, "init-cpu-hotplug.sh")], check=True)
    con_path = os.path.join(tmp, "console.sock")
    args = ["-M", "pseries,ic-mode=xics,x-vof=on",
            "-accel", "tcg,thread=multi",
            "-smp", "%d,maxcpus=%d" % (BOOT_CPUS, MAX_CPUS), "-m", "1G",
            "-vga", "none", "-nodefaults", "-display", "none", "-no-shutdown",
            "-S",
            "-chardev", "socket,id=con,path=%s,server=on,wait=off" % con_path,
            "-serial", "chardev:con",
            "-kernel", os.path.join(guest, "vmlinux"),
            "-initrd", initrd, "-append", "console=hvc0 quiet"]
    start = time.time()
    with VM(qemu, args, name="cpu-hotplug") as vm:
        con = linux.Console(con_path)
        g = Guest(vm, con)
        s, core_type = slots(vm)
        # A QMP command that does not return means a hung main loop.
        vm.sock.settimeout(QMP_TIMEOUT)
        if sorted(s) != list(range(MAX_CPUS)) or \
                not all(s[c] for c in range(BOOT_CPUS)) or \
                any(s[c] for c in range(BOOT_CPUS, MAX_CPUS)):
            raise AssertionError("expected core-ids 0-%d, 0-%d plugged: %r"
                                 % (MAX_CPUS - 1, BOOT_CPUS - 1, s))
        vm.cmd("cont")
        g.wait("the guest to boot",
               lambda: g.console_after(r"=== GUEST READY %d ===" % BOOT_CPUS,
                                       0))
        g.wait("the load to start",
               lambda: g.load_after(0))
        print("booted with %d vCPUs in %.1f s; core type %s" % (
            BOOT_CPUS, time.time() - start, core_type))
        for n, cores in enumerate(CYCLES):
            cycle(g, core_type, cores, n)

        pos = len(con.text)
        con.sock.sendall(b"stop\r")
        g.wait("the guest's /proc/interrupts",
               lambda: g.console_after(r"=== GUEST END ===", pos))
        if "=== GUEST GOT stop" not in con.text:
            raise AssertionError("console line lost")
        ncpu, rows = linux.guest_interrupts(con.text)
        if ncpu != BOOT_CPUS:
            raise AssertionError("the guest ends with %d CPUs, not %d"
                                 % (ncpu, BOOT_CPUS))
        ipi = next(v for k, v in rows.items() if k.endswith("IPI"))
        if not all(x > 0 for x in ipi):
            raise AssertionError("a CPU took no IPI: %r" % ipi)
        bad = KERNEL_TROUBLE.search(con.text)
        if bad:
            raise AssertionError("kernel trouble on the console: %r\n%s" % (
                bad.group(0), con.text[-3000:]))

        vm.cmd("system_powerdown")
        deadline = time.time() + 60
        while vm.cmd("query-status")["status"] != "shutdown":
            if time.time() >= deadline:
                raise AssertionError("guest did not power off")
            if vm.proc.poll() is not None:
                raise AssertionError("QEMU exited")
            time.sleep(0.2)
        rc = vm.quit()
        if rc != 0:
            raise AssertionError("QEMU exited with %d: %s" % (
                rc, vm.output()[-2000:]))
    print("%d hot-plug cycles under IPI load; guest IPIs per CPU at the end "
          "%r; powered off; QEMU exited cleanly (%.1f s)" % (
              len(CYCLES), ipi, time.time() - start))


if __name__ == "__main__":
    main()
