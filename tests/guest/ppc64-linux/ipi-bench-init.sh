#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the Linux-guest XICS benchmark (xics-linux-bench.py): runs
# /bin/ipi-bench (ipi-bench.c) for its two workloads, futex ping-pong
# and membarrier, each for the seconds given on the kernel command line
# as ipibench.seconds=N (default 5; a dotted name, so the kernel keeps
# it to itself), prints their "BENCH ..." lines between start and end
# markers, then powers off.
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
secs=5
for arg in $(cat /proc/cmdline); do
    case "$arg" in
    ipibench.seconds=*) secs=${arg#*=} ;;
    esac
done
echo "=== IPI-BENCH START cpus=$(nproc) seconds=$secs ==="
for w in futex-pingpong membarrier; do
    /bin/ipi-bench "$w" "$secs" || echo "BENCH-ERROR $w exit status $?"
done
echo "=== IPI-BENCH END ==="
poweroff -f
