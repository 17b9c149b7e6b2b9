# SPDX-License-Identifier: GPL-2.0-or-later
"""What the x86-64 test guests print: the "=== GUEST NAME ===" sections
of their console, and interrupt counts from their /proc/interrupts;
and what the tests print at the end (verdict)."""

import re
import time


def section(text, name):
    """The lines after "=== GUEST NAME ===", up to the next marker."""
    m = re.search(r"=== GUEST %s ===\n(.*?)(?====)" % name, text, re.S)
    return m.group(1) if m else ""


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
