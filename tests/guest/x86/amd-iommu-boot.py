#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Boot Debian's amd64 kernel with a busybox initramfs on
-M q35 -device amd-iommu,intremap=on under TCG, with the GA property
(x-ga-vapic) off and on, with and without xtsup=on + x2APIC, and check
from the guest's own dmesg and /proc/interrupts that interrupt
remapping is on and remapped interrupts arrive, and from QMP that the
IOMMU counted them without faults.

Usage: amd-iommu-boot.py QEMU-SYSTEM-X86_64 GUEST-DIR
"""

import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "scripts"))
from qmp import VM  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guest_output import interrupt_count, section  # noqa: E402

CONFIGS = [
    ("ga=off", False, False),
    ("ga=on", True, False),
    ("ga=off xtsup", False, True),
    ("ga=on xtsup", True, True),
]


def boot(qemu, guest, label, ga, xtsup):
    tmp = tempfile.mkdtemp(prefix="amdvi-boot-")
    serial = os.path.join(tmp, "serial.log")
    dev = ("amd-iommu,intremap=on,x-southbridge=on,id=iommu0,x-ga-vapic=%s"
           % ("on" if ga else "off"))
    args = ["-M", "q35", "-accel", "tcg", "-smp", "2", "-m", "512M",
            "-device", dev + (",xtsup=on" if xtsup else ""),
            "-kernel", os.path.join(guest, "vmlinuz"),
            "-initrd", os.path.join(guest, "initrd.gz"),
            "-append", "console=ttyS0 quiet panic=-1",
            "-display", "none", "-nodefaults", "-no-shutdown",
            "-serial", "file:" + serial]
    if xtsup:
        args += ["-cpu", "qemu64,+x2apic"]
    errors = []
    with VM(qemu, args, name=label) as vm:
        deadline = time.time() + 120
        while vm.cmd("query-status")["status"] != "shutdown":
            if time.time() > deadline:
                errors.append("guest did not power off in 120 s")
                break
            time.sleep(0.5)
        stats = {}
        for r in vm.cmd("query-stats", target="irq-device",
                        providers=[{"provider": "irq"}]):
            if r.get("qom-path") == "/machine/peripheral/iommu0":
                stats = {s["name"]: s["value"] for s in r["stats"]}
        vm.quit()
    with open(serial, errors="replace") as f:
        text = f.read()
    dmesg = section(text, "DMESG")
    interrupts = section(text, "INTERRUPTS")
    irqs = interrupt_count(interrupts, "IR-IO-APIC")

    if "AMD-Vi: Interrupt remapping enabled" not in dmesg:
        errors.append("interrupt remapping not enabled")
    if irqs == 0:
        errors.append("no interrupt arrived through IR-IO-APIC")
    if ga != ("AMD-Vi: Virtual APIC enabled" in dmesg):
        errors.append("guest vAPIC mode is %s, expected %s" % (
            "on" if not ga else "off", "on" if ga else "off"))
    if xtsup and "AMD-Vi: X2APIC enabled" not in dmesg:
        errors.append("IOMMU x2APIC mode not enabled")
    if re.search(r"WARNING|GA log|failed", dmesg):
        errors.append("guest reported a problem")
    if stats.get("amdvi-remapped-interrupts", 0) == 0:
        errors.append("the IOMMU counted no remapped interrupt")
    if stats.get("amdvi-ir-faults", 1) != 0:
        errors.append("the IOMMU counted remapping faults")

    if errors:
        print("%s: FAIL: %s" % (label, "; ".join(errors)))
        print(text[-3000:])
        return False
    print("%s: remapping on, %d IR-IO-APIC interrupts in the guest, "
          "%d remapped by the IOMMU" % (label, irqs,
                                        stats["amdvi-remapped-interrupts"]))
    return True


def main():
    qemu, guest = sys.argv[1], sys.argv[2]
    ok = True
    for label, ga, xtsup in CONFIGS:
        ok = boot(qemu, guest, label, ga, xtsup) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
