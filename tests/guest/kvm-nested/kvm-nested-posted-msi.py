#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The emulated Intel IOMMU's interrupt posting under KVM: in a Debian
kernel acting as KVM host (L1, kvm_amd) under the fork's TCG, the
fork's QEMU starts an L2 the way users do (-accel kvm, q35 with
kernel-irqchip=split, -cpu host) with -device intel-iommu,intremap=on,
eim=on,x-posted-intr=on, and L2 is the posted-MSI guest
(fetch-posted-msi-guest.sh: CONFIG_X86_POSTED_MSI, booted with
intremap=posted_msi).  L2 has two NVMe controllers and a virtio disk:

- nvme0, emulated by L2's QEMU: its MSIs come through the IOMMU model
  and are posted by QEMU into L2's memory, the notification sent with
  KVM_SIGNAL_MSI;
- vda, virtio-blk in an iothread: with posting on, virtio does not ask
  KVM for irqfd routes and signals through QEMU, so its interrupts are
  posted too and its dataplane starts (no "failed to set guest
  notifier" from L2's QEMU);
- nvme1, L0's NVMe bound to vfio-pci in L1 and assigned to L2: VFIO
  would route its MSIs through KVM irqfds past the model; with posting
  on, its KVM routes are refused, VFIO delivers through QEMU, and they
  are posted too.

One O_DIRECT reader per vCPU per disk for 3 s.  Checks that all three
disks read without timeouts, that L2's PMN row moved and that the
IOMMU's counters (query-stats of L2's QEMU, asked while L2 is quiet)
agree with L2's /proc/interrupts: notifications equal PMN, posted
interrupts into a clear PIR bit equal the MSIs L2 handled, and the
counters read before the readers show the notifications L2 had counted
then; that KVM routes were refused (VFIO's) and nothing faulted; and that no KVM
error, L1 failure or L2 reset happened (the test bed's rules).

Usage: kvm-nested-posted-msi.py QEMU HOSTDIR POSTED-MSI-GUEST-DIR
       (QEMU serves as L0 and L1; HOSTDIR from fetch-kvm-host.sh;
       the last from fetch-posted-msi-guest.sh)
"""

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from testbed import TestbedError, run_testbed, verdict  # noqa: E402
from posted import BDF, unstamp  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "posted-msi"))
from posted_msi import agreement, quiet_before, stats_delta  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "x86"))
from guest_output import disk_reads, interrupt_count, section  # noqa: E402

IOMMU = "/machine/peripheral/iommu0"
QUIET = ["=== GUEST QUIET BEFORE ===", "=== GUEST QUIET AFTER ==="]
QUERY = {"execute": "query-stats",
         "arguments": {"target": "irq-device",
                       "providers": [{"provider": "irq"}]}}


def iommu_stats(reply):
    for r in (reply or {}).get("return", []):
        if r.get("qom-path") == IOMMU:
            return {s["name"]: s["value"] for s in r["stats"]}
    return {}


def main():
    qemu, hostdir, guest = sys.argv[1:4]
    start = time.time()
    errors = []
    with tempfile.TemporaryDirectory(prefix="kvm-nested-pmsi-") as tmp:
        disk = os.path.join(tmp, "nvme.img")
        with open(disk, "wb") as f:
            f.truncate(256 << 20)
        l0_args = ["-drive", "file=%s,format=raw,if=none,id=nv0" % disk,
                   "-device", "nvme,drive=nv0,serial=vfio0,addr=05.0"]
        l2 = {"kernel": os.path.join(guest, "bzImage"),
              "files": {"/l2-run": os.path.join(
                  HERE, "..", "posted-msi", "init.sh")},
              "args": ["-M", "q35,kernel-irqchip=split",
                       "-cpu", "host,+x2apic", "-m", "512M",
                       "-device", "intel-iommu,intremap=on,eim=on,"
                       "x-posted-intr=on,caching-mode=on,id=iommu0",
                       "-blockdev", "driver=null-co,node-name=d0,"
                       "size=1073741824,read-zeroes=on",
                       "-device", "nvme,drive=d0,serial=n0",
                       "-object", "iothread,id=io0",
                       "-blockdev", "driver=null-co,node-name=v0,"
                       "size=1073741824,read-zeroes=on",
                       "-device", "virtio-blk-pci,drive=v0,iothread=io0",
                       "-device", "vfio-pci,host=" + BDF,
                       "-append", "console=ttyS0 quiet panic=-1 "
                       "no_timer_check intremap=posted_msi iommu=pt readsec=3"],
              "stamp": True,
              "qmp": [QUERY, QUERY],
              "qmp_at": QUIET}
        try:
            res = run_testbed(qemu, qemu, hostdir, [], l2=l2,
                              kvm_amd_params="avic=0",
                              l0_extra_args=l0_args, timeout=480,
                              l1_append="tb_vfio=%s" % BDF,
                              run_timeout=240)
        except TestbedError as e:
            print(e.console[-3000:])
            return verdict(["testbed: %s" % e], start)
    run = res["l2"]
    out = unstamp(run["stdout"])
    print("L1 %s; L1 vfio: %s" % (res["l1"]["uname"],
                                  res["l1"]["vfio"].strip()))
    print("L2: rc %s" % run["rc"])
    if run["rc"] != 0:
        errors.append("L2's QEMU exited with %s: %s" % (
            run["rc"], run["stderr"].strip()[-800:]))
    elif run["stderr"].strip():
        errors.append("L2's QEMU reported: %s" % run["stderr"].strip()[-800:])
    replies = (run["qmp"] or []) + [None, None]
    stats_before, stats = (iommu_stats(r) for r in replies[:2])
    reply = replies[1]
    dmesg = section(out, "DMESG")
    before = section(out, "INTERRUPTS BEFORE")
    after = section(out, "INTERRUPTS AFTER")
    late = section(out, "INTERRUPTS LATE")
    reads0 = disk_reads(section(out, "DISKS BEFORE"))
    reads1 = disk_reads(section(out, "DISKS AFTER"))
    reads = {d: reads1[d] - reads0.get(d, 0) for d in reads1}
    pmn = interrupt_count(after, "Posted MSI notification")
    msi = interrupt_count(after, "IR-PCI-MSI")
    pmn_run = pmn - interrupt_count(before, "Posted MSI notification")
    msi_run = msi - interrupt_count(before, "IR-PCI-MSI")
    print("L2 reads per disk: %s; MSIs %d, PMN %d during the reads"
          % (reads, msi_run, pmn_run))
    print("L2's IOMMU: %s" % stats)

    if "Enabled IRQ remapping in x2apic mode" not in dmesg:
        errors.append("L2: interrupt remapping not in x2APIC mode")
    if sorted(reads) != ["nvme0n1", "nvme1n1", "vda"] or \
            min(reads.values()) <= 0:
        errors.append("L2: not all three disks read: %s" % reads)
    tail = section(out, "DMESG TAIL")
    for word in ("timeout", "I/O error", "WARNING", "BUG"):
        if word in tail:
            errors.append("L2 reported %r: %s" % (word, tail[-800:]))
            break
    if pmn_run <= 0:
        errors.append("L2: the PMN row did not move")
    if interrupt_count(late, "Posted MSI notification") != pmn or \
            interrupt_count(late, "IR-PCI-MSI") != msi:
        errors.append("L2: interrupts arrived while it was quiet")
    if not stats or not stats_before:
        errors.append("no IOMMU counters from L2's QEMU: %s" % replies[:2])
    else:
        errors += quiet_before(stats_before, pmn - pmn_run)
        errors += agreement(stats, stats_delta(stats, stats_before), pmn,
                            msi_run)
        if stats["vtd-posted-kvm-routes-refused"] <= 0:
            errors.append("no KVM route of VFIO's was refused")
        if stats["vtd-posted-faults"]:
            errors.append("posting faulted %d times"
                          % stats["vtd-posted-faults"])
    if errors:
        print(out[-int(os.environ.get("TB_TAIL", "3000")):])
    return verdict(errors, start)


if __name__ == "__main__":
    sys.exit(main())
