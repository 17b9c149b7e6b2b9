#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the posted-MSI guest (tests/guest/posted-msi/posted-msi.py):
# one O_DIRECT 4 KiB reader per vCPU per NVMe controller for READ_SECONDS
# (kernel command line readsec=N), then the guest's view of how the
# interrupts arrived, and power off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
secs=$(sed -n 's/.*readsec=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$secs" ] || secs=5
ncpu=$(grep -c '^processor' /proc/cpuinfo)
echo "=== GUEST DMESG ==="
dmesg | grep -i -e "DMAR" -e "remapping" -e "posted" -e "x2apic" -e "nvme"
echo "=== GUEST INTERRUPTS BEFORE ==="
cat /proc/interrupts
pids=
for dev in /dev/nvme*n1; do
    [ -b "$dev" ] || continue
    c=0
    while [ $c -lt "$ncpu" ]; do
        taskset -c $c dd if="$dev" of=/dev/null bs=4096 iflag=direct \
            count=100000000 2>/tmp/dd.$c.${dev##*/} &
        pids="$pids $!"
        c=$((c + 1))
    done
done
sleep "$secs"
kill -INT $pids 2>/dev/null
wait
echo "=== GUEST READS ==="
for f in /tmp/dd.*; do echo "$f $(grep -m1 'records in' "$f")"; done
echo "=== GUEST INTERRUPTS AFTER ==="
cat /proc/interrupts
echo "=== GUEST DMESG TAIL ==="
dmesg | grep -i -e "nvme" -e "timeout" -e "DMAR" | tail -20
echo "=== GUEST END ==="
poweroff -f
