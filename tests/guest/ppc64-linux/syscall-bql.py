#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""System calls of a ppc64le Linux guest under MTTCG take neither the BQL
nor an exit from the translated code (patches 0046 and 0049).  Boots
Debian's kernel on -M pseries,ic-mode=xics,x-vof=on with one vCPU and
the initramfs of the Linux-guest benchmark (ipi-bench-init.sh: futex
ping-pong and membarrier, 1 s each; with one vCPU both are system call
loops, no IPIs), with HMP "sync-profile on", and resets the profile
when the workloads start.  At their end it reads "info sync-profile"
(every lock acquisition, by call site) and checks:

- the BQL taken, anywhere but in the main loop, fewer times than a
  tenth of the guest's system calls (a system call under the BQL makes
  it at least one per call), and in accel/tcg/cpu-exec.c (exceptions
  and interrupts under the lock) too; a BQL row of the main loop must
  be there, or the profile is not what the test reads;
- the lock calls made in system/cpus.c (qemu_bql_free()'s trylock of
  the BQL, which every return of the vCPU thread from the guest through
  the halt wait makes, e.g. after a priority nop ended the TB) fewer
  than a tenth of them too: Linux's system call path has two priority
  nops.  (A trylock that fails is not counted, but the locked path it
  leads to takes the BQL, which the first check counts.)

The guest's own count gives the system calls: membarrier calls plus
futex round trips (each at least two futex calls).

Usage: syscall-bql.py QEMU-SYSTEM-PPC64 GUEST-DIR
"""

import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
sys.path.insert(0, os.path.join(HERE, "..", "ppc64"))
from qmp import VM  # noqa: E402
linux = __import__("linux-mttcg")
bench = __import__("xics-linux-bench")
# its parser of "info sync-profile": (type, call site, wait, count, avg)
profile_rows = __import__("xics-bench").profile_rows

SECONDS = 1


def main():
    qemu, guest_dir = sys.argv[1:3]
    kernel, initrd = bench.prepare(guest_dir)
    tmp = tempfile.mkdtemp(prefix="ppc64-syscall-bql-")
    try:
        run(qemu, kernel, initrd, os.path.join(tmp, "console.sock"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(qemu, kernel, initrd, con_path):
    args = ["-M", "pseries,ic-mode=xics,x-vof=on",
            "-accel", "tcg,thread=multi", "-smp", "1", "-m", "1G",
            "-vga", "none", "-nodefaults", "-display", "none", "-S",
            "-no-shutdown",
            "-chardev", "socket,id=con,path=%s,server=on,wait=off" % con_path,
            "-serial", "chardev:con", "-kernel", kernel, "-initrd", initrd,
            "-append", "console=hvc0 cpuidle.off=1 quiet "
            "ipibench.seconds=%d" % SECONDS]
    with VM(qemu, args, name="fork") as vm:
        con = linux.Console(con_path)
        vm.hmp("sync-profile on")
        vm.cmd("cont")
        con.wait_for(r"=== IPI-BENCH START cpus=1 ")
        vm.hmp("sync-profile reset")
        con.wait_for(r"=== IPI-BENCH END ===")
        table = vm.hmp("info sync-profile 1000")
        vm.kill()
    res = bench.parse(con.text.replace("\r", ""))
    for w in ("futex-pingpong", "membarrier"):
        if w not in res:
            raise AssertionError("no BENCH line for %s:\n%s" % (
                w, con.text[-2000:]))
    syscalls = res["membarrier"]["ops"] + 2 * res["futex-pingpong"]["ops"]
    rows = profile_rows(table)
    if not rows:
        raise AssertionError("no rows in info sync-profile:\n" + table)
    # call sites are file:line, the file as the build named it
    main_loop = sum(n for t, site, _, n, _ in rows if t == "BQL mutex" and
                    re.search(r"(^|/)util/main-loop\.c:", site))
    bql = sum(n for t, _, _, n, _ in rows if t == "BQL mutex")
    exc = sum(n for t, site, _, n, _ in rows if t == "BQL mutex" and
              re.search(r"(^|/)accel/tcg/cpu-exec\.c:", site))
    tries = sum(n for _, site, _, n, _ in rows
                if re.search(r"(^|/)system/cpus\.c:", site))
    print("guest system calls (at least): %d" % syscalls)
    print("BQL taken: %d in all, %d by the main loop, %d in cpu-exec.c" % (
        bql, main_loop, exc))
    print("lock calls in system/cpus.c: %d" % tries)
    print(table)
    if syscalls <= 10000:
        raise AssertionError("too few system calls to tell: %d" % syscalls)
    # The profile did see the BQL: the main loop takes it all the time
    if main_loop <= 0:
        raise AssertionError("no BQL row of the main loop: the profile is "
                             "not what this test reads:\n" + table)
    # Wherever a system call might take it (exception path, MTTCG loop);
    # the main loop's own, about 600 a second, have nothing to do with it
    if (bql - main_loop) * 10 >= syscalls:
        raise AssertionError(
            "the BQL was taken %d times outside the main loop for %d system "
            "calls" % (bql - main_loop, syscalls))
    if exc * 10 >= syscalls:
        raise AssertionError(
            "the BQL was taken %d times in cpu-exec.c for %d system calls" % (
                exc, syscalls))
    if tries * 10 >= syscalls:
        raise AssertionError(
            "vCPU returns from the guest through system/cpus.c: %d for %d "
            "system calls" % (tries, syscalls))
    print("PASS: %d system calls, %d BQL acquisitions (%d in cpu-exec.c), "
          "%d lock calls in system/cpus.c" % (syscalls, bql, exc, tries))


if __name__ == "__main__":
    main()
