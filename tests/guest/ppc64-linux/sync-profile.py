#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Where do the vCPUs of a ppc64le Linux guest wait for locks?  Boots the
guest of linux-mttcg.py (IPI load on every CPU) under MTTCG on
-M pseries,ic-mode=xics with the fork and with stock QEMU, alternating,
with HMP "sync-profile on" from the first instruction; when the guest's
IPI phase is over, prints "info sync-profile" (lock wait by call site)
for both, and the phase's host wall time.

Usage: sync-profile.py FORK-QEMU STOCK-QEMU GUEST-DIR [VCPUS] [RUNS]
"""

import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "scripts"))
from qmp import VM  # noqa: E402
linux = __import__("linux-mttcg")


def profile(qemu, guest, ncpu):
    tmp = tempfile.mkdtemp(prefix="ppc64-prof-")
    con_path = os.path.join(tmp, "console.sock")
    args = ["-M", "pseries,ic-mode=xics,x-vof=on", "-accel", "tcg,thread=multi",
            "-smp", str(ncpu), "-m", "1G", "-vga", "none", "-nodefaults",
            "-display", "none", "-S",
            "-chardev", "socket,id=con,path=%s,server=on,wait=off" % con_path,
            "-serial", "chardev:con",
            "-kernel", os.path.join(guest, "vmlinux"),
            "-initrd", os.path.join(guest, "initrd.gz"),
            "-append", "console=hvc0 quiet"]
    with VM(qemu, args, name=os.path.basename(qemu)) as vm:
        con = linux.Console(con_path)
        vm.hmp("sync-profile on")
        vm.cmd("cont")
        con.wait_for(r"=== GUEST READY")
        start = time.time()
        con.wait_for(r"=== GUEST WAITING FOR INPUT ===")
        elapsed = time.time() - start
        table = vm.hmp("info sync-profile 12")
        vm.kill()
    return elapsed, table


def main():
    fork, stock, guest = sys.argv[1:4]
    ncpu = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    times = {"fork": [], "stock": []}
    tables = {}
    for i in range(runs):
        for name, qemu in (("fork", fork), ("stock", stock)):
            t, table = profile(qemu, guest, ncpu)
            times[name].append(t)
            tables[name] = table
            print("run %d %-5s: IPI phase %.2f s" % (i + 1, name, t))
    for name in ("stock", "fork"):
        print("\n== %s: info sync-profile (last run, %d vCPUs) ==" % (
            name, ncpu))
        print(tables[name])
    fm = statistics.median(times["fork"])
    sm = statistics.median(times["stock"])
    print("median IPI phase: fork %.2f s, stock %.2f s, fork/stock %.2f" % (
        fm, sm, fm / sm))


if __name__ == "__main__":
    main()
