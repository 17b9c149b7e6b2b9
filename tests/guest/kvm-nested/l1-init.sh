#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the nested test bed's KVM host (L1), built by testbed.py:
# loads the KVM modules (kvm_amd with $tb_kvm_amd from the kernel
# command line), enables KVM's APICv/AVIC/IRTE tracepoints, then runs
# the L1 QEMU once per /runs/* folder (args: one argument a line; qmp,
# if present: QMP lines fed to -qmp stdio; stamp, if present: stdout
# lines get L1's uptime and KVM's exit count) and reports everything on
# /dev/ttyS1 as "=== ... ===" markers followed by base64 data.
/bin/busybox mkdir -p /proc /sys /dev /tmp
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
exec 0< /dev/console 1> /dev/console 2>&1 3> /dev/ttyS1

mark() { echo "=== $* ===" >&3; }
b64() { base64 >&3; }
feed() {
    while IFS= read -r line; do
        usleep 200000
        echo "$line"
    done < "$1"
}

# A run about to be killed as hung (8 s before tb_timeout): its
# guest's registers and local APICs through the HMP monitor every run
# gets (-monitor pipe:/tmp/tbm), kept in /tmp/hang for the case's HANG
# section.  $1: the case's name, which /tmp/running must still hold.
hang_dump() {
    sleep $((tb_timeout - 8))
    [ "$(cat /tmp/running 2> /dev/null)" = "$1" ] || exit 0
    : > /tmp/hang.taken
    { echo "info registers -a"
      for id in 0 1 2 3 4 5 6 7; do echo "info lapic $id"; done
      echo "info pic"; } > /tmp/hang.cmds
    feed /tmp/hang.cmds > /tmp/tbm.in
}

# each line of stdin with L1's uptime and KVM's exit count before it
stamp() {
    while IFS= read -r line; do
        read -r up idle < /proc/uptime
        echo "$up $(cat $dbg/kvm/exits 2>/dev/null || echo -) $line"
    done
}

mark L1 BEGIN
mark L1 UNAME
uname -r | b64
mark L1 INSMOD
while read -r ko; do
    case "$ko" in
        kvm-amd.ko) insmod "/modules/$ko" $tb_kvm_amd ;;
        *) insmod "/modules/$ko" ;;
    esac
done < /modules/modules.order 2>&1 | b64
mark L1 PARAMS
for f in /sys/module/kvm_amd/parameters/*; do
    echo "${f##*/}=$(cat "$f")"
done | b64
mark L1 IOMMU
cat /sys/class/iommu/*/amd-iommu/features 2>/dev/null | b64
# tb_vfio (kernel command line): PCI devices to bind to vfio-pci
mark L1 VFIO
for d in $(echo "$tb_vfio" | tr , ' '); do
    p=/sys/bus/pci/devices/$d
    echo vfio-pci > $p/driver_override
    echo $d > /sys/bus/pci/drivers_probe
    echo "$d driver=$(basename "$(readlink $p/driver)")" \
         "group=$(basename "$(readlink $p/iommu_group)")"
done 2>&1 | b64

t=/sys/kernel/tracing
mount -t tracefs tracefs $t
dbg=/sys/kernel/debug
mount -t debugfs debugfs $dbg
# tb_sched_features (kernel command line): scheduler features to set,
# comma-separated (e.g. NO_HRTICK,NO_HRTICK_DL)
for f in $(echo "$tb_sched_features" | tr , ' '); do
    echo "$f" > $dbg/sched/features
done
mark L1 EVENTS
for e in $t/events/kvm/kvm_apicv_inhibit_changed \
         $t/events/kvm/kvm_pi_irte_update $t/events/kvm/kvm_avic_*; do
    [ -d "$e" ] && echo 1 > "$e/enable" && echo "${e##*/}"
done | b64
# tb_events (kernel command line): more events, e.g. kvm:kvm_exit, kept
# in a ring of tb_trace_kb per CPU, for looking into a failure
for e in $(echo "$tb_events" | tr , ' '); do
    echo 1 > "$t/events/${e%%:*}/${e#*:}/enable"
done
[ -n "$tb_trace_kb" ] && echo "$tb_trace_kb" > $t/buffer_size_kb
# tb_hist (kernel command line, any value): in-kernel histograms (hist
# triggers, no trace ring to dump) of L1's MSR accesses KVM handled
# (kvm_msr, by MSR and direction), its interrupt vectors (irq_vectors)
# and device IRQs; paused but between the two texts of a stamped run's
# hist_window (lines of its stdout), reported as the run's HIST
hists=
if [ -n "$tb_hist" ]; then
    hists="kvm/kvm_msr:ecx.hex,write irq/irq_handler_entry:irq"
    hists="$hists timer/hrtimer_expire_entry:function.sym"
    for e in $t/events/irq_vectors/*_entry; do
        [ -f "$e/trigger" ] && hists="$hists irq_vectors/${e##*/}:vector"
    done
