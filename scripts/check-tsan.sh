#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make check-tsan: build the fork's qemu-system-ppc64 with
# ThreadSanitizer into build-tsan/ (from the assembled tree in
# build/src; ccache shared) and run the multi-threaded XICS stress test
# (tests/qtest/xics-test -p .../xics/stress) and short runs of our
# freestanding ppc64 guest (pseries at 2 and 4 vCPUs under MTTCG) under
# it; then build qemu-system-aarch64 the same way into
# build-tsan-aarch64/ and run the SMMUv3 command queue's stress test
# (tests/qtest/smmuv3-cmdq-test -p .../smmuv3-cmdq/stress).  Fails when
# a stress test fails or when ThreadSanitizer reports a race involving
# the XICS, the ppc interrupt line, the TCG interrupt request code or
# the SMMUv3; other reports (glib, RCU, coroutines: known upstream
# noise) are counted and listed, not failed on.  Not part of `make
# check`: each TSan build takes ~15 minutes on two cores.
set -e

top=$(cd "$(dirname "$0")/.." && pwd)
src="$top/build/src"
out="$top/build-tsan"
rounds=${XICS_STRESS_ROUNDS:-3000}
smmu_rounds=${SMMUV3_STRESS_ROUNDS:-1000}

firmware=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
# tsan_build DIR TARGET NINJA-TARGET...: a TSan build of TARGET in DIR
tsan_build() {
    dir=$1 target=$2
    shift 2
    targets="$*"
    set -- --target-list="$target" --without-default-features \
        --enable-tcg --enable-fdt=system --enable-tsan --disable-docs \
        --disable-tools --disable-werror --disable-download \
        --disable-install-blobs --python=/usr/bin/python3 \
        --firmwarepath="$firmware"
    if [ -x /usr/lib/ccache/gcc ]; then
        set -- "$@" --cc=/usr/lib/ccache/gcc --cxx=/usr/lib/ccache/g++
    fi
    mkdir -p "$dir"
    if [ ! -f "$dir/build.ninja" ] ||
       [ "$(cat "$dir/config.args" 2>/dev/null)" != "$*" ]; then
        (cd "$dir" && "$src/configure" "$@")
        echo "$*" > "$dir/config.args"
    fi
    # shellcheck disable=SC2086
    ninja -C "$dir" $targets
    # Run from the build tree, QEMU looks for firmware inside qemu-bundle/
    for d in $(echo "$firmware" | tr : ' '); do
        mkdir -p "$dir/qemu-bundle$(dirname "$d")"
        [ -e "$dir/qemu-bundle$d" ] || ln -s "$d" "$dir/qemu-bundle$d"
    done
}

tsan_build "$out" ppc64-softmmu qemu-system-ppc64 tests/qtest/xics-test

# QEMU's suppressions and ours (tests/tsan-fork.supp: races by design)
supp="$out/suppressions.tsan"
cat "$src/tests/tsan/suppressions.tsan" "$top/tests/tsan-fork.supp" > "$supp"

logs="$out/tsan-logs"
rm -rf "$logs"
mkdir -p "$logs"
cd "$out"
rc=0
TSAN_OPTIONS="suppressions=$supp halt_on_error=0 exitcode=0 die_after_fork=0 report_signal_unsafe=0 history_size=4 log_path=$logs/tsan" \
QTEST_QEMU_BINARY=./qemu-system-ppc64 XICS_STRESS_ROUNDS=$rounds \
    ./tests/qtest/xics-test --tap -p /ppc64/xics/stress || rc=$?
if [ $rc -ne 0 ]; then
    echo "check-tsan: the XICS stress test failed under ThreadSanitizer"
    exit 1
fi

