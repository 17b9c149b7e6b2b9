#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Print what a running VM negotiated with KVM for APIC virtualization
and device posted interrupts, the host probe it was decided from, and
the interrupt-delivery counters that show whether it works.

For a user on a real AMD or Intel host (this project's CI has no KVM):
start the VM with a QMP socket, e.g.

  qemu-system-x86_64 -accel kvm,apicv=auto,device-posted-irqs=auto \\
      -qmp unix:/tmp/vm.qmp,server=on,wait=off ...

then run

  scripts/kvm-apicv-report.py /tmp/vm.qmp [SECONDS]

It prints x-query-kvm-apicv (host probe, requested and negotiated mode,
predicted and observed inhibits, per VFIO vector whether it can be posted) and
the "irq" stats provider's host and per-vCPU counters twice, SECONDS
apart (default 5), with the difference: posted-interrupt rows of
/proc/interrupts (PIN/PIW/NPI, AMD-Vi GA log) and the
kvm_avic_doorbell / kvm_avic_ga_log counts.
"""

import json
import socket
import sys
import time


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.f = self.sock.makefile("rw")
        self._read()                                    # greeting
        self.cmd("qmp_capabilities")

    def _read(self):
        while True:
            msg = json.loads(self.f.readline())
            if "event" not in msg:
                return msg

    def cmd(self, name, **args):
        self.f.write(json.dumps({"execute": name, "arguments": args}) + "\n")
        self.f.flush()
        rsp = self._read()
        if "error" in rsp:
            raise RuntimeError("%s: %s" % (name, rsp["error"]["desc"]))
        return rsp["return"]


def counters(qmp):
    """{(target, path, name): value} of the irq stats provider."""
    out = {}
    for target in ("host", "irq-vcpu", "irq-device"):
        try:
            res = qmp.cmd("query-stats", target=target, providers=[
                {"provider": "irq"}])
        except RuntimeError:
            continue
        for entry in res:
            for s in entry["stats"]:
                if isinstance(s["value"], int):
                    out[(target, entry.get("qom-path", ""), s["name"])] = \
                        s["value"]
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
    qmp = Qmp(sys.argv[1])

    info = qmp.cmd("x-query-kvm-apicv")
    if not info["kvm"]:
        print("KVM is not in use in this VM: nothing was negotiated.")
    else:
        print("apicv=%s: host offers %s, the VM is expected to run with %s"
              % (info["requested"], info["host-mode"], info["mode"]))
        if "host-detail" in info:
            print("  host: " + info["host-detail"])
        for inh in info.get("inhibits", []):
            print("  inhibit %s (%s): %s; fix: %s" % (
                inh["reason"], inh["likelihood"], inh["detail"], inh["fix"]))
        obs = info.get("observed", {})
        if obs.get("available"):
            print("  KVM says (tracepoints): inhibits %s, %d lost events"
                  % (obs.get("inhibits", "unknown"), obs["lost-events"]))
        else:
            print("  KVM's tracepoints: not read (%s)" % obs.get("detail"))
        if info.get("pit-discard"):
            print("  in-kernel PIT set to lost_tick_policy=discard")
        print("device-posted-irqs=%s: %s%s" % (
            info["requested-device-posting"], info["device-posting"],
            ": " + info["device-posting-detail"]
            if "device-posting-detail" in info else ""))
        for v in info.get("vfio-vectors", []):
            print("  %s %s %d: %s%s%s" % (
                v["device"], v["kind"], v["vector"],
                "KVM irqfd" if v["kvm-irqfd"] else "through QEMU",
                ", can be posted" if v["can-post"] else "",
                ", IRTE set to post to vCPU %d" % v["irte-vcpu"]
                if "irte-vcpu" in v else ""))
        print("host probe:")
        for fact in info.get("host-facts", []):
            print("  %-40s %s" % (fact["name"], fact["value"]))

    before = counters(qmp)
    time.sleep(seconds)
    after = counters(qmp)
    print("\ncounters over %.1f s (irq stats provider):" % seconds)
    for key in sorted(after):
        delta = after[key] - before.get(key, 0)
        target, path, name = key
        print("  %-10s %-32s %-32s %12d  +%d" % (target, path[-32:], name,
                                                 after[key], delta))
    print("\n(info irq-stats in HMP says which counters are missing "
          "and why)")


if __name__ == "__main__":
    main()
