#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Live migration of a running XICS guest between the fork and stock QEMU
(make stock): xics-guest in soak mode on -M pseries,ic-mode=xics with
1 or 2 vCPUs under MTTCG keeps exchanging IPI messages and raising e1000
interrupts (LSIs), each checked to arrive exactly once, while two more
raised interrupts wait masked (ibm,int-off and ibm,set-xive 0xff).  The
VM moves fork -> stock -> fork over TCP on localhost while it runs
(and, at 2 vCPUs, also booted on stock and moved stock -> fork),
first with the traffic paused for each move ("p"/"r" on its console:
nothing in flight), then paused with one device interrupt presented to
the vCPU and not accepted ("P"), then with interrupts in flight; after
each move
every vCPU must keep taking interrupts, and at the end, told by "q",
the guest unmasks the held interrupts (each must arrive once), drains
the traffic and checks that nothing was lost or doubled.

Two bugs of QEMU 10.0.13 made a vCPU deaf after a move: an interrupt
presented but not accepted was not signalled on the destination, and
secondary vCPUs stayed "RTAS stopped".  The fork fixes both on its side
(hw/intc/xics-migration.c, xics.c icp_post_load, spapr_post_load): its
cases are strict.  The second cannot be fixed when stock is the
destination: that case is an expected failure (XFAIL), reported with
the presenter state ("info pic") and the vCPU's MSR; any other failure
fails the test.  If it ever passes it reports XPASS.  An XFAIL there
ends that case before its stock -> fork hop, so the stock -> fork move
at 2 vCPUs is also a case of its own (booted on stock), which must
pass whatever the fork -> stock case showed.

Usage: xics-live-migration.py FORK-QEMU STOCK-QEMU
"""

import os
import re
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xics_guest as xg  # noqa: E402

BOOTARGS = "mode=soak"


class Stuck(AssertionError):
    """A vCPU takes no interrupt after a move: which, and "info pic"."""

    def __init__(self, msg, cpus, pic):
        super().__init__(msg)
        self.cpus = cpus
        self.pic = pic


def presented_before_move(e):
    """Signature of the first known bug: every deaf vCPU's presenter
    holds an interrupt (XISR set) whose owner did not come with the
    migration stream (printed as nil), i.e. presented before the stop."""
    for cpu in e.cpus:
        line = [p for p in e.pic if p.startswith("CPU %d " % cpu)]
        m = re.search(r"XIRR=[0-9a-f]{2}([0-9a-f]{6}) \(\(nil\)\)",
                      line[0] if line else "")
        if not m or int(m.group(1), 16) == 0:
            return False
    return True


def secondaries_only(e):
    """Signature of the second known bug: only secondary vCPUs (started
    with RTAS start-cpu) are deaf, the boot vCPU is not."""
    return 0 not in e.cpus


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def progress(g, after, timeout=60):
    """Wait for SOAK progress lines (every 250 ms of guest time) after
    offset `after` of the console; returns the CPUs whose interrupt count
    did not grow over a second (empty: all take interrupts), or None on
    timeout."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with g.console.lock:
            text = g.console.text[after:]
        lines = re.findall(r"XICS-GUEST SOAK round=\d+ accepted=([\d,]+)",
                           text)
        if len(lines) >= 6:
            a = [int(x) for x in lines[1].split(",")]
            b = [int(x) for x in lines[5].split(",")]
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


def move(src, dst_bin, label, how, smp):
    """Migrate the running guest in src to a new VM of dst_bin.  how:
    "running" (traffic goes on during the move), "paused" (the guest
    pauses its traffic: nothing in flight) or "presented" (paused, with
    one device interrupt presented to vCPU 0 and not accepted)."""
    port = free_port()
    if how != "running":
        mark = len(src.console.text)
        src.console.write("P" if how == "presented" else "p")
        deadline = time.time() + 60
        m = None
        while m is None and time.time() < deadline:
            with src.console.lock:
                m = re.search(r"XICS-GUEST SOAK PAUSED presented=0x([0-9a-f]+)",
                              src.console.text[mark:])
            time.sleep(0.05)
        if m is None:
            raise AssertionError("%s: the guest did not pause" % label)
        if how == "presented" and int(m.group(1), 16) == 0:
            raise AssertionError("%s: no interrupt presented" % label)
    dst = xg.GuestVM(dst_bin, smp, BOOTARGS, xg.E1000_4, name=label,
                     incoming="tcp:127.0.0.1:%d" % port)
    dst.__enter__()
    try:
        src.vm.cmd("migrate", uri="tcp:127.0.0.1:%d" % port)
        info = wait_migration(src.vm, label + " source")
        wait_migration(dst.vm, label + " destination")
        dst.cont()
        mark = len(dst.console.text)
        if how != "running":
            dst.console.write("r")
        stuck = progress(dst, mark)
        if stuck is None:
            raise AssertionError("%s: the guest makes no progress after "
                                 "the move" % label)
        if stuck:
            pic = [line.strip() for line in dst.vm.hmp("info pic").splitlines()
                   if "XIRR" in line]
            msrs = re.findall(r"MSR +([0-9a-f]+)",
                              dst.vm.hmp("info registers -a"))
            msr = ["CPU %d MSR=%s" % (i, msrs[i] if i < len(msrs) else "?")
                   for i in stuck]
            raise Stuck("%s: CPU %s take no interrupts after the move; "
                        "presenters: %s; %s" % (
                            label, ",".join(map(str, stuck)),
                            "; ".join(pic), "; ".join(msr)), stuck, pic)
        print("%s: migrated in %d ms (downtime %s ms), every CPU takes "
              "interrupts after the move" % (label, info.get("total-time", -1),
                                             info.get("downtime", "?")))
    except Exception:
        dst.__exit__(None, None, None)
        raise
    src.vm.quit()
    src.__exit__(None, None, None)
    return dst


