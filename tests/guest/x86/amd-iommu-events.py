#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""IOMMU interrupts reach a Linux guest: Debian's 6.12 and 7.3 kernels
on -M q35 -device amd-iommu,intremap=on under TCG, with xtsup off (the
IOMMU's MSI) and on (IntCapXT, which Linux uses in x2APIC mode), make
the edu device DMA from an unmapped address.  The IOMMU must log the
IO_PAGE_FAULT (as a DMA fault, with the device and address) and signal
it: the guest's AMD-Vi interrupt count rises and the kernel reports the
event.  Also checks that both kernels keep interrupt remapping on.

Usage: amd-iommu-events.py QEMU-SYSTEM-X86_64 HOSTDIR-6.12 HOSTDIR-7.3
       (HOSTDIRs from tests/guest/fetch-kvm-host.sh)
"""

import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from guest_output import interrupt_count, section  # noqa: E402

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "..")


def boot(qemu, hostdir, initrd, label, xtsup):
    args = [qemu, "-M", "q35", "-accel", "tcg", "-smp", "2", "-m", "512M",
            "-device", "amd-iommu,intremap=on,x-southbridge=on" +
            (",xtsup=on" if xtsup else ""),
            "-device", "edu,addr=04.0",
            "-kernel", os.path.join(hostdir, "vmlinuz"), "-initrd", initrd,
            "-append", "console=ttyS0 quiet panic=-1",
            "-display", "none", "-nodefaults", "-no-reboot",
            "-serial", "stdio"]
    if xtsup:
        args += ["-cpu", "qemu64,+x2apic"]
    try:
        out = subprocess.run(args, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=180).stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") + "\n(timeout)"
    text = out.replace("\r", "")
    dmesg = section(text, "DMESG")
    irqs = interrupt_count(section(text, "INTERRUPTS"), "AMD-Vi")
    errors = []
    if "=== GUEST END ===" not in text:
        errors.append("the guest did not finish")
    if "AMD-Vi: Interrupt remapping enabled" not in dmesg:
        errors.append("interrupt remapping not enabled")
    if xtsup and "X2APIC enabled" not in dmesg:
        errors.append("IOMMU x2APIC mode not enabled")
    fault = re.search(r"IO_PAGE_FAULT.*address=0x1000000", dmesg)
    if not fault:
        errors.append("the guest reported no IO_PAGE_FAULT at 0x1000000")
    if irqs == 0:
        errors.append("no AMD-Vi interrupt counted in the guest")
    if errors:
        print("%s: FAIL: %s" % (label, "; ".join(errors)))
        print(text[-3000:])
        return False
    print("%s: remapping on, %s; %d AMD-Vi interrupt(s)" % (
        label, fault.group(0).strip(), irqs))
    return True


def main():
    qemu = sys.argv[1]
    hosts = {"6.12": sys.argv[2], "7.3": sys.argv[3]}
    ok = True
    with tempfile.TemporaryDirectory(prefix="amdvi-events-") as tmp:
        for version, hostdir in hosts.items():
            initrd = os.path.join(tmp, "initrd-%s.gz" % version)
            subprocess.run(["/usr/bin/python3",
                            os.path.join(TOP, "tests/guest/mkinitramfs.py"),
                            initrd, os.path.join(hostdir, "busybox"),
                            os.path.join(TOP, "tests/guest/x86/events-init.sh")],
                           check=True)
            for xtsup in (False, True):
                label = "Linux %s xtsup=%s" % (version,
                                               "on" if xtsup else "off")
                ok = boot(qemu, hostdir, initrd, label, xtsup) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
