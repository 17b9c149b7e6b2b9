#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot Debian's ppc64le Linux kernel on -M pseries,ic-mode=xics under
MTTCG with 1, 2 and 4 vCPUs (the XICS hypercalls and the interrupt line
without the BQL), with a busybox initramfs that puts IPI load on every
CPU, reads a line from the console (hvc interrupts) and prints its
/proc/interrupts; the host then sends system_powerdown, whose EPOW
interrupt makes the guest power off.  Checks that every CPU took IPIs,
the console line arrived, the guest powered off through the EPOW
interrupt, and that the fork's XICS counters agree with the guest: per
vCPU, H_XIRR found at least as many interrupts as the guest counted,
and every one of them was EOI'd.  Then PowerNV (POWER8, skiboot), which
shares the XICS code: 2 vCPUs, IPIs on both, the console line, counters.

Usage: linux-mttcg.py QEMU-SYSTEM-PPC64 GUEST-DIR
"""

import os
import re
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "scripts"))
from qmp import VM  # noqa: E402

TIMEOUT = 150


class Console:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.time() + 10
        while True:
            try:
                self.sock.connect(path)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        self.text = ""

    def wait_for(self, pattern, timeout=None):
        deadline = time.time() + (timeout or TIMEOUT)
        while not re.search(pattern, self.text):
            left = deadline - time.time()
            if left <= 0:
                raise AssertionError("no %r on the console; got:\n%s" % (
                    pattern, self.text[-3000:]))
            self.sock.settimeout(left)
            data = self.sock.recv(65536)
            if not data:
                raise AssertionError("console closed; got:\n%s" %
                                     self.text[-3000:])
            self.text += data.decode(errors="replace")
        return re.search(pattern, self.text)


def guest_interrupts(text):
    """{name: [count per CPU]} from the guest's /proc/interrupts."""
    m = re.search(r"=== GUEST INTERRUPTS ===\r?\n(.*?)=== GUEST END",
                  text, re.S)
    if not m:
        raise AssertionError("no /proc/interrupts in the console output")
    lines = m.group(1).replace("\r", "").splitlines()
    ncpu = len(lines[0].split())
    rows = {}
    for line in lines[1:]:
        f = line.split()
        if len(f) < ncpu + 1:
            continue
        counts = [int(x) for x in f[1:ncpu + 1]]
        rows[" ".join(f[ncpu + 1:]) or f[0]] = counts
    return ncpu, rows


def stat(vm, target, path, name):
    res = vm.cmd("query-stats", target=target, providers=[
        {"provider": "irq"}])
    for entry in res:
        if path is not None and entry.get("qom-path") != path:
            continue
        for s in entry["stats"]:
            if s["name"] == name:
                return s["value"]
    raise AssertionError("no %s for %s" % (name, path))


def cpu_paths(vm):
    paths = []
    for c in vm.cmd("query-cpus-fast"):
        paths.append(c["qom-path"])
    return paths


def run(qemu, guest, ncpu):
    tmp = tempfile.mkdtemp(prefix="ppc64-linux-")
    con_path = os.path.join(tmp, "console.sock")
    args = ["-M", "pseries,ic-mode=xics,x-vof=on", "-accel", "tcg,thread=multi",
            "-smp", str(ncpu), "-m", "1G", "-vga", "none", "-nodefaults",
            "-display", "none", "-no-shutdown", "-S",
            "-chardev", "socket,id=con,path=%s,server=on,wait=off" % con_path,
            "-serial", "chardev:con",
            "-kernel", os.path.join(guest, "vmlinux"),
            "-initrd", os.path.join(guest, "initrd.gz"),
            "-append", "console=hvc0 quiet"]
    with VM(qemu, args, name="linux-%d" % ncpu) as vm:
        con = Console(con_path)
        vm.cmd("cont")
        con.wait_for(r"=== GUEST READY (\d+) ===")
        if not re.search(r"=== GUEST READY %d ===" % ncpu, con.text):
            raise AssertionError("guest sees a different CPU count")
        con.wait_for(r"=== GUEST WAITING FOR INPUT ===")
        con.sock.sendall(b"hello-xics\r")
        con.wait_for(r"=== GUEST END ===")
        if "=== GUEST GOT hello-xics" not in con.text:
            raise AssertionError("console line lost")

        n, rows = guest_interrupts(con.text)
        if n != ncpu:
            raise AssertionError("/proc/interrupts has %d CPUs, not %d"
                                 % (n, ncpu))
        ipi = next(v for k, v in rows.items() if k.endswith("IPI"))
        hvc = next(v for k, v in rows.items() if "hvc_console" in k)
        xics = [sum(v[c] for k, v in rows.items() if "XICS" in k)
                for c in range(ncpu)]
        if ncpu > 1 and not all(x > 0 for x in ipi):
            raise AssertionError("a CPU took no IPI: %r" % ipi)
        if sum(hvc) <= 0:
            raise AssertionError("no console interrupt: %r" % hvc)

        paths = cpu_paths(vm)
        for c, path in enumerate(paths):
            # The guest still runs: read EOIs before accepts (every EOI
            # follows an accept).  Its counts were printed a moment ago;
            # the counters can only have grown since.
            eois = stat(vm, "irq-vcpu", path, "xics-icp-eois")
            accepted = stat(vm, "irq-vcpu", path, "xics-icp-accepted")
            if accepted < xics[c]:
                raise AssertionError("CPU %d: %d accepted, fewer than the "
                                     "guest's %d XICS interrupts"
                                     % (c, accepted, xics[c]))
            if eois > accepted:
                raise AssertionError("CPU %d: %d EOIs for %d accepted"
                                     % (c, eois, accepted))
        msi_before = stat(vm, "irq-device", None, "xics-ics-msi-events")

        # EPOW: an MSI through the ICS; the guest powers off on it.
        vm.cmd("system_powerdown")
        deadline = time.time() + 60
        while vm.cmd("query-status")["status"] != "shutdown":
            if time.time() >= deadline:
                raise AssertionError("guest did not power off")
            time.sleep(0.2)
        msi_after = stat(vm, "irq-device", None, "xics-ics-msi-events")
        if msi_after <= msi_before:
            raise AssertionError("no MSI event for the EPOW (%d before, %d "
                                 "after)" % (msi_before, msi_after))
        # Every accepted interrupt EOI'd, but one: Linux's
        # machine_power_off() calls smp_send_stop() after the RTAS
        # power-off, and the vCPUs run until the VM stops, so another
        # vCPU may accept that stop IPI, whose handler never returns.
        for path in paths:
            accepted = stat(vm, "irq-vcpu", path, "xics-icp-accepted")
            eois = stat(vm, "irq-vcpu", path, "xics-icp-eois")
            if not 0 <= accepted - eois <= 1:
                raise AssertionError("%s: %d accepted, %d EOIs after the "
                                     "power-off" % (path, accepted, eois))
        print("%d vCPU(s): IPIs per CPU %r, hvc %d, XICS per CPU %r: ok" % (
            ncpu, ipi, sum(hvc), xics))
        vm.quit()