fi
hist() {
    for h in $hists; do
        echo "hist:keys=${h#*:}:$1" >> "$t/events/${h%%:*}/trigger"
    done
}
hist pause
# L1's jiffies (schedstat's timestamp) and uptime: its tick rate
clock() {
    echo "clock $(sed -n 's/^timestamp //p' /proc/schedstat)" \
         "$(cut -d' ' -f1 /proc/uptime)"
}
mark L1 DMESG
dmesg | grep -i -e kvm -e svm -e avic -e amd-vi -e iommu -e invalid | b64

qemu=/usr/bin/qemu-system-x86_64
for r in /runs/*; do
    name=$(cat "$r/name")
    mark CASE "$name" BEGIN
    echo > $t/trace
    set --
    while IFS= read -r a; do
        set -- "$@" "$a"
    done < "$r/args"
    rm -f /tmp/tbm.in /tmp/tbm.out /tmp/hang /tmp/hang.taken
    mkfifo /tmp/tbm.in /tmp/tbm.out
    cat /tmp/tbm.out > /tmp/hang &
    monreader=$!
    echo "$name" > /tmp/running
    hang_dump "$name" &
    watcher=$!
    set -- "$@" -monitor pipe:/tmp/tbm
    if [ -f "$r/stamp" ]; then
        rm -f /tmp/out /tmp/qmpout /tmp/tbq.in /tmp/tbq.out
        : > /tmp/out
        feeder= reader=
        if [ -f "$r/qmp_at" ]; then
            # qmp_at: the QMP lines go to the monitor (-chardev pipe
            # tbq) as stdout shows its texts, one per line: at the
            # first, qmp_capabilities and the first command; at each
            # next one, the next command; the rest after the last
            mkfifo /tmp/tbq.in /tmp/tbq.out
            cat /tmp/tbq.out > /tmp/qmpout &
            reader=$!
            { i=0
              while IFS= read -r at; do
                  until grep -qF "$at" /tmp/out; do
                      usleep 100000
                  done
                  i=$((i + 1))
                  first=$((i + 1))
                  [ $i -gt 1 ] || first=1
                  sed -n "${first},$((i + 1))p" "$r/qmp" > /tmp/qmp.part
                  feed /tmp/qmp.part
              done < "$r/qmp_at"
              sed -n "$((i + 2)),\$p" "$r/qmp" > /tmp/qmp.part
              feed /tmp/qmp.part; } > /tmp/tbq.in &
            feeder=$!
        fi
        histwatch=
        if [ -n "$hists" ] && [ -f "$r/hist_window" ]; then
            hist clear
            { until grep -qF "$(sed -n 1p "$r/hist_window")" /tmp/out; do
                  usleep 100000
              done
              hist cont
              clock > /tmp/hist.clock
              until grep -qF "$(sed -n 2p "$r/hist_window")" /tmp/out; do
                  usleep 100000
              done
              hist pause
              clock >> /tmp/hist.clock; } &
            histwatch=$!
        fi
        { timeout -s KILL "$tb_timeout" $qemu "$@" < /dev/null 2> /tmp/err
          echo $? > /tmp/rc; } | stamp > /tmp/out
        if [ -n "$feeder" ]; then
            # the reader ends at QEMU's exit, unless QEMU never opened
            # the pipe
            kill $feeder 2> /dev/null
            usleep 300000
            kill $reader 2> /dev/null
        fi
        (exit "$(cat /tmp/rc)")
    elif [ -f "$r/qmp" ]; then
        feed "$r/qmp" |
            timeout -s KILL "$tb_timeout" $qemu "$@" -qmp stdio \
                > /tmp/out 2> /tmp/err
    else
        timeout -s KILL "$tb_timeout" $qemu "$@" \
            < /dev/null > /tmp/out 2> /tmp/err
    fi
    rc=$?
    rm -f /tmp/running
    kill $watcher 2> /dev/null
    # the monitor's reader ends at QEMU's exit; it is killed in case
    # QEMU never opened the pipe
    usleep 300000
    kill $monreader 2> /dev/null
    mark CASE "$name" RC $rc
    mark CASE "$name" STDOUT
    b64 < /tmp/out
    mark CASE "$name" STDERR
    b64 < /tmp/err
    if [ -f "$r/qmp_at" ]; then
        mark CASE "$name" QMP
        b64 < /tmp/qmpout
    fi
    if [ -e /tmp/hang.taken ]; then
        mark CASE "$name" HANG
        b64 < /tmp/hang
    fi
    if [ -n "$histwatch" ]; then
        kill $histwatch 2> /dev/null
        hist pause
        mark CASE "$name" HIST
        { cat /tmp/hist.clock
          echo "sched_features $(cat $dbg/sched/features 2>/dev/null)"
          dmesg | grep -i 'preempt' | sed 's/^/dmesg /'
          for h in $hists; do
              echo "## ${h%%:*}"
              grep -v '^#' "$t/events/${h%%:*}/hist"
          done; } | b64
    fi
    mark CASE "$name" TRACE
    grep -v '^#' $t/trace | b64
    mark CASE "$name" END
done
mark L1 INTERRUPTS
b64 < /proc/interrupts
mark L1 END
poweroff -f
