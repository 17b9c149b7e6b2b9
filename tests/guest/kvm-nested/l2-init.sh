#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the nested test bed's L2 guest: print a marker, run /l2-run
# if the test put one in, print the interrupt counts, power off.
/bin/busybox mkdir -p /proc
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin
echo "KVM-NESTED-L2-UP $(uname -r)"
if [ -x /l2-run ]; then
    /l2-run
fi
cat /proc/interrupts
poweroff -f