# label, vCPUs, where the guest boots (fork|stock), moves
# (destination:paused|presented|running), known QEMU bug (or None) and
# the test that a deaf vCPU shows that bug's signature.  The last move
# of each case ends on the fork (its counters are checked).
CASES = [
    # Traffic paused for each move: nothing in flight; the held, masked
    # interrupts and idle presenters move.
    ("1 vCPU, paused", 1, "fork", "stock:paused,fork:paused", None, None),
    # One device interrupt presented to the vCPU, not accepted, during
    # each move (made so by the guest: deterministic).  The fork hands
    # it back to its source before saving (stock would not raise the
    # line for it) and restores it when loading from stock.
    ("1 vCPU, one presented", 1, "fork", "stock:presented,fork:presented",
     None, None),
    # Interrupts in flight during each move.
    ("1 vCPU, running", 1, "fork", "stock:running,fork:running", None, None),
    # Secondary vCPUs (started with RTAS start-cpu) on a fork
    # destination: the fork derives their "RTAS stopped" state.
    ("2 vCPUs, fork to fork", 2, "fork", "fork:running,fork:presented", None,
     None),
    # A secondary vCPU on a stock destination.  When that known bug
    # shows (XFAIL), the case ends there: its stock -> fork hop is not
    # made, hence the next case.
    ("2 vCPUs, paused", 2, "fork", "stock:paused,fork:paused",
     "on a stock QEMU 10.0 destination the secondary vCPUs stay in the "
     "RTAS-stopped state (env->quiesced, set at reset, is not migrated) "
     "and take no interrupt after the load; the fork derives it on load, "
     "stock cannot be fixed from the source", secondaries_only),
    # Secondary vCPUs started on stock, on a fork destination: strict,
    # whatever the case before showed.
    ("2 vCPUs, stock to fork", 2, "stock", "fork:paused", None, None),
]


def run_case(fork, stock, smp, boot, hops):
    """Boot on @boot (fork or stock), make the moves, stop the guest;
    returns a summary or raises AssertionError (Stuck: a vCPU takes no
    interrupt after a move)."""
    g = xg.GuestVM(fork if boot == "fork" else stock, smp, BOOTARGS,
                   xg.E1000_4, name=boot)
    g.__enter__()
    try:
        g.cont()
        if not g.console.wait_for(r"XICS-GUEST SOAK RUNNING held=2", 60,
                                  g.vm.proc):
            raise AssertionError("the guest did not start its soak on %s:\n"
                                 % boot + g.console.text[-2000:])
        if progress(g, 0) != []:
            raise AssertionError("no progress on %s before the first move"
                                 % boot)
        where = boot
        for hop in hops.split(","):
            dest, how = hop.split(":")
            label = "%s -> %s (%s)" % (where, dest, how)
            g = move(g, fork if dest == "fork" else stock, label, how, smp)
            where = dest
        g.console.write("q")
        passed, text = g.wait_result(120)
        per_vcpu, ics = xg.irq_stats(g.vm)
        g.vm.quit()
    finally:
        g.__exit__(None, None, None)
    if not passed or "XICS-GUEST SOAK released=2" not in text:
        raise AssertionError("guest verdict after the moves:\n" +
                             text[-3000:])
    tot = xg.parse_records(text, "TOTAL")[0]
    if ics is None or ics["xics-ics-lsi-events"] == 0:
        raise AssertionError("the fork counted no device interrupt after "
                             "the moves")
    return ("%d IPI messages and %d of %d device interrupts each delivered "
            "once, the 2 held interrupts delivered after the moves, %d LSI "
            "events on the final fork" % (
                tot["msgs"], tot["delivered"], tot["raised"],
                ics["xics-ics-lsi-events"]))


def main():
    fork, stock = sys.argv[1], sys.argv[2]
    ok = True
    # XICS_MIGRATION_CASE=N runs only case N (0-based).
    only = os.environ.get("XICS_MIGRATION_CASE")
    for i, (label, smp, boot, hops, bug, signature) in enumerate(CASES):
        if only is not None and int(only) != i:
            continue
        start = time.time()
        print("== %s: %s -> %s" % (label, boot, " -> ".join(
            h.split(":")[0] for h in hops.split(","))), flush=True)
        try:
            summary = run_case(fork, stock, smp, boot, hops)
        except Stuck as e:
            if bug and signature(e):
                print("XFAIL %s (%.1f s): known QEMU 10.0 bug: %s.\n  %s" % (
                    label, time.time() - start, bug, e))
                continue
            print("FAIL %s: %s" % (label, e))
            ok = False
            continue
        except AssertionError as e:
            print("FAIL %s: %s" % (label, e))
            ok = False
            continue
        if bug:
            print("XPASS %s (%.1f s): %s -- the known bug did not show "
                  "(fixed, or no interrupt was in flight): %s" % (
                      label, time.time() - start, summary, bug))
        else:
            print("PASS %s (%.1f s): %s" % (label, time.time() - start,
                                             summary))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
