# SPDX-License-Identifier: GPL-2.0-or-later
"""What the x86-64 test guests print: the "=== GUEST NAME ===" sections
of their console, interrupt counts from their /proc/interrupts and
reads per disk from their DISKS sections (also used by the posted-MSI
and arm64 guests);
and what the tests print at the end (verdict)."""

import re
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


def verdict(errors, start):
    """Print the elapsed time, each error and PASS or FAIL; the exit
    status of a test script."""
    print("elapsed %.1f s" % (time.time() - start))
    for e in errors:
        print("FAIL: " + e)
    print("PASS" if not errors else "FAIL")
    return 1 if errors else 0
