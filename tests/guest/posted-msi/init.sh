#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the posted-MSI guest (tests/guest/posted-msi/posted-msi.py):
# one O_DIRECT 4 KiB reader per vCPU per disk (NVMe namespaces and
# virtio-blk disks) for readsec=N
# seconds of guest time (kernel command line, default 5), then the
# guest's own view: dmesg, reads completed per disk (/sys/block/*/stat)
# and /proc/interrupts before and after, each followed by a quiet
# moment (QUIET BEFORE, QUIET AFTER), and once more after the second;
# power off.
/bin/busybox --install -s /bin
# The nested test bed's L2 initramfs has no /sys or /dev: make them.
mkdir -p /proc /sys /dev
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
secs=$(sed -n 's/.*readsec=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$secs" ] || secs=5
ncpu=$(grep -c '^processor' /proc/cpuinfo)
# Namespaces appear after the controllers' asynchronous probe: wait
# (at most 30 s) until each controller has its block device.
nctrl=$(ls -d /sys/class/nvme/nvme* 2>/dev/null | wc -l)
tries=0
while [ "$(ls -d /sys/block/nvme*n1 2>/dev/null | wc -l)" -lt "$nctrl" ] &&
      [ $tries -lt 300 ]; do
    sleep 0.1
    tries=$((tries + 1))
done
disks=$(cd /sys/block && ls -d nvme*n1 vd[a-z] 2>/dev/null)
stats() {
    for d in $disks; do echo "$d $(cat /sys/block/$d/stat)"; done
}
echo "=== GUEST DMESG ==="
dmesg | grep -i -e "DMAR" -e "remapping" -e "posted" -e "x2apic" -e "nvme"
echo "=== GUEST DISKS BEFORE ==="
stats
echo "=== GUEST INTERRUPTS BEFORE ==="
cat /proc/interrupts
# Quiet for a moment: the test reads the IOMMU's counters over QMP now
# and at QUIET AFTER, and checks that nothing arrived in between but
# what the guest counted (LATE against AFTER); a read that came after
# the readers started shows as counters ahead of BEFORE's.
echo "=== GUEST QUIET BEFORE ==="
sleep 3
pids=
for d in $disks; do
    c=0
    while [ $c -lt "$ncpu" ]; do
        taskset -c $c sh -c "while :; do dd if=/dev/$d of=/dev/null \
            bs=4096 iflag=direct 2>/dev/null; done" &
        pids="$pids $!"
        c=$((c + 1))
    done
done
sleep "$secs"
kill $pids
killall dd
wait
echo "=== GUEST DISKS AFTER ==="
stats
echo "=== GUEST INTERRUPTS AFTER ==="
cat /proc/interrupts
echo "=== GUEST QUIET AFTER ==="
sleep 3
echo "=== GUEST INTERRUPTS LATE ==="
cat /proc/interrupts
echo "=== GUEST DMESG TAIL ==="
dmesg | grep -i -e "nvme" -e "timeout" -e "DMAR" -e "WARNING" -e "BUG" | tail -20
echo "=== GUEST END ==="
poweroff -f
