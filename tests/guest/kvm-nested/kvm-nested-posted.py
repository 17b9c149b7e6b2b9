#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Posted device interrupts end to end on an emulated AVIC host: the
nested test bed's posted-interrupt pipeline (posted.py: L0 TCG with
AVIC and the AMD IOMMU in GA mode, an NVMe controller bound to vfio-pci
in L1 and assigned to a 2-vCPU L2, which reads it with O_DIRECT from
one reader per vCPU).  Checks:

- L1 bound the controller to vfio-pci; L2 found the disk and every read
  completed (the workload finished, no interrupt lost for good);
- L2 counted at least one nvme interrupt per read, and L1's KVM put
  the vectors in guest mode (kvm_pi_irte_update);
- the counters agree across the layers (L0's read once it has shut
  down): L0 (query-stats irq-device) posted at least every interrupt
  L2 counted during the reads; doorbells (IsRun=1) plus
  GA-log entries (IsRun=0) are at most the posted ones and not zero;
  each GA-log entry is one kvm_avic_ga_log in L1; each GA-log interrupt
  one on L1's AMD-Vi GA row of /proc/interrupts, and in the fork's own
  query-stats target host run in L1 afterwards;
- x-query-kvm-apicv of L2's QEMU, asked during the reads, names for
  each posted vector a vCPU L1's kvm_pi_irte_update had set its GSI's
  IRTE up for in that time.

Usage: kvm-nested-posted.py QEMU HOSTDIR [READS]
       (QEMU serves as L0 and L1; HOSTDIR from fetch-kvm-host.sh;
       READS per vCPU, default 1000)
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testbed import TestbedError, verdict  # noqa: E402
import posted  # noqa: E402

VCPUS = 2


