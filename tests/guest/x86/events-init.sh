#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the AMD IOMMU event test guest: make the edu device DMA from
# an address its IOMMU domain does not map, so the IOMMU logs an
# IO_PAGE_FAULT and signals its event-log interrupt; report what the
# kernel said and counted, power off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for d in /sys/bus/pci/devices/*; do
    [ "$(cat $d/vendor)" = 0x1234 ] && [ "$(cat $d/device)" = 0x11e8 ] && edu=$d
done
if [ -z "$edu" ]; then
    echo "=== GUEST NO EDU ==="
    poweroff -f
fi
# PCI_COMMAND: memory space and bus master
printf '\006' | dd of=$edu/config bs=1 seek=4 conv=notrunc 2>/dev/null
bar=$(head -n 1 $edu/resource | cut -d' ' -f1)
bar=$((bar))
# DMA 4 bytes from 0x1000000 (unmapped) into edu's buffer
devmem $((bar + 0x80)) 32 0x1000000
devmem $((bar + 0x84)) 32 0
devmem $((bar + 0x88)) 32 0x40000
devmem $((bar + 0x8c)) 32 0
devmem $((bar + 0x90)) 32 4
devmem $((bar + 0x98)) 32 1
i=0
while [ $i -lt 300000 ]; do i=$((i + 1)); done
echo "=== GUEST DMESG ==="
dmesg | grep -i -e "AMD-Vi" -e "IO_PAGE_FAULT" -e "iommu"
echo "=== GUEST INTERRUPTS ==="
cat /proc/interrupts
echo "=== GUEST END ==="
poweroff -f
