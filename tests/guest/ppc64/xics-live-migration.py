#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Live migration of a running XICS guest between the fork and stock QEMU
(make stock): xics-guest in soak mode on -M pseries,ic-mode=xics with
2 vCPUs under MTTCG keeps exchanging IPI messages and raising e1000
interrupts (LSIs), each checked to arrive exactly once, while two more
raised interrupts wait masked (ibm,int-off and ibm,set-xive 0xff).  The
VM moves fork -> stock -> fork over TCP on localhost while it runs; the
guest must keep making progress on each side, and at the end, told by
"q" on its console, it unmasks the held interrupts (each must arrive
once), drains the traffic and checks that nothing was lost or doubled.

Usage: xics-live-migration.py FORK-QEMU STOCK-QEMU
"""

import os
import re
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xics_guest as xg  # noqa: E402

SMP = 2
BOOTARGS = "mode=soak"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def progress(g, after, timeout=60):
    """Wait for two SOAK progress lines after offset `after` of the
    console; returns the CPUs whose interrupt count did not grow between
    them (empty: all take interrupts), or None on timeout."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with g.console.lock:
            text = g.console.text[after:]
        lines = re.findall(r"XICS-GUEST SOAK round=\d+ accepted=([\d,]+)",
                           text)
        if len(lines) >= 3:
            a = [int(x) for x in lines[1].split(",")]
            b = [int(x) for x in lines[2].split(",")]
            return [i for i in range(len(a)) if b[i] <= a[i]]
        time.sleep(0.1)
    return None


def wait_migration(vm, what, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        info = vm.cmd("query-migrate")
        st = info.get("status")
        if st == "completed":
            return info
        if st in ("failed", "cancelled"):
            raise AssertionError("%s: migration %s: %s" % (what, st, info))
        time.sleep(0.1)
    raise AssertionError("%s: migration did not complete" % what)


def move(src, dst_bin, label):
    """Migrate the running guest in src to a new VM of dst_bin."""
    port = free_port()
    dst = xg.GuestVM(dst_bin, SMP, BOOTARGS, xg.E1000_4, name=label,
                     incoming="tcp:127.0.0.1:%d" % port)
    dst.__enter__()
    try:
        src.vm.cmd("migrate", uri="tcp:127.0.0.1:%d" % port)
        info = wait_migration(src.vm, label + " source")
        wait_migration(dst.vm, label + " destination")
        dst.cont()
        mark = len(dst.console.text)
        stuck = progress(dst, mark)
        if stuck is None:
            raise AssertionError("%s: the guest makes no progress after "
                                 "the move" % label)
        if stuck:
            pic = [line.strip() for line in dst.vm.hmp("info pic").splitlines()
                   if "XIRR" in line]
            msr = []
            for i in stuck:
                dst.vm.hmp("cpu %d" % i)
                m = re.search(r"MSR +([0-9a-f]+)",
                              dst.vm.hmp("info registers"))
                msr.append("CPU %d MSR=%s" % (i, m.group(1) if m else "?"))
            raise AssertionError("%s: CPU %s take no interrupts after the "
                                 "move; presenters: %s; %s" % (
                                     label, ",".join(map(str, stuck)),
                                     "; ".join(pic), "; ".join(msr)))
        print("%s: migrated in %d ms (downtime %s ms), every CPU takes "
              "interrupts after the move" % (label, info.get("total-time", -1),
                                             info.get("downtime", "?")))
    except Exception:
        dst.__exit__(None, None, None)
        raise
    src.vm.quit()
    src.__exit__(None, None, None)
    return dst


def main():
    fork, stock = sys.argv[1], sys.argv[2]
    start = time.time()
    g = xg.GuestVM(fork, SMP, BOOTARGS, xg.E1000_4, name="fork")
    g.__enter__()
    try:
        g.cont()
        if not g.console.wait_for(r"XICS-GUEST SOAK RUNNING held=2", 60,
                                  g.vm.proc):
            print("FAIL: the guest did not start its soak")
            print(g.console.text[-3000:])
            return 1
        if progress(g, 0):
            print("FAIL: no progress on the fork")
            return 1
        # XICS_MIGRATION_HOPS (e.g. "fork,fork") changes the route.
        where = "fork"
        for hop in os.environ.get("XICS_MIGRATION_HOPS",
                                  "stock,fork").split(","):
            if not hop:
                time.sleep(3)
                continue
            g = move(g, fork if hop == "fork" else stock,
                     "%s -> %s" % (where, hop))
            where = hop
        g.console.write("q")
        passed, text = g.wait_result(120)
        per_vcpu, ics = xg.irq_stats(g.vm)
        if not passed:
            print("XICS state after the failure:")
            print("\n".join(line for line in g.vm.hmp("info pic").splitlines()
                            if "XIRR" in line))
            for i in range(SMP):
                g.vm.hmp("cpu %d" % i)
                regs = g.vm.hmp("info registers")
                print("CPU %d: %s" % (i, " ".join(
                    re.findall(r"(?:NIP|MSR|HF) +[0-9a-f]+", regs))))
        g.vm.quit()
    except AssertionError as e:
        print("FAIL: %s" % e)
        print(g.console.text[-3000:] if g.console else "")
        g.__exit__(None, None, None)
        return 1
    g.__exit__(None, None, None)
    if not passed or "XICS-GUEST SOAK released=2" not in text:
        print("FAIL: guest verdict after fork -> stock -> fork")
        print(text[-4000:])
        return 1
    tot = xg.parse_records(text, "TOTAL")[0]
    if ics is None or ics["xics-ics-lsi-events"] == 0:
        print("FAIL: the fork counted no device interrupt after the move")
        return 1
    print("PASS in %.1f s: %d IPI messages and %d of %d device interrupts "
          "each delivered once; the 2 held interrupts delivered after the "
          "moves; %d LSI events on the final fork" % (
              time.time() - start, tot["msgs"], tot["delivered"],
              tot["raised"], ics["xics-ics-lsi-events"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
