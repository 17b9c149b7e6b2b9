#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs the fork's test list (set by the Makefile): each qtest on each
# target named in QTESTS_<target>, the unit tests in UNIT_TESTS, the
# checks of the guests' pinned packages in GUEST_FETCH_TESTS, the
# guest boot tests in GUEST_TESTS_x86_64 (guest fetched from Debian's
# registry by tests/guest/fetch-x86-guest.sh), Debian's arm64 Linux on
# the SMMUv3 in SMMUV3_TESTS_aarch64, Debian's ppc64le Linux
# in LINUX_TESTS_ppc64 (tests/guest/fetch-ppc64-guest.sh), the
# fork-vs-stock tests in COMPAT_TESTS (ppc64), COMPAT_TESTS_x86_64 and
# COMPAT_TESTS_aarch64,
# and the tests with our own ppc64 guest (tests/guest/ppc64, built by
# guest.mk): GUEST_TESTS_ppc64 on the fork,
# GUEST_COMPAT_TESTS_ppc64 on the fork and stock, the tests in KVM_TESTS
# on /dev/kvm where it exists (tests/kvm/; libvirt-* with the binary that
# make install installs), make install's own in INSTALL_TESTS
# (tests/install/), the nested KVM test bed's tests in
# NESTED_KVM_TESTS on each L1 kernel of NESTED_KVM_KERNELS
# (tests/guest/kvm-nested/), and with those kernels as guests the tests in
# KVM_HOST_GUEST_TESTS_x86_64 (tests/guest/x86/), and the tests with our own
# x86 L1 hypervisor in AVIC_L1_TESTS_x86_64 (tests/guest/x86/avic-l1, built
# by avic-l1.mk) and with our own two-CPU x86 guest in GIF_RACE_TESTS_x86_64
# (tests/guest/x86/gif-race, built by gif-race.mk), with our own two-CPU
# AVIC L1 hypervisor in AVIC_SMP_TESTS_x86_64 (tests/guest/x86/avic-smp),
# with our own two-CPU guest of L0's APIC IPIs in IPI_HALT_TESTS_x86_64
# (tests/guest/x86/ipi-halt), with our own one-CPU guest of block
# accesses across the end of RAM in BLOCK_ACCESS_TESTS_x86_64
# (tests/guest/x86/block-access), and with our own L1
# hypervisor that injects interrupts in INJECT_RACE_TESTS_x86_64
# (tests/guest/x86/inject-race), and EXTINT_KVM_TESTS: our own guest
# tests/guest/x86/extint-reinject as L2 in the nested test bed under
# Linux EXTINT_KVM_KERNEL.  Prints one line per
# test and ends with "N passed, N failed, N skipped, N repeated"; exits
# non-zero on a failure or when the nested test bed repeated runs more
# often than REPEAT_BUDGET (the Makefile's; 0 if unset).  Logs go to
# build/check-logs/.
#
# Skips: a test that exits 77 is skipped; a passing test's own skipped
# parts count as skips too (a "SUBTEST-SKIP: case: reason" line of a
# script, a TAP "ok N ... # SKIP" line of a qtest).  Repeats: each
# "TESTBED-REPEAT" line of the nested test bed (testbed.py) counts one
# and is shown beside the test's result.

top=$(cd "$(dirname "$0")/.." && pwd)
obj="$top/build/obj"
logs="$top/build/check-logs"
mkdir -p "$logs"

passed=0
failed=0
skipped=0
repeated=0
failures=()

# Python tests check with assert in places: never let -O drop them.
unset PYTHONOPTIMIZE
repeat_budget=${REPEAT_BUDGET:-0}
case "$repeat_budget" in
    ''|*[!0-9]*) echo "REPEAT_BUDGET=$repeat_budget: want a count" >&2
                 exit 2 ;;
esac
# testbed.py: how often one test bed call may repeat an L2 run
export TESTBED_REPEATS=$repeat_budget

