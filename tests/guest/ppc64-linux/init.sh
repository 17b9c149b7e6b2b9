#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the ppc64le Linux test guest (tests/guest/ppc64-linux):
# IPI load on every CPU, a line read from the console (hvc interrupts),
# the guest's /proc/interrupts, then wait for the host's
# system_powerdown (the EPOW interrupt makes the kernel run poweroff).
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
cpus=$(nproc)
echo "=== GUEST READY $cpus ==="
# Short-lived processes on every CPU: reschedule and call-function IPIs
n=0
while [ $n -lt 150 ]; do
    c=0
    while [ $c -lt "$cpus" ]; do
        taskset -c $c true &
        c=$((c + 1))
    done
    wait
    n=$((n + 1))
done
echo "=== GUEST WAITING FOR INPUT ==="
read -r line
echo "=== GUEST GOT $line ==="
echo "=== GUEST INTERRUPTS ==="
cat /proc/interrupts
echo "=== GUEST END ==="
# The kernel's orderly poweroff runs /sbin/poweroff, which signals init
trap 'poweroff -f' USR2 TERM
while true; do sleep 1; done
