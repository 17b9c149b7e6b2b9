#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""make demo: boot each binary of the fork on its default machine with a
QMP socket, ask what it is and what it counts, print a summary, and shut
it down cleanly."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qmp import VM, QMPError  # noqa: E402
import demo_ga  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(TOP, "build")

MACHINES = [
    ("qemu-system-ppc64", "pseries (XICS, SLOF firmware, TCG)",
     ["-M", "pseries,ic-mode=xics", "-accel", "tcg", "-smp", "2",
      "-m", "512M", "-display", "none", "-nodefaults", "-serial", "none"]),
    ("qemu-system-x86_64", "q35 + amd-iommu (SeaBIOS, TCG)",
     ["-M", "q35", "-accel", "tcg", "-smp", "2", "-m", "512M",
      "-device", "amd-iommu,intremap=on", "-display", "none",
      "-nodefaults", "-serial", "none"]),
    # No firmware: the SMMUv3 and its command-queue counters are there
    # from realize on (a guest fills them: tests/guest/arm64/).
    ("qemu-system-aarch64", "virt + smmuv3 (no firmware, TCG)",
     ["-M", "virt,iommu=smmuv3", "-cpu", "cortex-a57", "-accel", "tcg",
      "-smp", "2", "-m", "512M", "-display", "none", "-nodefaults",
      "-serial", "none"]),
]


def summarize(vm, title):
    v = vm.cmd("query-version")
    q = v["qemu"]
    print("== %s: %s" % (vm.name, title))
    print("   version    : %d.%d.%d (%s)" % (q["major"], q["minor"],
                                             q["micro"], v["package"]))
    kvm = vm.cmd("query-kvm")
    print("   kvm        : present=%s enabled=%s" % (kvm["present"],
                                                      kvm["enabled"]))
    cpus = vm.cmd("query-cpus-fast")
    print("   vcpus      : %d (%s)" % (len(cpus), ", ".join(
        "#%d %s" % (c["cpu-index"], c["qom-path"]) for c in cpus)))
    schemas = vm.cmd("query-stats-schemas")
    if schemas:
        for s in schemas:
            print("   stats      : provider %-10s target %-6s %d stat(s)" %
                  (s["provider"], s["target"], len(s["stats"])))
    else:
        print("   stats      : no provider registered")
    status = vm.cmd("query-status")
    print("   status     : %s" % status["status"])
    print_irq_stats(vm)


def print_irq_stats(vm):
    """The interrupt-delivery counters of provider "irq", by target."""
    for target in ("irq-device", "irq-vcpu", "host"):
        results = vm.cmd("query-stats", target=target,
                         providers=[{"provider": "irq"}])
        for r in results:
            where = r.get("qom-path", "host-wide, not per VM")
            stats = ", ".join("%s=%s" % (s["name"], s["value"])
                              for s in r["stats"])
            print("   irq %-6s : %s" % (target.replace("irq-", ""), where))
            print("                %s" % stats)
        if not results:
            print("   irq %-6s : (no counters)" % target.replace("irq-", ""))
    for line in vm.hmp("info irq-stats").splitlines()[1:]:
        print("   source     :%s" % line.rstrip()[1:])


def main():
    ok = True
    for binary, title, args in MACHINES:
        path = os.path.join(BUILD, binary)
        if not os.path.exists(path):
            print("demo: %s is not built; run make" % path)
            return 1
        try:
            with VM(path, args, name=binary) as vm:
                time.sleep(1)          # let the firmware run a little
                summarize(vm, title)
                rc = vm.quit()
                print("   shutdown   : %s" % ("clean" if rc == 0 else
                                             "exit code %d" % rc))
                ok = ok and rc == 0
        except QMPError as e:
            print("demo: %s" % e)
            ok = False
        print()
    ok = ga_demo() and ok
    return 0 if ok else 1


def ga_demo():
    path = os.path.join(BUILD, "qemu-system-x86_64")
    print("== AMD IOMMU guest virtual APIC mode (x-ga-vapic=on), "
          "programmed over qtest")
    try:
        with VM(path, ["-M", "q35", "-display", "none", "-nodefaults",
                       "-device", "amd-iommu,intremap=on,x-ga-vapic=on,"
                       "id=iommu0", "-device", "edu,addr=04.0"],
                name="ga", qtest=True) as vm:
            for line in demo_ga.round_trip(vm):
                print("   " + line)
            print_irq_stats(vm)
            rc = vm.quit()
            print("   shutdown   : %s" % ("clean" if rc == 0 else rc))
            return rc == 0
    except (QMPError, RuntimeError) as e:
        print("demo: %s" % e)
        return False


if __name__ == "__main__":
    sys.exit(main())