# A guest on the TSan build: our freestanding ppc64 guest
# (tests/guest/ppc64) on pseries,ic-mode=xics under MTTCG, IPIs, device
# interrupts, masking and resends at 2 and 4 vCPUs, then a vCPU stopping
# itself under IPI fire (the BQL-free halt and wake-up paths).  Runs are
# short: TSan's shadow call stack does not follow TCG's longjmp out of
# generated code, so it grows with every guest exception and TSan
# aborts after some 10^4 of them per vCPU (a full Linux boot has far
# more).
make -s -C "$top" -f tests/guest/ppc64/guest.mk guest-ppc64
for run in "2 mode=test n=40 phases=ipi,dev,mixed,mask" \
           "4 mode=test n=4 phases=ipi" \
           "2 mode=stopself n=10"; do
    smp=${run%% *}
    args=${run#* }
    log="$logs/guest-$smp-${args%% *}.log"
    before=$(ls "$logs"/tsan.* 2>/dev/null)
    RUN_GUEST_KILL=1 RUN_GUEST_TIMEOUT=240 \
    TSAN_OPTIONS="suppressions=$supp halt_on_error=0 exitcode=0 die_after_fork=0 report_signal_unsafe=0 history_size=4 log_path=$logs/tsan" \
        /usr/bin/python3 "$top/tests/guest/ppc64/run-guest.py" \
        ./qemu-system-ppc64 "$smp" "$args" > "$log" 2>&1 && grc=0 || grc=$?
    new=$(ls "$logs"/tsan.* 2>/dev/null | grep -vxF "$before" || true)
    if [ $grc -ne 0 ] && [ -n "$new" ] &&
       grep -q "CHECK failed: sanitizer_stackdepot" $new; then
        # TSan's own stack depot overflowed (see above): no verdict, but
        # the reports it wrote before are still checked below.
        echo "check-tsan: guest $smp vCPUs, $args: inconclusive (TSan's shadow stack overflowed)"
        continue
    fi
    if [ $grc -ne 0 ]; then
        echo "check-tsan: the guest ($smp vCPUs, $args) failed under ThreadSanitizer"
        tail -20 "$log"
        exit 1
    fi
    echo "check-tsan: guest $smp vCPUs, $args: passed"
done

# The SMMUv3 command queue's stress test (hw/arm/smmuv3-cmdq-stress.c):
# producers, CONS pollers and translations racing invalidations, in
# threads without the BQL.
out_arm="$top/build-tsan-aarch64"
tsan_build "$out_arm" aarch64-softmmu qemu-system-aarch64 \
    tests/qtest/smmuv3-cmdq-test
rc=0
(cd "$out_arm" &&
 TSAN_OPTIONS="suppressions=$supp halt_on_error=0 exitcode=0 die_after_fork=0 report_signal_unsafe=0 history_size=4 log_path=$logs/tsan" \
 QTEST_QEMU_BINARY=./qemu-system-aarch64 SMMUV3_STRESS_ROUNDS=$smmu_rounds \
     ./tests/qtest/smmuv3-cmdq-test --tap -p /aarch64/smmuv3-cmdq/stress) ||
    rc=$?
if [ $rc -ne 0 ]; then
    echo "check-tsan: the SMMUv3 command queue stress test failed under ThreadSanitizer"
    exit 1
fi
echo "check-tsan: SMMUv3 command queue stress: passed"

# One report per "WARNING: ThreadSanitizer" block; ours if any frame
# of it is in the code the fork made BQL-free.
ours='smmuv3|smmu_|cmdq_|xics|icp_|ics_|ppc_set_irq|ppc_maybe_interrupt|ppc_clear_hard_interrupt|ppc_cpu_has_work|ppc_cpu_exec_interrupt|ppc_cpu_do_interrupt_unlocked|cpu_interrupt|cpu_reset_interrupt|cpu_set_interrupt|cpu_test_interrupt|tcg_handle_interrupt|cpu_handle_interrupt|mttcg_may_continue_unlocked|qemu_wait_halted_unlocked|qemu_halt_poll|qemu_cpu_kick|qemu_wait_io_event|spapr_hcall_unlocked|spapr_hypercall_unlocked|spapr_icp_table'
total=0
mine=0
for f in "$logs"/tsan.*; do
    [ -e "$f" ] || continue
    n=$(grep -c '^WARNING: ThreadSanitizer' "$f" || true)
    total=$((total + n))
    m=$(awk -v re="$ours" '
        /^WARNING: ThreadSanitizer/ { if (hit) c++; hit = 0; inrep = 1 }
        /^SUMMARY: ThreadSanitizer/ { if (hit) c++; hit = 0; inrep = 0 }
        inrep && $0 ~ re { hit = 1 }
        END { print c + 0 }' "$f")
    mine=$((mine + m))
done
echo "check-tsan: $total ThreadSanitizer report(s), $mine involving the XICS / interrupt line / SMMUv3"
if [ "$mine" -ne 0 ]; then
    grep -l -E "$ours" "$logs"/tsan.* | sed 's/^/check-tsan: see /'
    exit 1
fi
echo "check-tsan: PASS"