run_one() {
    local name=$1 timeout=$2
    shift 2
    local log="$logs/${name//\//_}.log"
    local start=$SECONDS rc reps subskips note=
    timeout --kill-after=10 "$timeout" "$@" >"$log" 2>&1
    rc=$?
    reps=$(grep -c '^TESTBED-REPEAT ' "$log")
    if [ "$reps" -gt 0 ]; then
        repeated=$((repeated + reps))
        note=" ($reps repeated: $(grep '^TESTBED-REPEAT ' "$log" |
                 sed 's/.*cause=\("[^"]*"\).*/\1/' | sort | uniq -c |
                 sed 's/^ *//' | paste -sd ';' -))"
    fi
    if [ $rc -eq 0 ]; then
        passed=$((passed + 1))
        subskips=$(grep -c -E '^SUBTEST-SKIP: |^ok [0-9]+ .*# SKIP' "$log")
        if [ "$subskips" -gt 0 ]; then
            skipped=$((skipped + subskips))
            note="$note ($subskips skipped inside)"
        fi
        printf 'PASS  %-40s %4ds%s\n' "$name" $((SECONDS - start)) "$note"
        grep -E '^SUBTEST-SKIP: |^ok [0-9]+ .*# SKIP' "$log" |
            sed 's/^/      | /'
    elif [ $rc -eq 77 ]; then
        skipped=$((skipped + 1))
        printf 'SKIP  %-40s %4ds: %s\n' "$name" $((SECONDS - start)) \
            "$(tail -n 1 "$log")"
    else
        failed=$((failed + 1))
        failures+=("$name")
        printf 'FAIL  %-40s %4ds (rc %d, log %s)%s\n' "$name" \
            $((SECONDS - start)) $rc "${log#$top/}" "$note"
        grep '^TESTBED-FAILURE ' "$log" | head -n 3 | sed 's/^/      | /'
        tail -n 15 "$log" | sed 's/^/      | /'
    fi
}

cd "$obj"
# Only the parts of long upstream tests that cover what the fork touches.
qtest_filter() {
    case "$1" in
    bios-tables-test) echo "-p /x86_64/acpi/q35/ivrs" ;;
    esac
}

for target in x86_64 ppc64 aarch64; do
    var="QTESTS_$target"
    for t in ${!var}; do
        run_one "qtest-$target/$t" 900 \
            env QTEST_QEMU_BINARY="./qemu-system-$target" \
                PYTHON="$obj/pyvenv/bin/python3" \
                "./tests/qtest/$t" --tap -k $(qtest_filter "$t")
    done
done

for t in $UNIT_TESTS; do
    run_one "unit/$t" 300 "./tests/unit/$t" --tap -k
done

# The pinned Debian packages' checks (tests/guest/PINS), before any fetch.
for t in $GUEST_FETCH_TESTS; do
    run_one "guest/$t" 120 sh "$top/tests/guest/$t.sh"
done

