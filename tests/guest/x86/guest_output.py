# SPDX-License-Identifier: GPL-2.0-or-later
"""What the x86-64 test guests print: the "=== GUEST NAME ===" sections
of their console, interrupt counts from their /proc/interrupts and
reads per disk from their DISKS sections (also used by the posted-MSI
and arm64 guests);
a run of our freestanding x86 guests (run_flat32_guest);
and what the tests print at the end (verdict)."""

import re
import subprocess
import time


def section(text, name):
    """The lines after "=== GUEST NAME ===", up to the next marker."""
    m = re.search(r"=== GUEST %s ===\n(.*?)(?====)" % name, text, re.S)
    return m.group(1) if m else ""


def disk_reads(text):
    """{disk: reads completed} of a guest's DISKS section: lines of
    "DISK <fields of /sys/block/DISK/stat>" (NVMe namespaces, virtio-blk
    disks)."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) > 2 and f[0].startswith(("nvme", "vd")):
            out[f[0]] = int(f[1])
    return out


def interrupt_count(interrupts, label):
    """Interrupts counted, on all CPUs, on the rows that name @label."""
    total = 0
    for line in interrupts.splitlines():
        if label not in line:
            continue
        for f in line.split()[1:]:
            if not f.isdigit():
                break
            total += int(f)
    return total


def run_flat32_guest(qemu, elf, machine, cpu, smp=2, timeout=60):
    """One run of a freestanding x86 guest (tests/guest/x86/flat32.*)
    under MTTCG, its debug console on stdout, isa-debug-exit at 0xf4:
    (exit status, console lines, stderr); the status is None if it hung,
    killed after @timeout seconds (stderr then says so)."""
    try:
        p = subprocess.run([qemu, "-display", "none", "-nodefaults",
                            "-accel", "tcg,thread=multi", "-M", machine,
                            "-smp", str(smp), "-cpu", cpu, "-no-reboot",
                            "-kernel", elf, "-debugcon", "stdio",
                            "-device",
                            "isa-debug-exit,iobase=0xf4,iosize=1"],
                           stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out, err = (x.decode(errors="replace") if isinstance(x, bytes)
                    else x or "" for x in (e.stdout, e.stderr))
        return None, out.splitlines(), \
            "hung: killed after %d s\n" % timeout + err
    return p.returncode, p.stdout.splitlines(), p.stderr


def verdict(errors, start):
    """Print the elapsed time, each error and PASS or FAIL; the exit
    status of a test script."""
    print("elapsed %.1f s" % (time.time() - start))
    for e in errors:
        print("FAIL: " + e)
    print("PASS" if not errors else "FAIL")
    return 1 if errors else 0
