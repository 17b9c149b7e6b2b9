# SPDX-License-Identifier: GPL-2.0-or-later
"""Python side of the ppc64 guest harness: builds the freestanding
xics-guest (guest.mk), boots it on a pseries machine with the emulated
XICS (ic-mode=xics, VOF, MTTCG), reads its console through a socket
chardev on an spapr-vty, parses its machine-readable lines
("XICS-GUEST ...") and reads the fork's XICS counters over QMP
(query-stats, provider "irq").  Used by the tests and the benchmark in
this folder."""

import os
import re
import socket
import subprocess
import sys
import threading
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..",
                                   ".."))
sys.path.insert(0, os.path.join(TOP, "scripts"))
from qmp import VM, QMPError  # noqa: E402,F401

GUEST_ELF = os.path.join(TOP, "build", "guest-ppc64", "xics-guest.elf")


def build_guest():
    """Build (or find up to date) the guest; returns the ELF's path."""
    subprocess.run(["make", "-s", "-C", TOP, "-f",
                    "tests/guest/ppc64/guest.mk", "guest-ppc64"],
                   check=True)
    return GUEST_ELF


class Console:
    """Reads a QEMU socket chardev in a thread; write() sends input."""

    def __init__(self, path):
        deadline = time.time() + 30
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        self.text = ""
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while True:
            try:
                data = self.sock.recv(65536)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                self.text += data.decode(errors="replace")

    def write(self, s):
        self.sock.sendall(s.encode())

    def wait_for(self, pattern, timeout, proc=None):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                m = re.search(pattern, self.text)
            if m:
                return m
            if proc is not None and proc.poll() is not None:
                time.sleep(0.2)
                with self.lock:
                    m = re.search(pattern, self.text)
                return m
            time.sleep(0.05)
        return None

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def machine_args(smp, elf, bootargs, devices, console_path, extra=()):
    args = ["-M", "pseries,ic-mode=xics,x-vof=on",
            "-accel", "tcg,thread=multi", "-smp", str(smp), "-m", "512M",
            "-kernel", elf, "-append", bootargs,
            "-nographic", "-vga", "none", "-nodefaults", "-no-shutdown",
            "-chardev", "socket,id=con,path=%s,server=on,wait=off"
            % console_path,
            "-device", "spapr-vty,chardev=con"]
    for d in devices:
        args += ["-device", d]
    return args + list(extra)


EDU4 = ["edu,addr=%d" % s for s in (1, 2, 3, 4)]
E1000_4 = ["e1000,addr=%d" % s for s in (1, 2, 3, 4)]


class GuestVM:
    """One run of the guest; use as a context manager."""

    def __init__(self, qemu, smp, bootargs, devices=EDU4, name="guest",
                 extra=(), incoming=None):
        self.elf = build_guest()
        self.qemu = qemu
        args = ["-S"]
        if incoming:
            args += ["-incoming", incoming]
        self.vm = VM(qemu, args, name=name)
        self.console_path = os.path.join(self.vm.tmp, "console.sock")
        self.vm.args += machine_args(smp, self.elf, bootargs, devices,
                                     self.console_path, extra)
        self.console = None

    def __enter__(self):
        self.vm.start()
        self.console = Console(self.console_path)
        return self

    def __exit__(self, *exc):
        if self.console:
            self.console.close()
        self.vm.kill()

    def cont(self):
        self.vm.cmd("cont")

    def wait_result(self, timeout=120):
        """Wait for the verdict; returns (passed, text)."""
        m = self.console.wait_for(r"XICS-GUEST RESULT (PASS|FAIL)[^\n]*\n",
                                  timeout, self.vm.proc)
        if m:
            self.console.wait_for(r"XICS-GUEST END\n", 10, self.vm.proc)
        return (m is not None and m.group(1) == "PASS"), self.console.text

    def wait_stopped(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.vm.cmd("query-status")["status"] in ("shutdown",
                                                        "postmigrate"):
                return True
            time.sleep(0.1)
        return False


def parse_records(text, kind):
    """Lines "XICS-GUEST KIND k=v ..." as dicts (numbers as int)."""
    out = []
    for m in re.finditer(r"^XICS-GUEST %s (.*)$" % kind, text, re.M):
        rec = {}
        for kv in m.group(1).split():
            if "=" in kv:
                k, v = kv.split("=", 1)
                try:
                    rec[k] = int(v, 0)
                except ValueError:
                    rec[k] = v
        out.append(rec)
    return out


def irq_stats(vm):
    """The fork's XICS counters: ({vcpu qom-path: stats}, ics stats) in
    vCPU index order; ({}, None) when the provider is absent (stock)."""
    try:
        vcpus = vm.cmd("query-stats", target="irq-vcpu",
                       providers=[{"provider": "irq"}])
        devices = vm.cmd("query-stats", target="irq-device",
                         providers=[{"provider": "irq"}])
    except QMPError:
        return {}, None
    per_vcpu = {}
    for r in vcpus:
        per_vcpu[r["qom-path"]] = {s["name"]: s["value"] for s in r["stats"]}
    ics = None
    for r in devices:
        st = {s["name"]: s["value"] for s in r["stats"]}
        if "xics-ics-lsi-events" in st:
            ics = st
    return per_vcpu, ics


def vcpu_paths(vm):
    """qom-paths of the vCPUs in cpu-index order."""
    cpus = vm.cmd("query-cpus-fast")
    return [c["qom-path"] for c in sorted(cpus, key=lambda c: c["cpu-index"])]