# Debian Linux guest tests: fetch the guest, then run each test script
# with the binary and the guest folder; a failed fetch fails the tests.
# Usage: linux_guest_tests LABEL FETCH-SCRIPT TEST-DIR BINARY TESTS...
linux_guest_tests() {
    local label=$1 fetch=$2 dir=$3 binary=$4 guest t
    shift 4
    [ $# -gt 0 ] || return 0
    if guest=$(sh "$top/tests/guest/$fetch"); then
        for t in "$@"; do
            run_one "$label/$t" 600 /usr/bin/python3 \
                "$top/tests/guest/$dir/$t.py" "$top/build/$binary" "$guest"
        done
    else
        for t in "$@"; do
            failed=$((failed + 1))
            failures+=("$label/$t")
            echo "FAIL  $label/$t: the guest could not be fetched ($fetch)"
        done
    fi
}

linux_guest_tests guest-x86_64 fetch-x86-guest.sh x86 qemu-system-x86_64 \
    $GUEST_TESTS_x86_64
linux_guest_tests linux-ppc64 fetch-ppc64-guest.sh ppc64-linux \
    qemu-system-ppc64 $LINUX_TESTS_ppc64

# The upstream candidates (docs/patches.md) on the pinned base alone:
# they apply and build.
run_one "upstream/series" 1800 sh "$top/scripts/upstream-series.sh" --check

# make install and uninstall (tests/install/).
for t in $INSTALL_TESTS; do
    run_one "install/$t" 300 sh "$top/tests/install/$t.sh" "$top"
done

# KVM on /dev/kvm (the tests skip without it): the fork's binary, stock's
# beside it.
# Tests named *-vs-stock also get stock's binary; libvirt-* get the
# installed binary (make install into a fresh folder that libvirt's
# unprivileged QEMU user can enter).
inst=$(mktemp -d /tmp/qemu-irq-fork-install.XXXXXX)
trap 'rm -rf "$inst"' EXIT
chmod 755 "$inst"
make -s -C "$top" install DESTDIR="$inst" >"$logs/install.log" 2>&1 ||
    echo "make install failed (log build/check-logs/install.log)"
for t in $KVM_TESTS; do
    binary=$top/build/qemu-system-x86_64
    case "$t" in
    *-vs-stock) stock_arg="$top/build-stock/qemu-system-x86_64" ;;
    libvirt-*) stock_arg=
               binary=$inst/usr/local/bin/qemu-irq-fork-system-x86_64 ;;
    *) stock_arg= ;;
    esac
    run_one "kvm/$t" 600 /usr/bin/python3 "$top/tests/kvm/$t.py" \
        "$binary" $stock_arg
done

# The nested KVM test bed's failure policy (canned runs, no VM), then
# the test bed itself: Debian kernels as KVM hosts (L1) under the
# fork's TCG, the fork's binary in them.
for t in $NESTED_KVM_POLICY_TESTS; do
    run_one "kvm-nested/$t" 60 /usr/bin/python3 \
        "$top/tests/guest/kvm-nested/$t.py"
done
kvm_hosts=()
for v in $NESTED_KVM_KERNELS; do
    if host=$(sh "$top/tests/guest/fetch-kvm-host.sh" "$v"); then
        kvm_hosts+=("$host")
        for t in $NESTED_KVM_TESTS; do
            run_one "kvm-nested-$v/$t" 1500 /usr/bin/python3 \
                "$top/tests/guest/kvm-nested/$t.py" \
                "$top/build/qemu-system-x86_64" "$host"
        done
    else
        for t in $NESTED_KVM_TESTS; do
            failed=$((failed + 1))
            failures+=("kvm-nested-$v/$t")
            echo "FAIL  kvm-nested-$v/$t: Linux $v could not be fetched"
        done
    fi
done