def run_powernv(qemu, guest):
    """PowerNV shares the XICS code (its presenters are MMIO, under the
    BQL, and take the same locks): POWER8 with skiboot, 2 vCPUs."""
    tmp = tempfile.mkdtemp(prefix="ppc64-pnv-")
    con_path = os.path.join(tmp, "console.sock")
    args = ["-M", "powernv8", "-accel", "tcg,thread=multi", "-smp", "2",
            "-m", "2G", "-nodefaults", "-display", "none", "-S",
            "-chardev", "socket,id=con,path=%s,server=on,wait=off" % con_path,
            "-serial", "chardev:con",
            "-kernel", os.path.join(guest, "vmlinux"),
            "-initrd", os.path.join(guest, "initrd.gz"),
            "-append", "console=hvc0 quiet"]
    with VM(qemu, args, name="powernv8") as vm:
        con = Console(con_path)
        vm.cmd("cont")
        con.wait_for(r"=== GUEST WAITING FOR INPUT ===", 240)
        con.sock.sendall(b"hello-pnv\r")
        con.wait_for(r"=== GUEST END ===")
        if "=== GUEST GOT hello-pnv" not in con.text:
            raise AssertionError("console line lost")
        n, rows = guest_interrupts(con.text)
        if n != 2:
            raise AssertionError("/proc/interrupts has %d CPUs, not 2" % n)
        ipi = next(v for k, v in rows.items() if k.endswith("IPI"))
        if not all(x > 0 for x in ipi):
            raise AssertionError("a CPU took no IPI: %r" % ipi)
        # (Linux on PowerNV also writes XIRR to set the CPPR: those
        # count as EOIs, so only the accepts are compared.)
        for c, path in enumerate(cpu_paths(vm)):
            accepted = stat(vm, "irq-vcpu", path, "xics-icp-accepted")
            if accepted < ipi[c]:
                raise AssertionError("CPU %d: %d accepted, fewer than the "
                                     "guest's %d IPIs" % (c, accepted, ipi[c]))
        print("powernv8, 2 vCPUs: IPIs per CPU %r: ok" % (ipi,))
        vm.kill()


def main():
    qemu, guest = sys.argv[1:3]
    # make check-tsan boots a subset, slower: LINUX_MTTCG_SMPS="2",
    # LINUX_MTTCG_POWERNV=0, LINUX_MTTCG_TIMEOUT=seconds
    global TIMEOUT
    TIMEOUT = int(os.environ.get("LINUX_MTTCG_TIMEOUT", TIMEOUT))
    smps = os.environ.get("LINUX_MTTCG_SMPS", "1 2 4").split()
    for ncpu in (int(n) for n in smps):
        start = time.time()
        run(qemu, guest, ncpu)
        print("  (%.1f s)" % (time.time() - start))
    if os.environ.get("LINUX_MTTCG_POWERNV", "1") != "0":
        start = time.time()
        run_powernv(qemu, guest)
        print("  (%.1f s)" % (time.time() - start))


if __name__ == "__main__":
    main()
