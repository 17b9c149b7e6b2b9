#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the arm64 SMMUv3 guest (tests/guest/arm64/smmuv3-io.py):
# loads the NVMe and virtio-blk modules, waits for ndisks=N disks,
# reports the SMMU's probe and the disks' IOMMU groups, then on every
# disk writes 1 MiB of random data with O_DIRECT, reads it back with
# O_DIRECT and compares; then one O_DIRECT 4 KiB reader per vCPU per
# disk for readsec=N seconds (default 2), with the disks' read counts
# before and after; powers off.  With cmdqprobe=1 the readers then run
# again as long with probes on: the time each task spends in the SMMUv3
# driver's arm_smmu_cmdq_issue_cmdlist() (a kprobe and a kretprobe
# matched per task into a synthetic event) is summed in a histogram,
# printed as CMDQ HIST, beside that phase's reads (PROBED BEFORE/AFTER).
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
for m in $(cat /etc/modules.order); do
    insmod "/lib/modules/$m" || echo "insmod $m failed"
done
arg() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" /proc/cmdline; }
secs=$(arg readsec)
[ -n "$secs" ] || secs=2
want=$(arg ndisks)
[ -n "$want" ] || want=1
ncpu=$(grep -c '^processor' /proc/cpuinfo)
# Disks appear after asynchronous probes: wait at most 30 s.
tries=0
while [ "$(ls -d /sys/block/nvme*n1 /sys/block/vd[a-z] 2>/dev/null |
           wc -l)" -lt "$want" ] && [ $tries -lt 300 ]; do
    sleep 0.1
    tries=$((tries + 1))
done
disks=$(cd /sys/block && ls -d nvme*n1 vd[a-z] 2>/dev/null)
stats() {
    for d in $disks; do echo "$d $(cat /sys/block/$d/stat)"; done
}
echo "=== GUEST DMESG ==="
dmesg | grep -i -e "smmu" -e "iommu" -e "nvme" -e "virtio" -e "vd[a-z]"
echo "=== GUEST IOMMU GROUPS ==="
for g in /sys/kernel/iommu_groups/*; do
    echo "$(basename $g) $(ls $g/devices | tr '\n' ' ')"
done
echo "=== GUEST VERIFY ==="
for d in $disks; do
    dd if=/dev/urandom of=/tmp/pattern bs=4096 count=256 2>/dev/null
    dd if=/tmp/pattern of=/dev/$d bs=4096 count=256 oflag=direct \
        2>/dev/null
    dd if=/dev/$d of=/tmp/back bs=4096 count=256 iflag=direct 2>/dev/null
    if cmp -s /tmp/pattern /tmp/back; then
        echo "$d ok"
    else
        echo "$d differs"
    fi
done
# One O_DIRECT 4 KiB reader per vCPU per disk for $secs seconds, the
# disks' read counts before and after in sections "$1 BEFORE/AFTER"
readers() {
    echo "=== GUEST $1 BEFORE ==="
    stats
    pids=
    for d in $disks; do
        c=0
        while [ $c -lt "$ncpu" ]; do
            taskset -c $c sh -c "while :; do dd if=/dev/$d of=/dev/null \
                bs=4096 count=256 iflag=direct 2>/dev/null; done" &
            pids="$pids $!"
            c=$((c + 1))
        done
    done
    sleep "$secs"
    kill $pids
    killall dd
    wait
    echo "=== GUEST $1 AFTER ==="
    stats
}
# Reads per second are counted without probes (they cost reads)
readers DISKS
if [ "$(arg cmdqprobe)" = 1 ]; then
    t=/sys/kernel/tracing
    mount -t tracefs tracefs $t
    echo 'p:cmdq_in arm_smmu_cmdq_issue_cmdlist' >> $t/kprobe_events
    echo 'r:cmdq_out arm_smmu_cmdq_issue_cmdlist' >> $t/kprobe_events
    echo 'cmdq_lat u64 us' >> $t/synthetic_events
    echo 'hist:keys=common_pid:ts0=common_timestamp.usecs' \
        > $t/events/kprobes/cmdq_in/trigger
    echo 'hist:keys=common_pid:us=common_timestamp.usecs-$ts0:onmatch(kprobes.cmdq_in).cmdq_lat($us)' \
        > $t/events/kprobes/cmdq_out/trigger
    echo 'hist:keys=common_pid:vals=hitcount,us' \
        > $t/events/synthetic/cmdq_lat/trigger
    echo 1 > $t/events/kprobes/enable
    readers PROBED
    echo 0 > $t/events/kprobes/enable
    echo "=== GUEST CMDQ HIST ==="
    cat $t/events/synthetic/cmdq_lat/hist
fi
echo "=== GUEST DMESG TAIL ==="
dmesg | grep -i -e "smmu" -e "nvme" -e "virtio" -e "timeout" -e "error" \
    -e "WARNING" -e "BUG" | tail -20
echo "=== GUEST END ==="
poweroff -f