# Those kernels as guests of the fork's emulated AMD IOMMU.
for t in $KVM_HOST_GUEST_TESTS_x86_64; do
    if [ ${#kvm_hosts[@]} -eq $(echo $NESTED_KVM_KERNELS | wc -w) ]; then
        run_one "guest-x86_64/$t" 600 /usr/bin/python3 \
            "$top/tests/guest/x86/$t.py" "$top/build/qemu-system-x86_64" \
            "${kvm_hosts[@]}"
    else
        failed=$((failed + 1))
        failures+=("guest-x86_64/$t")
        echo "FAIL  guest-x86_64/$t: a kernel could not be fetched"
    fi
done

# Tests whose guest did not build: each one fails, naming the build log.
fail_unbuilt() {
    local prefix=$1 why=$2 log=$3 t
    shift 3
    for t in "$@"; do
        failed=$((failed + 1))
        failures+=("$prefix/$t")
        echo "FAIL  $prefix/$t: $why (log build/check-logs/$log)"
    done
}

# Our own freestanding x86 guest tests/guest/x86/$1 (built by its $1.mk
# into build/guest-x86/$1.elf): each test of $2 runs as
# $1/<test>.py QEMU ELF [more args].
run_own_x86_guest() {
    local guest=$1 tests=$2 t
    shift 2
    [ -n "${tests// }" ] || return 0
    if make -s -C "$top" -f "tests/guest/x86/$guest/$guest.mk" "$guest" \
            >"$logs/$guest-build.log" 2>&1; then
        for t in $tests; do
            run_one "guest-x86_64/$t" 300 /usr/bin/python3 \
                "$top/tests/guest/x86/$guest/$t.py" \
                "$top/build/qemu-system-x86_64" \
                "$top/build/guest-x86/$guest.elf" "$@"
        done
    else
        fail_unbuilt guest-x86_64 "$guest did not build" "$guest-build.log" \
            $tests
    fi
}

run_own_x86_guest avic-l1 "$AVIC_L1_TESTS_x86_64"
run_own_x86_guest avic-smp "$AVIC_SMP_TESTS_x86_64"
run_own_x86_guest ipi-halt "$IPI_HALT_TESTS_x86_64"
run_own_x86_guest block-access "$BLOCK_ACCESS_TESTS_x86_64"
run_own_x86_guest gif-race "$GIF_RACE_TESTS_x86_64" \
    "$top/build-stock/qemu-system-x86_64"
run_own_x86_guest inject-race "$INJECT_RACE_TESTS_x86_64" \
    "$top/build-stock/qemu-system-x86_64"

# Our freestanding extint-reinject guest as L2 in the nested test bed
# (L1 Linux $EXTINT_KVM_KERNEL): the fork as L0 and as L1's QEMU.
if [ -n "${EXTINT_KVM_TESTS// }" ]; then
    if make -s -C "$top" -f tests/guest/x86/extint-reinject/extint-reinject.mk \
            extint-reinject >"$logs/extint-reinject-build.log" 2>&1 &&
       host=$(sh "$top/tests/guest/fetch-kvm-host.sh" "$EXTINT_KVM_KERNEL" \
              2>>"$logs/extint-reinject-build.log"); then
        for t in $EXTINT_KVM_TESTS; do
            run_one "kvm-nested-$EXTINT_KVM_KERNEL/$t" 900 /usr/bin/python3 \
                "$top/tests/guest/kvm-nested/$t.py" \
                "$top/build/qemu-system-x86_64" "$host" \
                "$top/build/guest-x86/extint-reinject.elf"
        done
    else
        fail_unbuilt "kvm-nested-$EXTINT_KVM_KERNEL" \
            "extint-reinject or Linux $EXTINT_KVM_KERNEL unavailable" \
            extint-reinject-build.log $EXTINT_KVM_TESTS
    fi
fi

# Debian's arm64 kernel on virt with the SMMUv3 (fetch-arm64-guest.sh).
if [ -n "${SMMUV3_TESTS_aarch64// }" ]; then
    if arm64=$(sh "$top/tests/guest/fetch-arm64-guest.sh" \
               2>"$logs/arm64-fetch.log"); then
        for t in $SMMUV3_TESTS_aarch64; do
            run_one "guest-aarch64/$t" 600 /usr/bin/python3 \
                "$top/tests/guest/arm64/$t.py" \
                "$top/build/qemu-system-aarch64" "$arm64"
        done
    else
        fail_unbuilt guest-aarch64 "the arm64 guest could not be fetched" \
            arm64-fetch.log $SMMUV3_TESTS_aarch64
    fi
fi

# Linux's posted MSI on the emulated Intel IOMMU: a kernel built from
# Debian's source (fetch-posted-msi-guest.sh), under MTTCG and as L2 on
# KVM in the nested test bed.
if [ -n "${POSTED_MSI_TESTS_x86_64// }${POSTED_MSI_KVM_TESTS// }" ]; then
    if pmsi=$(sh "$top/tests/guest/fetch-posted-msi-guest.sh" \
              2>"$logs/posted-msi-fetch.log"); then
        for t in $POSTED_MSI_TESTS_x86_64; do
            run_one "guest-x86_64/$t" 600 /usr/bin/python3 \
                "$top/tests/guest/posted-msi/$t.py" \
                "$top/build/qemu-system-x86_64" "$pmsi"
        done
        if host=$(sh "$top/tests/guest/fetch-kvm-host.sh" \
                  "$POSTED_MSI_KVM_KERNEL"); then
            for t in $POSTED_MSI_KVM_TESTS; do
                run_one "kvm-nested-$POSTED_MSI_KVM_KERNEL/$t" 1500 \
                    /usr/bin/python3 "$top/tests/guest/kvm-nested/$t.py" \
                    "$top/build/qemu-system-x86_64" "$host" "$pmsi"
            done
        else
            fail_unbuilt "kvm-nested-$POSTED_MSI_KVM_KERNEL" \
                "Linux $POSTED_MSI_KVM_KERNEL could not be fetched" \
                posted-msi-fetch.log $POSTED_MSI_KVM_TESTS
        fi
    else
        fail_unbuilt guest-x86_64 "the posted-MSI guest could not be built" \
            posted-msi-fetch.log $POSTED_MSI_TESTS_x86_64 \
            $POSTED_MSI_KVM_TESTS
    fi
fi

for t in $COMPAT_TESTS; do
    run_one "compat/$t" 300 /usr/bin/python3 "$top/tests/compat/$t.py" \
        "$top/build/qemu-system-ppc64" "$top/build-stock/qemu-system-ppc64"
done
for t in $COMPAT_TESTS_x86_64; do
    run_one "compat/$t" 300 /usr/bin/python3 "$top/tests/compat/$t.py" \
        "$top/build/qemu-system-x86_64" "$top/build-stock/qemu-system-x86_64"
done
for t in $COMPAT_TESTS_aarch64; do
    run_one "compat/$t" 300 /usr/bin/python3 "$top/tests/compat/$t.py" \
        "$top/build/qemu-system-aarch64" \
        "$top/build-stock/qemu-system-aarch64"
done

ppc64_guest_tests="$GUEST_TESTS_ppc64 $GUEST_COMPAT_TESTS_ppc64"
if [ -n "${ppc64_guest_tests// }" ]; then
    if make -s -C "$top" -f tests/guest/ppc64/guest.mk guest-ppc64 \
            >"$logs/guest-ppc64-build.log" 2>&1; then
        for t in $GUEST_TESTS_ppc64; do
            run_one "guest-ppc64/$t" 300 /usr/bin/python3 \
                "$top/tests/guest/ppc64/$t.py" "$top/build/qemu-system-ppc64"
        done
        for t in $GUEST_COMPAT_TESTS_ppc64; do
            run_one "compat/$t" 300 /usr/bin/python3 \
                "$top/tests/guest/ppc64/$t.py" \
                "$top/build/qemu-system-ppc64" \
                "$top/build-stock/qemu-system-ppc64"
        done
    else
        fail_unbuilt guest-ppc64 "the ppc64 guest did not build" \
            guest-ppc64-build.log $ppc64_guest_tests
    fi
fi

echo
if [ $failed -ne 0 ]; then
    echo "failed: ${failures[*]}"
fi
over_budget=0
if [ $repeated -gt "$repeat_budget" ]; then
    over_budget=1
    echo "the nested test bed repeated $repeated runs, over the budget of" \
        "$repeat_budget (REPEAT_BUDGET in the Makefile)"
fi
echo "$passed passed, $failed failed, $skipped skipped, $repeated repeated" \
    "(tests took $((SECONDS / 60)) min $((SECONDS % 60)) s)"
[ $failed -eq 0 ] && [ $over_budget -eq 0 ]