def main():
    qemu, hostdir = sys.argv[1:3]
    reads = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    start = time.time()
    errors = []
    try:
        run = posted.run_pipeline(qemu, hostdir, VCPUS, reads)
    except TestbedError as e:
        print(e.console[-3000:])
        return verdict(["testbed: %s" % e], start)
    res, l2, counts = run["res"], run["l2"], run["trace"]
    l1 = res["l1"]
    print("L1 %s, kvm_amd avic=%s" % (l1["uname"], l1["params"].get("avic")))
    print("L1 vfio: %s" % l1["vfio"].strip())
    if "driver=vfio-pci" not in l1["vfio"]:
        errors.append("L1 did not bind %s to vfio-pci: %s"
                      % (posted.BDF, l1["vfio"]))
    print("L2 nvme rows after the reads:\n" + l2["rows"])
    print("L2: rc %s, nvme interrupts %d -> %d, %s s, dd: %s" % (
        res["l2"]["rc"], l2["before"], l2["after"], l2["seconds"],
        " | ".join(l2["dd"])))
    total = VCPUS * reads
    done = sum(int(l.split("+")[0]) for l in l2["dd"]
               if l.endswith("records in"))
    bad = [l for l in l2["out"].splitlines() if "INSMOD-ERROR" in l]
    if bad:
        errors.append("L2 could not load its nvme driver: %s" % bad)
    if not l2["finished"]:
        errors.append("L2 did not finish the reads: %s" % l2["out"][-1500:])
    elif done != total:
        errors.append("L2's readers read %d of %d blocks: %s"
                      % (done, total, l2["dd"]))
    got = l2["after"] - l2["before"]
    if got < total:
        errors.append("L2 counted %d nvme interrupts for %d reads"
                      % (got, total))

    irte = [l for l in res["l2"]["trace"] if "kvm_pi_irte_update" in l]
    # "PI is enabled and being updated" (6.12 and 7.3)
    guest = [l for l in irte if "PI is enabled" in l]
    print("L1 kvm_pi_irte_update: %d lines, %d to guest mode, e.g. %s" % (
        len(irte), len(guest), guest[-1].strip() if guest else None))
    print("L1 AVIC tracepoints: %s" % counts)
    print("L1 AMD-Vi GA interrupts: %s" % run["l1_ga_irqs"])
    if not guest:
        errors.append("L1's KVM never put an IRTE in guest mode: %s"
                      % irte[-3:])

    # L2's QEMU in L1: x-query-kvm-apicv, sent once L2 printed its
    # BEFORE marker and answered by AFTER: each posted vector of the
    # controller names a vCPU its IRTE was set up for meanwhile, by L1's
    # kvm_pi_irte_update for the same GSI
    updates = posted.irte_updates(res["l2"]["trace"])
    reply = run["apicv"] or {}
    vectors = [v for v in reply.get("return", {}).get("vfio-vectors", [])
               if v.get("can-post") and "gsi" in v]
    print("L1 x-query-kvm-apicv vfio-vectors: %s" % [
        (v["vector"], v["gsi"], v.get("irte-vcpu")) for v in vectors])
    print("L1 kvm_pi_irte_update (time, GSI, enabled, vCPU): %s" % updates)
    stamps = run["stamps"]
    if "return" not in reply:
        errors.append("x-query-kvm-apicv in L1: %s" % reply)
    elif not [v for v in vectors if "irte-vcpu" in v]:
        errors.append("x-query-kvm-apicv in L1 names no posted vector: %s"
                      % reply["return"].get("vfio-vectors"))
    elif "BEFORE" not in stamps or "AFTER" not in stamps:
        errors.append("no BEFORE/AFTER stamps to place the query in time")
    for v in vectors if "BEFORE" in stamps and "AFTER" in stamps else []:
        want = posted.irte_vcpus_between(updates, v["gsi"],
                                         stamps["BEFORE"][0],
                                         stamps["AFTER"][0])
        if v.get("irte-vcpu") not in want:
            errors.append("vector %d (GSI %d): x-query-kvm-apicv says vCPU "
                          "%s, kvm_pi_irte_update had %s meanwhile" % (
                              v["vector"], v["gsi"], v.get("irte-vcpu"),
                              sorted(want, key=str)))

    first, last = run["l0_first"], run["l0_last"]
    if last is None:
        errors.append("no query-stats answer from L0 after its shutdown")
        return verdict(errors, start)
    print("L0 irq-device counters at the end: %s" % last)
    print("L0 irq-device counters, first poll to last: %s" % {
        k: last.get(k, 0) - first.get(k, 0) for k in posted.COUNTERS})
    posts = last.get("amdvi-posted-interrupts", 0)
    bells = last.get("amdvi-doorbells", 0)
    entries = last.get("amdvi-ga-log-entries", 0)
    ga_irqs = last.get("amdvi-ga-log-interrupts", 0)
    # the reads' interrupts at least (probe-time ones may come before
    # KVM set up posting)
    if posts < got:
        errors.append("L0 posted %d interrupts, L2's nvme rows gained %d "
                      "during the reads" % (posts, got))
    if bells + entries == 0:
        errors.append("L0 rang no doorbell and logged no GA entry")
    if bells + entries > posts:
        errors.append("L0: %d doorbells + %d GA-log entries for %d posted "
                      "interrupts" % (bells, entries, posts))
    if counts.get("kvm_avic_ga_log", 0) != entries:
        errors.append("L0 wrote %d GA-log entries, L1's KVM traced %d"
                      % (entries, counts.get("kvm_avic_ga_log", 0)))
    # xtsup=on: L1 uses IntCapXT, so its GA-log interrupt has its own
    # AMD-Vi<N>-GA row
    if run["l1_ga_irqs"] is None:
        errors.append("L1's /proc/interrupts has no AMD-Vi GA row")
    elif run["l1_ga_irqs"] != ga_irqs:
        errors.append("L0 sent %d GA-log interrupts, L1's AMD-Vi GA row "
                      "counts %d" % (ga_irqs, run["l1_ga_irqs"]))
    host = run["l1_host_stats"]
    print("L1 query-stats host (the fork in L1): %s" % host)
    ga_host = sum(v for k, v in host.items()
                  if re.fullmatch(r"host-amdvi\d*-ga-log-interrupts", k))
    if "host-amdvi-ga-log-interrupts" in host:
        ga_host = host["host-amdvi-ga-log-interrupts"]
    if not host:
        errors.append("the fork in L1 answered no query-stats host")
    elif ga_host != ga_irqs:
        errors.append("L0 sent %d GA-log interrupts, the fork's "
                      "query-stats host in L1 says %d: %s"
                      % (ga_irqs, ga_host, host))
    if last.get("amdvi-ga-log-overflows", 0):
        errors.append("the GA log overflowed: %s" % last)
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
