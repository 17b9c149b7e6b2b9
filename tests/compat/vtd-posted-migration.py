#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Migration of the emulated Intel IOMMU with interrupt posting
(intel-iommu,x-posted-intr) between the fork and stock QEMU built from
the same base (make stock).  A q35 VM with intel-iommu,intremap=on is
saved by one and loaded by the other:

- with posting off (the default) the stream is stock's: stock -> fork,
  fork -> stock and fork -> fork complete, and the CAP register the
  guest reads afterwards has no PI (bit 59);
- with posting on on both sides it completes and CAP.PI stays set;
- when the two sides disagree the destination refuses the stream: a
  posted IRTE would be misread on one side.  The fork names
  x-posted-intr (fork with posting -> fork without, stock -> fork with
  posting); stock refuses the posting subsection it does not know
  (fork with posting -> stock).

Usage: vtd-posted-migration.py FORK-QEMU STOCK-QEMU
"""

import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
from qmp import VM  # noqa: E402

MACHINE = ["-M", "q35", "-m", "256M", "-display", "none", "-nodefaults"]
DMAR_CAP_REG = 0xfed90008
CAP_PI = 1 << 59


def iommu(posted):
    opt = "intel-iommu,intremap=on"
    if posted is not None:
        opt += ",x-posted-intr=" + ("on" if posted else "off")
    return ["-device", opt]


def wait_migration(vm, what):
    deadline = time.time() + 60
    while time.time() < deadline:
        st = vm.cmd("query-migrate")
        if st.get("status") in ("completed", "failed"):
            return st
        time.sleep(0.1)
    raise AssertionError("%s: migration did not finish" % what)


def cap(vm):
    return int(vm.qtest("readq 0x%x" % DMAR_CAP_REG)[0], 16)


def move(src_bin, src_posted, dst_bin, dst_posted, label):
    """Returns (destination's query-migrate, its log, CAP after or None)."""
    tmp = tempfile.mkdtemp(prefix="vtd-mig-")
    path = os.path.join(tmp, "state")
    with VM(src_bin, MACHINE + iommu(src_posted), name="source",
            qtest=True) as src:
        src.cmd("migrate", uri="file:" + path)
        st = wait_migration(src, label + " source")
        if st.get("status") != "completed":
            raise AssertionError("%s: the source failed: %s" % (label, st))
    with VM(dst_bin, MACHINE + iommu(dst_posted) + ["-incoming", "defer"],
            name="destination", qtest=True) as dst:
        dst.cmd("migrate-incoming", uri="file:" + path,
                **{"exit-on-error": False})
        st = wait_migration(dst, label + " destination")
        after = cap(dst) if st.get("status") == "completed" else None
        log = dst.output()
    shutil.rmtree(tmp)
    return st, log, after


def expect_completed(src_bin, src_posted, dst_bin, dst_posted, label):
    st, log, after = move(src_bin, src_posted, dst_bin, dst_posted, label)
    if st.get("status") != "completed":
        print("FAIL: %s: the destination refused: %s %s" % (label, st, log))
        return False
    want = bool(src_posted)
    if bool(after & CAP_PI) != want:
        print("FAIL: %s: CAP 0x%x after the move, PI expected %s"
              % (label, after, want))
        return False
    print("%s: completed, CAP 0x%x" % (label, after))
    return True


def expect_refused(src_bin, src_posted, dst_bin, dst_posted, label,
                   why="x-posted-intr"):
    st, log, after = move(src_bin, src_posted, dst_bin, dst_posted, label)
    if st.get("status") != "failed":
        print("FAIL: %s: the destination accepted the stream: %s"
              % (label, st))
        return False
    if why not in log:
        print("FAIL: %s: refused without naming %s: %s %s"
              % (label, why, st, log))
        return False
    print("%s: refused: %s" % (label, [line for line in log.splitlines()
                                       if why in line][0]))
    return True


def main():
    fork, stock = sys.argv[1], sys.argv[2]
    ok = expect_completed(stock, None, fork, None, "stock -> fork")
    ok = expect_completed(fork, None, stock, None, "fork -> stock") and ok
    ok = expect_completed(fork, False, fork, None,
                          "fork -> fork, posting off") and ok
    ok = expect_completed(fork, True, fork, True,
                          "fork -> fork, posting on") and ok
    ok = expect_refused(fork, True, fork, False,
                        "fork posting on -> fork posting off") and ok
    ok = expect_refused(stock, None, fork, True,
                        "stock -> fork posting on") and ok
    ok = expect_refused(fork, True, stock, None,
                        "fork posting on -> stock",
                        why="'iommu-intel'") and ok
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
