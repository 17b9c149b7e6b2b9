# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot the arm64 guest (tests/guest/fetch-arm64-guest.sh: Debian's
arm64 kernel) on -M virt,iommu=smmuv3 under MTTCG with an NVMe
controller and a virtio-blk disk (iommu_platform=on), both behind the
emulated SMMUv3, and collect the guest's view (tests/guest/arm64/init.sh:
the SMMU's probe, IOMMU groups, a written and read-back pattern per
disk, reads completed by one O_DIRECT reader per vCPU per disk).  Used
by smmuv3-io.py (the test) and the SMMUv3 benchmark."""

import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
from qmp import VM  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "x86"))
from guest_output import disk_reads, section  # noqa: E402

DISKS = ("nvme0n1", "vda")


def smmu_stats(vm):
    """The SMMU's command-queue counters (query-stats, provider irq;
    {} where there are none, as on stock QEMU)."""
    try:
        res = vm.cmd("query-stats", target="irq-device",
                     providers=[{"provider": "irq"}])
    except Exception:       # stock: no irq stats provider
        return {}
    for r in res:
        stats = {x["name"]: x["value"] for x in r["stats"]}
        if "smmu-cmdq-commands" in stats:
            return stats
    return {}


def cmdq_hist(text):
    """(calls, microseconds) summed over the CMDQ HIST section: the
    guest's time in arm_smmu_cmdq_issue_cmdlist() during the readers."""
    calls = us = 0
    for m in re.finditer(r"hitcount:\s*(\d+)\s+us:\s*(\d+)", text):
        calls += int(m.group(1))
        us += int(m.group(2))
    return calls, us


# Console lines by which a kernel says it failed, whether or not its
# script went on to the end (an oops in a reader kills only that reader)
KERNEL_FAILURE = re.compile(r"Internal error: Oops|Unable to handle kernel|"
                            r"Kernel panic|kernel BUG|BUG:|WARNING:|"
                            r"rcu: INFO|soft lockup|hard LOCKUP|Call trace:")


def kernel_failures(text):
    """The first few console lines that report a kernel failure."""
    return [line.strip() for line in text.splitlines()
            if KERNEL_FAILURE.search(line)][:3]


def run(qemu, guest, smp=2, strict=True, seconds=2, timeout=300,
        at_end=None, probe=False, extra_args=(), at_start=None):
    """One boot.  Returns a dict: errors (a list), serial (the guest's
    output), reads (per disk, during the readers), wall (s), with
    @probe a second phase of readers as long, with probes: its reads
    (probed_reads) and the guest's calls and time in the command-queue
    path (cmdq_calls, cmdq_us); and what @at_end(vm) returned, asked once
    the guest powered off (@at_start(vm) is called once QMP is up)."""
    tmp = tempfile.mkdtemp(prefix="smmuv3-io-")
    serial = os.path.join(tmp, "serial.log")
    args = ["-M", "virt,iommu=smmuv3", "-cpu", "cortex-a57",
            "-accel", "tcg,thread=multi", "-smp", str(smp), "-m", "1G",
            "-kernel", os.path.join(guest, "Image"),
            "-initrd", os.path.join(guest, "initrd.gz"),
            "-append", "console=ttyAMA0 panic=-1 iommu.strict=%d "
            "ndisks=%d readsec=%d cmdqprobe=%d"
            % (1 if strict else 0, len(DISKS), seconds, 1 if probe else 0),
            "-display", "none", "-nodefaults", "-no-shutdown",
            "-serial", "file:" + serial] + list(extra_args)
    for i, dev in enumerate(["nvme,serial=n0",
                             "virtio-blk-pci,iommu_platform=on,"
                             "disable-legacy=on"]):
        img = os.path.join(tmp, "d%d.img" % i)
        with open(img, "wb") as f:
            f.truncate(64 << 20)
        args += ["-drive", "file=%s,if=none,id=d%d,format=raw" % (img, i),
                 "-device", "%s,drive=d%d" % (dev, i)]
    res = {"errors": [], "extra": None}
    start = time.time()
    with VM(qemu, args, name="smmuv3-io") as vm:
        if at_start:
            at_start(vm)
        deadline = start + timeout
        while vm.cmd("query-status")["status"] != "shutdown":
            if time.time() > deadline:
                res["errors"].append("guest did not power off in %d s"
                                     % timeout)
                break
            time.sleep(0.2)
        if at_end:
            res["extra"] = at_end(vm)
        vm.quit()
        res["qemu_log"] = vm.output()
    res["wall"] = time.time() - start
    with open(serial, errors="replace") as f:
        text = f.read()
    res["serial"] = text
    before = disk_reads(section(text, "DISKS BEFORE"))
    after = disk_reads(section(text, "DISKS AFTER"))
    res["reads"] = {d: after[d] - before.get(d, 0) for d in after}
    res["verify"] = section(text, "VERIFY")
    res["groups"] = section(text, "IOMMU GROUPS")
    res["dmesg"] = section(text, "DMESG")
    res["dmesg_tail"] = section(text, "DMESG TAIL")
    res["cmdq_calls"], res["cmdq_us"] = cmdq_hist(section(text, "CMDQ HIST"))
    # The probed phase's reads, beside which its queue time counts
    before = disk_reads(section(text, "PROBED BEFORE"))
    after = disk_reads(section(text, "PROBED AFTER"))
    res["probed_reads"] = {d: after[d] - before.get(d, 0) for d in after}
    if "=== GUEST END ===" not in text:
        res["errors"].append("the guest did not finish its script")
    oopses = kernel_failures(text)
    if oopses:
        res["errors"].append("the guest kernel failed: %s" % "; ".join(oopses))
    return res
