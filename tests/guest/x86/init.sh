#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the x86-64 test guest: report how interrupts arrive, power off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
# Let the timer and the console interrupts flow for a moment.
i=0
while [ $i -lt 200000 ]; do i=$((i + 1)); done
echo "=== GUEST DMESG ==="
dmesg | grep -i -e "AMD-Vi" -e "iommu" -e "x2apic"
echo "=== GUEST INTERRUPTS ==="
cat /proc/interrupts
echo "=== GUEST END ==="
poweroff -f
