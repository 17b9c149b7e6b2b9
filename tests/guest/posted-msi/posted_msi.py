# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot the posted-MSI guest (tests/guest/fetch-posted-msi-guest.sh: a
kernel with CONFIG_X86_POSTED_MSI) on -M q35 with the emulated Intel
IOMMU under MTTCG, NVMe controllers read by one O_DIRECT reader per
vCPU each, and collect the guest's view (dmesg, reads completed,
/proc/interrupts) and, while the guest is quiet after its readers
stopped, the IOMMU's counters over QMP.  Used by posted-msi.py (the
test) and posted-msi-bench.py (the benchmark)."""

import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "scripts"))
from qmp import VM  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "x86"))
from guest_output import disk_reads, interrupt_count, section  # noqa: E402

IOMMU = "/machine/peripheral/iommu0"


def iommu_stats(vm):
    """The IOMMU's counters of the irq stats provider ({} if none)."""
    for r in vm.cmd("query-stats", target="irq-device",
                    providers=[{"provider": "irq"}]):
        if r.get("qom-path") == IOMMU:
            return {s["name"]: s["value"] for s in r["stats"]}
    return {}


def stats_delta(after, before):
    """Counters of after minus before (a missing one counts 0)."""
    return {k: v - before.get(k, 0) for k, v in after.items()}


def agreement(total, during, pmn, msi_during):
    """What does not agree between the IOMMU's counters (total: since
    QEMU started; during: while the readers ran) and the guest's PMN
    row (since boot) and NVMe MSIs handled while the readers ran.  A
    notification is one PMN interrupt (ON stays set until the guest's
    handler clears it, so none merges in the APIC); each post into a
    clear PIR bit is one MSI handled.  MSIs are compared over the reads
    only: the NVMe driver frees the vector of its probe-time admin
    queue, and its row, counts included."""
    out = []
    if total["vtd-posted-notifications"] != pmn:
        out.append("%d notifications sent, the PMN row counts %d"
                   % (total["vtd-posted-notifications"], pmn))
    handled = during["vtd-posted-interrupts"] - \
        during["vtd-posted-pir-already-set"]
    if handled != msi_during:
        out.append("%d posts into a clear PIR bit during the reads, the "
                   "guest handled %d NVMe MSIs" % (handled, msi_during))
    return out


def quiet_before(before, pmn_before):
    """What shows that the IOMMU's counters were not read while the
    guest was quiet before its readers (@before: those counters;
    @pmn_before: the guest's PMN row just before the quiet moment): a
    notification the guest had not counted yet means the read came late
    and the deltas over the reads cannot be compared."""
    if before["vtd-posted-notifications"] != pmn_before:
        return ["the counters read at QUIET BEFORE show %d notifications, "
                "the guest had counted %d: the read came after the "
                "readers started" % (before["vtd-posted-notifications"],
                                     pmn_before)]
    return []


def run(qemu, guest, posted, smp=4, disks=2, seconds=3, timeout=300):
    """One boot.  @posted: None (the property not given, as stock must
    run), False or True (x-posted-intr).  Returns a dict: errors (a
    list), the guest's counts and the IOMMU's counters, read while the
    guest is quiet before its readers start (stats_before) and after
    they stopped (stats)."""
    tmp = tempfile.mkdtemp(prefix="posted-msi-")
    serial = os.path.join(tmp, "serial.log")
    dev = "intel-iommu,intremap=on,eim=on,id=iommu0"
    if posted is not None:
        dev += ",x-posted-intr=" + ("on" if posted else "off")
    args = ["-M", "q35", "-accel", "tcg,thread=multi", "-smp", str(smp),
            "-m", "1G", "-cpu", "qemu64,+x2apic,+cx16", "-device", dev,
            "-kernel", os.path.join(guest, "bzImage"),
            "-initrd", os.path.join(guest, "initrd.gz"),
            "-append", "console=ttyS0 intremap=posted_msi panic=-1 "
            "readsec=%d" % seconds,
            "-display", "none", "-nodefaults", "-no-shutdown",
            "-serial", "file:" + serial]
    for i in range(disks):
        img = os.path.join(tmp, "d%d.img" % i)
        with open(img, "wb") as f:
            f.truncate(1 << 30)
        args += ["-drive", "file=%s,if=none,id=d%d,format=raw" % (img, i),
                 "-device", "nvme,serial=n%d,drive=d%d" % (i, i)]
    res = {"errors": [], "stats": {}, "stats_before": {}}
    start = time.time()
    with VM(qemu, args, name="posted-msi") as vm:
        deadline = start + timeout
        # Stock (posted None) has no irq stats provider to ask.
        pending = [("QUIET BEFORE", "stats_before"),
                   ("QUIET AFTER", "stats")] if posted is not None else []
        while vm.cmd("query-status")["status"] != "shutdown":
            if time.time() > deadline:
                res["errors"].append("guest did not power off in %d s"
                                     % timeout)
                break
            if pending:
                with open(serial, errors="replace") as f:
                    seen = "=== GUEST %s ===" % pending[0][0] in f.read()
                if seen:
                    res[pending.pop(0)[1]] = iommu_stats(vm)
            time.sleep(0.1)
        vm.quit()
        res["qemu_log"] = vm.output()
    res["wall"] = time.time() - start
    with open(serial, errors="replace") as f:
        text = f.read()
    res["serial"] = text
    after = section(text, "INTERRUPTS AFTER")
    before = section(text, "INTERRUPTS BEFORE")
    late = section(text, "INTERRUPTS LATE")
    res["dmesg"] = section(text, "DMESG") + section(text, "DMESG TAIL")
    reads_before = disk_reads(section(text, "DISKS BEFORE"))
    reads_after = disk_reads(section(text, "DISKS AFTER"))
    res["reads"] = sum(reads_after.values()) - sum(reads_before.values())
    res["reads_per_disk"] = {d: reads_after[d] - reads_before.get(d, 0)
                             for d in reads_after}
    res["pmn"] = interrupt_count(after, "Posted MSI notification")
    res["pmn_before"] = interrupt_count(before, "Posted MSI notification")
    res["pmn_run"] = res["pmn"] - res["pmn_before"]
    res["msi"] = interrupt_count(after, "IR-PCI-MSI")
    res["msi_run"] = res["msi"] - interrupt_count(before, "IR-PCI-MSI")
    res["late_same"] = (
        interrupt_count(late, "Posted MSI notification") == res["pmn"] and
        interrupt_count(late, "IR-PCI-MSI") == res["msi"])
    res["timeouts"] = re.findall(r".*(?:timeout|I/O error|BUG|WARNING).*",
                                 res["dmesg"])
    if "=== GUEST END ===" not in text:
        res["errors"].append("the guest did not finish its script")
    if pending:
        res["errors"].append("the guest never reached %s" % pending[0][0])
    if len(reads_after) != disks:
        res["errors"].append("the guest found %d NVMe disks, not %d"
                             % (len(reads_after), disks))
    return res
