#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Migration compatibility of the XICS state between the fork and stock
QEMU built from the same base (make stock): a pseries,ic-mode=xics VM
with programmed sources and presenters is saved by one and loaded by
the other, both ways; the XICS state ("info pic") must be identical
after the move.  Fork -> stock also carries a pending IPI and a raised
CPPR, set with the fork's "hcall" qtest verb.

Usage: xics-migration.py FORK-QEMU STOCK-QEMU
"""

import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from qmp import VM  # noqa: E402

MACHINE = ["-M", "pseries,ic-mode=xics", "-smp", "2", "-m", "512M",
           "-display", "none", "-nodefaults"]
RTAS_ARGS = 0x1000000
RTAS_RETS = 0x1000100
H_CPPR, H_IPI = 0x68, 0x6c


def rtas(vm, name, args, nret):
    for i, a in enumerate(args):
        vm.qtest("writel 0x%x 0x%x" % (RTAS_ARGS + 4 * i, a))
    vm.qtest("rtas %s %d 0x%x %d 0x%x" % (name, len(args), RTAS_ARGS, nret,
                                          RTAS_RETS))
    st = int(vm.qtest("readl 0x%x" % RTAS_RETS)[0], 16)
    if st != 0:
        raise AssertionError("%s%r returned %d" % (name, args, st))


def program_sources(vm):
    rtas(vm, "ibm,set-xive", [0x1200, 1, 5], 1)
    rtas(vm, "ibm,set-xive", [0x1201, 0, 7], 1)
    rtas(vm, "ibm,int-off", [0x1201], 1)
    rtas(vm, "ibm,set-xive", [0x1100, 1, 0x20], 1)


def check_sources_after(vm):
    """What "info pic" does not show: servers and saved priorities."""
    rtas(vm, "ibm,get-xive", [0x1200], 3)
    server = int(vm.qtest("readl 0x%x" % (RTAS_RETS + 4))[0], 16)
    prio = int(vm.qtest("readl 0x%x" % (RTAS_RETS + 8))[0], 16)
    if (server, prio) != (1, 5):
        raise AssertionError("0x1200 after the move: server %d priority %d, "
                             "expected 1 and 5" % (server, prio))
    rtas(vm, "ibm,int-on", [0x1201], 1)
    state = xics_state(vm)
    if not any(re.match(r"1201 LSI 07 ", line) for line in state):
        raise AssertionError("0x1201 not at priority 7 after ibm,int-on: %s"
                             % state)


def xics_state(vm):
    """The XICS part of "info pic": presenters and sources, no pointers."""
    lines = []
    for line in vm.hmp("info pic").splitlines():
        line = line.strip()
        if "XIRR" in line or re.match(r"[0-9a-f]+ (MSI|LSI) ", line):
            lines.append(line)
        elif line.startswith("ICS "):
            lines.append(re.sub(r" 0x[0-9a-f]+$", "", line))
    return lines


def wait_migration(vm, what):
    deadline = time.time() + 60
    while time.time() < deadline:
        st = vm.cmd("query-migrate").get("status")
        if st == "completed":
            return
        if st == "failed":
            raise AssertionError("%s: migration failed: %s" % (
                what, vm.cmd("query-migrate")))
        time.sleep(0.1)
    raise AssertionError("%s: migration did not complete" % what)


def move(src_bin, dst_bin, with_hcalls, label):
    path = os.path.join(tempfile.mkdtemp(prefix="xics-mig-"), "state")
    with VM(src_bin, MACHINE, name="source", qtest=True) as src:
        program_sources(src)
        if with_hcalls:
            src.qtest("hcall 0 0x%x 0x10" % H_CPPR)
            src.qtest("hcall 1 0x%x 0xff" % H_CPPR)
            src.qtest("hcall 0 0x%x 1 4" % H_IPI)
        before = xics_state(src)
        src.cmd("migrate", uri="file:" + path)
        wait_migration(src, label + " source")
    with VM(dst_bin, MACHINE + ["-incoming", "defer"], name="destination",
            qtest=True) as dst:
        dst.cmd("migrate-incoming", uri="file:" + path)
        wait_migration(dst, label + " destination")
        after = xics_state(dst)
        check_sources_after(dst)
    os.unlink(path)
    if not before or before != after:
        print("%s: XICS state differs after migration" % label)
        print("  before: %s" % "\n          ".join(before))
        print("  after:  %s" % "\n          ".join(after))
        return False
    if with_hcalls and "CPU 1 XIRR=ff000002 ((nil)) PP=04 MFRR=04" not in after:
        print("%s: the pending IPI did not survive the move" % label)
        return False
    print("%s: %d lines of XICS state identical" % (label, len(before)))
    return True


def main():
    fork, stock = sys.argv[1], sys.argv[2]
    ok = move(fork, stock, True, "fork -> stock")
    ok = move(stock, fork, False, "stock -> fork") and ok
    ok = move(fork, fork, True, "fork -> fork") and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
