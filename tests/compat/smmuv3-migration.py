#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Migration of the emulated SMMUv3's command queue (served without the
BQL in the fork, hw/arm/smmuv3-cmdq.c) between the fork and stock QEMU
built from the same base (make stock), both ways and fork to fork.

A virt,iommu=smmuv3 machine under qtest sets up a command queue in
guest RAM as a driver would and leaves it in two states a migration
must carry:

- held by a command error: SYNC, an illegal command, SYNC published;
  CONS stops at the illegal one with CMDQ_CONS.ERR=ILL and
  GERROR.CMDQ_ERR pending.  The destination must show the same, and
  once the driver's recovery (the bad command rewritten as a SYNC,
  GERRORN acknowledged) runs there, drain the queue and take new
  commands;
- disabled with commands published (CR0.CMDQEN=0, PROD ahead of CONS):
  nothing runs on either side until the destination enables it.

Usage: smmuv3-migration.py FORK-QEMU STOCK-QEMU
"""

import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from qmp import VM  # noqa: E402

MACHINE = ["-M", "virt,iommu=smmuv3", "-m", "512M", "-display", "none",
           "-nodefaults"]
SMMU = 0x09050000
R_CR0, R_CR0ACK = 0x20, 0x24
R_GERROR, R_GERRORN = 0x60, 0x64
R_CMDQ_BASE, R_CMDQ_PROD, R_CMDQ_CONS = 0x90, 0x98, 0x9c
CR0_CMDQEN = 1 << 3
GERROR_CMDQ_ERR = 1 << 0
CERROR_ILL = 1
CMD_SYNC, CMD_ILLEGAL = 0x46, 0x7f
QUEUE, LOG2SIZE = 0x40100000, 3


class Smmu:
    def __init__(self, vm):
        self.vm = vm

    def readl(self, addr):
        return int(self.vm.qtest("readl 0x%x" % addr)[0], 16)

    def writel(self, addr, val):
        self.vm.qtest("writel 0x%x 0x%x" % (addr, val))

    def reg(self, off):
        return self.readl(SMMU + off)

    def set_reg(self, off, val):
        self.writel(SMMU + off, val)

    def put_cmd(self, index, opcode):
        at = QUEUE + (index & ((1 << LOG2SIZE) - 1)) * 16
        for i, word in enumerate((opcode, 0, 0, 0)):
            self.writel(at + 4 * i, word)

    def setup(self, enable):
        self.vm.qtest("writeq 0x%x 0x%x" % (SMMU + R_CMDQ_BASE,
                                            QUEUE | LOG2SIZE))
        self.set_reg(R_CMDQ_PROD, 0)
        self.set_reg(R_CMDQ_CONS, 0)
        if enable:
            self.set_reg(R_CR0, CR0_CMDQEN)

    def cmdq_error_pending(self):
        return bool((self.reg(R_GERROR) ^ self.reg(R_GERRORN)) &
                    GERROR_CMDQ_ERR)


def wait_migration(vm, what):
    deadline = time.time() + 60
    while time.time() < deadline:
        st = vm.cmd("query-migrate")
        if st.get("status") in ("completed", "failed"):
            return st
        time.sleep(0.1)
    raise AssertionError("%s: migration did not finish" % what)


def move(src_bin, dst_bin, prepare, check, label):
    """prepare(Smmu) on the source; check(Smmu) on the destination."""
    tmp = tempfile.mkdtemp(prefix="smmuv3-mig-")
    path = os.path.join(tmp, "state")
    try:
        with VM(src_bin, MACHINE, name="source", qtest=True) as src:
            prepare(Smmu(src))
            src.cmd("migrate", uri="file:" + path)
            st = wait_migration(src, label + " source")
            if st.get("status") != "completed":
                return "the source failed: %s" % st
        with VM(dst_bin, MACHINE + ["-incoming", "defer"],
                name="destination", qtest=True) as dst:
            dst.cmd("migrate-incoming", uri="file:" + path)
            st = wait_migration(dst, label + " destination")
            if st.get("status") != "completed":
                return "the destination failed: %s %s" % (st, dst.output())
            dst.cmd("cont")
            return check(Smmu(dst))
    finally:
        shutil.rmtree(tmp)


def held_prepare(s):
    s.setup(enable=True)
    for i, op in enumerate((CMD_SYNC, CMD_ILLEGAL, CMD_SYNC)):
        s.put_cmd(i, op)
    s.set_reg(R_CMDQ_PROD, 3)


def held_check(s):
    cons = s.reg(R_CMDQ_CONS)
    if cons != (1 | CERROR_ILL << 24) or not s.cmdq_error_pending():
        return "held queue arrived as CONS 0x%x, GERROR 0x%x, GERRORN " \
               "0x%x" % (cons, s.reg(R_GERROR), s.reg(R_GERRORN))
    if s.reg(R_CMDQ_PROD) != 3:
        return "PROD 0x%x, expected 3" % s.reg(R_CMDQ_PROD)
    # Linux's recovery: the bad command becomes a SYNC, GERRORN acks
    s.put_cmd(1, CMD_SYNC)
    s.set_reg(R_GERRORN, s.reg(R_GERROR))
    cons = s.reg(R_CMDQ_CONS)
    if cons & 0xffffff != 3 or s.cmdq_error_pending():
        return "after the acknowledgement CONS 0x%x, error pending %s" \
               % (cons, s.cmdq_error_pending())
    s.put_cmd(3, CMD_SYNC)
    s.put_cmd(4, CMD_SYNC)
    s.set_reg(R_CMDQ_PROD, 5)
    if s.reg(R_CMDQ_CONS) & 0xffffff != 5:
        return "new commands: CONS 0x%x, expected 5" % s.reg(R_CMDQ_CONS)
    return None


def disabled_prepare(s):
    s.setup(enable=False)
    for i in range(4):
        s.put_cmd(i, CMD_SYNC)
    s.set_reg(R_CMDQ_PROD, 4)


def disabled_check(s):
    if s.reg(R_CMDQ_CONS) != 0 or s.reg(R_CMDQ_PROD) != 4:
        return "disabled queue arrived as PROD 0x%x CONS 0x%x" \
               % (s.reg(R_CMDQ_PROD), s.reg(R_CMDQ_CONS))
    s.set_reg(R_CR0, CR0_CMDQEN)
    if not s.reg(R_CR0ACK) & CR0_CMDQEN:
        return "CR0ACK 0x%x after enabling" % s.reg(R_CR0ACK)
    if s.reg(R_CMDQ_CONS) != 4:
        return "enabled: CONS 0x%x, expected 4" % s.reg(R_CMDQ_CONS)
    return None


def main():
    fork, stock = sys.argv[1], sys.argv[2]
    ok = True
    for src, dst, pair in ((stock, fork, "stock -> fork"),
                           (fork, stock, "fork -> stock"),
                           (fork, fork, "fork -> fork")):
        for prepare, check, what in ((held_prepare, held_check,
                                      "held by an error"),
                                     (disabled_prepare, disabled_check,
                                      "disabled with commands")):
            label = "%s, %s" % (pair, what)
            err = move(src, dst, prepare, check, label)
            if err:
                print("FAIL: %s: %s" % (label, err))
                ok = False
            else:
                print("%s: carried and drained" % label)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
