#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the CPU hot-unplug test (tests/guest/ppc64-linux/cpu-hotplug.py):
# an IPI load on every CPU that is online, continuously (short-lived
# processes pinned to each possible CPU: reschedule and call-function
# IPIs), while the host plugs and unplugs vCPU cores; the kernel onlines
# and offlines them by itself on the hotplug events.  Prints the online
# set whenever it changes and, every 20 rounds, the round and the IPI row
# of /proc/interrupts.  A line on the console stops the load; then
# /proc/interrupts, and the host's system_powerdown powers off.
mkdir -p /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp
echo "=== GUEST READY $(nproc) ==="

load() {
    round=0
    last=
    while [ ! -e /tmp/stop ]; do
        online=$(cat /sys/devices/system/cpu/online)
        if [ "$online" != "$last" ]; then
            echo "=== GUEST ONLINE $online round $round ==="
            last=$online
        fi
        # Offline or absent CPUs make taskset fail: ignored.
        for c in 0 1 2 3; do
            taskset -c $c true 2>/dev/null &
        done
        wait
        round=$((round + 1))
        if [ $((round % 20)) -eq 0 ]; then
            echo "=== GUEST LOAD $round online $online ipi" \
                 "$(grep IPI /proc/interrupts | tr -s ' ') ==="
        fi
    done
    echo "=== GUEST LOAD DONE $round ==="
}

load &
read -r line
touch /tmp/stop
wait
echo "=== GUEST GOT $line ==="
echo "=== GUEST INTERRUPTS ==="
cat /proc/interrupts
echo "=== GUEST END ==="
# The kernel's orderly poweroff runs /sbin/poweroff, which signals init
trap 'poweroff -f' USR2 TERM
while true; do sleep 1; done
