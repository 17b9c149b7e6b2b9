# SPDX-License-Identifier: GPL-2.0-or-later
#
# qemu-irq-fork: the two commands are `make demo` and `make check`.
#   make          configure when needed, then build the three binaries
#   make demo     boot each binary, ask QMP, print a summary
#   make check    our tests + the nearest upstream qtests; ends with
#                 "N passed, N failed, N skipped, N repeated"
#   make bench    XICS benchmarks of the fork against stock QEMU (our
#                 ppc64 guest, then Linux: also `make bench-linux`)
#   make check-tsan  the XICS and SMMUv3 command queue stress tests under TSan
#   make pq-status / pq-export   patch queue (scripts/pq)

NINJA ?= ninja

# ccache: key on paths relative to the checkout, so a fresh clone in
# another folder (CI) reuses what an earlier build compiled.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
OBJ := build/obj
BINARIES := qemu-system-x86_64 qemu-system-ppc64 qemu-system-aarch64
# Must match --firmwarepath in ./configure.
FIRMWARE_DIRS := /usr/share/qemu /usr/share/seabios /usr/lib/ipxe/qemu

# Our qtests and the upstream ones nearest to what the fork touches.
QTESTS_x86_64 := fork-smoke-test irq-stats-test amd-iommu-ga-test kvm-apicv-test amd-iommu-test \
                 intel-iommu-test intel-iommu-posted-test iommu-vring-test \
                 qmp-cmd-test device-introspect-test bios-tables-test
QTESTS_ppc64 := fork-smoke-test irq-stats-test xics-test rtas-test qmp-cmd-test \
                device-introspect-test
QTESTS_aarch64 := smmuv3-cmdq-test
QTEST_BINS := $(sort $(QTESTS_x86_64) $(QTESTS_ppc64) $(QTESTS_aarch64))
UNIT_TESTS := test-proc-interrupts test-apicv-probe test-apicv-host test-apicv-trace \
              test-svm-avic-apic test-smmu-iotlb-range
# The pinning of the Debian packages guest tests fetch (tests/guest/PINS;
# offline, a .deb of its own).
GUEST_FETCH_TESTS := pinned-debs-test
# Debian's amd64 kernel booted on the fork.
GUEST_TESTS_x86_64 := amd-iommu-boot
# Debian's ppc64le kernel under MTTCG on pseries,ic-mode=xics; vCPU
# cores plugged and unplugged under IPI load; system calls of a 1-vCPU
# guest without the BQL or an exit from the TB.
LINUX_TESTS_ppc64 := linux-mttcg cpu-hotplug syscall-bql
# tests/kvm/: the start-up matrix on /dev/kvm beside stock (skipped
# without /dev/kvm); libvirt 11.3 as Debian ships it (QEMU as
# libvirt-qemu) starting the installed fork: <domain type='qemu'>
# everywhere, type='kvm' where /dev/kvm exists.
KVM_TESTS := startup-matrix-vs-stock libvirt-domain
# make install / uninstall into a staging DESTDIR (tests/install/).
INSTALL_TESTS := install-test
# Nested KVM test bed (tests/guest/kvm-nested): Debian 6.12 and 7.3 as
# KVM hosts under the fork's TCG, the fork's binary inside.
NESTED_KVM_KERNELS := 6.12 7.3
# The test bed's own failure policy, with canned runs (no VM).
NESTED_KVM_POLICY_TESTS := testbed-policy
NESTED_KVM_TESTS := kvm-nested-smoke kvm-nested-apicv kvm-nested-amd-iommu \
	kvm-nested-avic kvm-nested-posted
# The same 6.12 and 7.3 kernels as guests of the emulated AMD IOMMU.
KVM_HOST_GUEST_TESTS_x86_64 := amd-iommu-events
# How often the nested test bed may repeat a run whose L2 reset or hung
# (testbed.py), for all of `make check` together and for each test bed
# call of the benchmarks: none.  The AVIC L2 hang that once needed 2 was
# Linux 7.3's livelock on a re-injected ExtINT, which patch 0067 avoids
# (100 consecutive posted-pipeline runs clean after it; docs/benchmarks.md,
# "Nested test bed failure rates").  A repeat, where a benchmark allows
# one (`make bench-posted REPEAT_BUDGET=N`), is printed, shown beside its
# test and counted in the closing line.  L0, L1 and KVM failures are
# never repeated.
REPEAT_BUDGET ?= 0
# Fork against stock QEMU of the same base (make stock).
COMPAT_TESTS := xics-migration
# The same for the Intel IOMMU's opt-in posting (x-posted-intr).
COMPAT_TESTS_x86_64 := vtd-posted-migration
# The SMMUv3's command queue held by an error, or disabled, both ways.
COMPAT_TESTS_aarch64 := smmuv3-migration
# Our freestanding ppc64 guest (tests/guest/ppc64/guest, built by
# tests/guest/ppc64/guest.mk) under MTTCG; the compat ones also need stock.
# xics-stop-self: a vCPU in RTAS stop-self stays stopped under H_IPI fire;
# xics-hcall-log: -d int logs lock-free hypercalls with their opcodes.
GUEST_TESTS_ppc64 := xics-mttcg xics-stop-self xics-hcall-log
GUEST_COMPAT_TESTS_ppc64 := xics-live-migration
# Our freestanding x86 L1 hypervisor (tests/guest/x86/avic-l1, built by
# avic-l1.mk) under TCG: the emulated AVIC's exits, checked one by one.
AVIC_L1_TESTS_x86_64 := avic-exits
# Our freestanding two-CPU x86 guest (tests/guest/x86/gif-race, built by
# gif-race.mk) under MTTCG: CPU 0's GIF against CPU 1's FPU status loads.
GIF_RACE_TESTS_x86_64 := gif-race
# Our freestanding two-CPU x86 L1 hypervisors (tests/guest/x86/avic-smp,
# built by avic-smp.mk) under MTTCG: IPIs between L2 vCPUs through the
# emulated AVIC and x2AVIC, each taken once.
AVIC_SMP_TESTS_x86_64 := avic-smp
# Our freestanding two-CPU x86 guest (tests/guest/x86/ipi-halt, built by
# ipi-halt.mk) under MTTCG: L0's own APIC IPIs to a vCPU that halts, each
# taken once.
IPI_HALT_TESTS_x86_64 := ipi-halt
# Our freestanding one-CPU x86 guest (tests/guest/x86/block-access, built
# by block-access.mk): FNSAVE/FXSAVE and their loads across the end of
# RAM (patch 0076: QEMU crashed there).
BLOCK_ACCESS_TESTS_x86_64 := block-access
# Our freestanding x86 L1 hypervisor (tests/guest/x86/inject-race, built
# by inject-race.mk) under MTTCG: each interrupt VMRUN injects reaches L2
# once while QEMU's main loop raises the PIT's ticks
# (0052-target-i386-leave-no-exception_index-behind-after-VM.patch).
INJECT_RACE_TESTS_x86_64 := inject-race
# Our freestanding guest tests/guest/x86/extint-reinject as L2 under Linux
# 7.3's KVM with AVIC in the nested test bed: 8259 interrupts re-injected
# while the 8259 has another, which livelocks that KVM unless QEMU holds
# its window request back
# (0067-target-i386-kvm-no-interrupt-window-while-KVM-may-re.patch).
EXTINT_KVM_TESTS := kvm-nested-extint
EXTINT_KVM_KERNEL := 7.3
# Linux's posted MSI on the emulated Intel IOMMU (x-posted-intr), with a
# kernel built from Debian's source (tests/guest/fetch-posted-msi-guest.sh):
# under MTTCG, and as L2 on KVM in the nested test bed (L1 Linux
# POSTED_MSI_KVM_KERNEL), its emulated and its VFIO NVMe both posted.
POSTED_MSI_TESTS_x86_64 := posted-msi
# Debian's arm64 kernel on virt,iommu=smmuv3 under MTTCG, NVMe and
# virtio-blk behind the SMMU, strict invalidation (tests/guest/arm64/).
SMMUV3_TESTS_aarch64 := smmuv3-io
# Override with an empty POSTED_MSI_KVM_TESTS to leave the nested one out.
POSTED_MSI_KVM_TESTS ?= kvm-nested-posted-msi
POSTED_MSI_KVM_KERNEL := 7.3

.PHONY: all build configure demo check check-build check-tsan stock bench bench-linux bench-avic bench-posted bench-posted-msi bench-smmuv3 bench-resets install uninstall upstream-series pq-status pq-export clean distclean

all: build

$(OBJ)/build.ninja:
	./configure

build: $(OBJ)/build.ninja
	scripts/pq sync --base="$$(sed -n 's/^BASE_DIR=//p' build/config.mk)"
	$(NINJA) -C $(OBJ) $(BINARIES)
	@for b in $(BINARIES); do ln -sf obj/$$b build/$$b; done
	@# Run from the build tree, QEMU looks for its firmware path inside
	@# qemu-bundle/: point those folders at Debian's firmware packages.
	@for d in $(FIRMWARE_DIRS); do \
	    mkdir -p $(OBJ)/qemu-bundle$$(dirname $$d); \
	    [ -e $(OBJ)/qemu-bundle$$d ] || ln -s $$d $(OBJ)/qemu-bundle$$d; \
	done

# make install [PREFIX=/usr/local] [DESTDIR=]: the three binaries as
# $(PREFIX)/bin/qemu-irq-fork-system-<target> (beside Debian's
# qemu-system-* without replacing them), README and docs/ in
# $(PREFIX)/share/doc/qemu-irq-fork (links between them still work).  The binaries find their firmware
# in Debian's packages (FIRMWARE_DIRS, absolute paths compiled in).
# make uninstall removes those binaries and that folder.
PREFIX ?= /usr/local
INSTALL_NAME := qemu-irq-fork
INSTALL_BINDIR = $(DESTDIR)$(PREFIX)/bin
INSTALL_DOCDIR = $(DESTDIR)$(PREFIX)/share/doc/$(INSTALL_NAME)

install: build
	@case "$(PREFIX)" in /*) ;; *) echo "make install: PREFIX=$(PREFIX)" \
	    "is not an absolute path (e.g. PREFIX=/usr/local)" >&2; exit 1;; esac
	install -d $(INSTALL_BINDIR) $(INSTALL_DOCDIR)
	@for b in $(BINARIES); do \
	    echo "install $(INSTALL_BINDIR)/$(INSTALL_NAME)-$${b#qemu-}"; \
	    install -m 0755 $(OBJ)/$$b \
	        $(INSTALL_BINDIR)/$(INSTALL_NAME)-$${b#qemu-} || exit 1; \
	done
	install -d $(INSTALL_DOCDIR)/docs
	install -m 0644 README.md $(INSTALL_DOCDIR)/
	install -m 0644 docs/*.md $(INSTALL_DOCDIR)/docs/

uninstall:
	rm -f $(foreach b,$(BINARIES),$(INSTALL_BINDIR)/$(INSTALL_NAME)-$(b:qemu-%=%))
	rm -rf $(INSTALL_DOCDIR)

# The patches docs/patches.md marks "upstream candidate", as a
# git format-patch series on the pinned base alone (build/upstream-series/);
# make check also builds it (scripts/upstream-series.sh --check).
upstream-series: $(OBJ)/build.ninja
	sh scripts/upstream-series.sh

check-build: build
	$(NINJA) -C $(OBJ) $(addprefix tests/qtest/,$(QTEST_BINS)) \
	    $(addprefix tests/unit/,$(UNIT_TESTS))

check: check-build stock ipi-bench-x86
	QTESTS_x86_64="$(QTESTS_x86_64)" QTESTS_ppc64="$(QTESTS_ppc64)" \
	    QTESTS_aarch64="$(QTESTS_aarch64)" \
	    SMMUV3_TESTS_aarch64="$(SMMUV3_TESTS_aarch64)" \
	    UNIT_TESTS="$(UNIT_TESTS)" COMPAT_TESTS="$(COMPAT_TESTS)" \
	    COMPAT_TESTS_x86_64="$(COMPAT_TESTS_x86_64)" \
	    COMPAT_TESTS_aarch64="$(COMPAT_TESTS_aarch64)" \
	    KVM_TESTS="$(KVM_TESTS)" INSTALL_TESTS="$(INSTALL_TESTS)" \
	    NESTED_KVM_KERNELS="$(NESTED_KVM_KERNELS)" \
	    NESTED_KVM_TESTS="$(NESTED_KVM_TESTS)" \
	    NESTED_KVM_POLICY_TESTS="$(NESTED_KVM_POLICY_TESTS)" \
	    KVM_HOST_GUEST_TESTS_x86_64="$(KVM_HOST_GUEST_TESTS_x86_64)" \
	    GUEST_FETCH_TESTS="$(GUEST_FETCH_TESTS)" \
	    GUEST_TESTS_x86_64="$(GUEST_TESTS_x86_64)" \
	    LINUX_TESTS_ppc64="$(LINUX_TESTS_ppc64)" \
	    GUEST_TESTS_ppc64="$(GUEST_TESTS_ppc64)" \
	    GUEST_COMPAT_TESTS_ppc64="$(GUEST_COMPAT_TESTS_ppc64)" \
	    AVIC_L1_TESTS_x86_64="$(AVIC_L1_TESTS_x86_64)" \
	    GIF_RACE_TESTS_x86_64="$(GIF_RACE_TESTS_x86_64)" \
	    AVIC_SMP_TESTS_x86_64="$(AVIC_SMP_TESTS_x86_64)" \
	    IPI_HALT_TESTS_x86_64="$(IPI_HALT_TESTS_x86_64)" \
	    BLOCK_ACCESS_TESTS_x86_64="$(BLOCK_ACCESS_TESTS_x86_64)" \
	    INJECT_RACE_TESTS_x86_64="$(INJECT_RACE_TESTS_x86_64)" \
	    EXTINT_KVM_TESTS="$(EXTINT_KVM_TESTS)" \
	    EXTINT_KVM_KERNEL="$(EXTINT_KVM_KERNEL)" \
	    POSTED_MSI_TESTS_x86_64="$(POSTED_MSI_TESTS_x86_64)" \
	    POSTED_MSI_KVM_TESTS="$(POSTED_MSI_KVM_TESTS)" \
	    POSTED_MSI_KVM_KERNEL="$(POSTED_MSI_KVM_KERNEL)" \
	    REPEAT_BUDGET="$(REPEAT_BUDGET)" scripts/run-checks.sh

# The XICS and SMMUv3 command queue stress tests under ThreadSanitizer
# (own builds in build-tsan/ and build-tsan-aarch64/, ~15 min each cold
# on two cores; not part of `make check`).
check-tsan: build
	scripts/check-tsan.sh

# Unpatched QEMU from the same base, for side-by-side tests and benchmarks.
stock: build
	scripts/build-stock.sh

demo: build
	/usr/bin/python3 scripts/demo.py

# XICS benchmark, fork against stock, with our ppc64 guest (results go
# to docs/benchmarks.md by hand).  BENCH_RUNS runs per binary and size.
# Then the Linux-guest benchmark (idle wake-ups and IPI bursts: futex
# ping-pong and membarrier in Debian's ppc64le kernel; fork xics against
# stock xics and stock xive), also alone as `make bench-linux`;
# BENCH_LINUX_SECONDS per workload phase.
BENCH_RUNS ?= 5
BENCH_LINUX_SECONDS ?= 5
BENCH_LINUX = /usr/bin/python3 tests/guest/ppc64-linux/xics-linux-bench.py \
	    build/qemu-system-ppc64 build-stock/qemu-system-ppc64 $(BENCH_RUNS) \
	    --seconds $(BENCH_LINUX_SECONDS)
bench: build stock guest-ppc64 ipi-bench
	/usr/bin/python3 tests/guest/ppc64/xics-bench.py \
	    build/qemu-system-ppc64 build-stock/qemu-system-ppc64 $(BENCH_RUNS)
	$(BENCH_LINUX)

bench-linux: build stock ipi-bench
	$(BENCH_LINUX)

# The emulated AVIC (TCG, nested SVM): a 2-vCPU L2 Linux's IPI load
# under L1 KVM with kvm_amd avic=1 against avic=0 (results go to
# docs/benchmarks.md by hand); BENCH_AVIC_RUNS runs each, on L1 Linux
# BENCH_AVIC_KERNEL, BENCH_AVIC_SECONDS per workload.
BENCH_AVIC_RUNS ?= 5
BENCH_AVIC_SECONDS ?= 4
BENCH_AVIC_KERNEL ?= 6.12
bench-avic: build ipi-bench-x86
	TESTBED_REPEATS=$(REPEAT_BUDGET) /usr/bin/python3 tests/guest/kvm-nested/kvm-nested-avic-bench.py \
	    build/qemu-system-x86_64 \
	    "$$(sh tests/guest/fetch-kvm-host.sh $(BENCH_AVIC_KERNEL))" \
	    $(BENCH_AVIC_RUNS) $(BENCH_AVIC_SECONDS)

# Posted device interrupts end to end (TCG AVIC + AMD IOMMU GA mode,
# an NVMe controller assigned to L2 through vfio-pci in L1): GA-log
# interrupts, doorbells, wake-ups and reads/s with L1 Linux 6.12
# against 7.3 at 2, 4 and 8 L2 vCPUs (results go to docs/benchmarks.md
# by hand), in two regimes: readers that block, and readers beside a
# busy loop on each L2 vCPU (preempted while runnable).  The default
# set is small (one run per cell, 2 and 4 L2 vCPUs: 4 minutes here);
# BENCH_POSTED_FULL=1 gives the full table (3 runs, 2, 4 and 8 vCPUs).
BENCH_POSTED_KERNELS ?= 6.12 7.3
BENCH_POSTED_REGIMES ?= blocking preempted
ifeq ($(BENCH_POSTED_FULL),1)
BENCH_POSTED_VCPUS ?= 2 4 8
BENCH_POSTED_RUNS ?= 3
BENCH_POSTED_READS ?= 1000
else
BENCH_POSTED_VCPUS ?= 2 4
BENCH_POSTED_RUNS ?= 1
BENCH_POSTED_READS ?= 500
endif
bench-posted: build
	TESTBED_REPEATS=$(REPEAT_BUDGET) /usr/bin/python3 tests/guest/kvm-nested/kvm-nested-posted-bench.py \
	    build/qemu-system-x86_64 "$(BENCH_POSTED_KERNELS)" \
	    "$(BENCH_POSTED_VCPUS)" $(BENCH_POSTED_RUNS) $(BENCH_POSTED_READS) \
	    "$(BENCH_POSTED_REGIMES)"

# Nested test bed failure rates: how often L0, L1 and L2 fail, nothing
# repeated, with stock QEMU and the fork (plain, and with AVIC/x2AVIC
# and the GA-mode IOMMU) as L0, L1 Linux BENCH_RESETS_KERNEL, L2 boots
# at 2 and 8 vCPUs (BENCH_RESETS_WORKLOADS), BENCH_RESETS_RUNS rounds
# (results go to docs/benchmarks.md by hand).
BENCH_RESETS_RUNS ?= 50
BENCH_RESETS_KERNEL ?= 7.3
BENCH_RESETS_L0S ?= stock,fork,fork-avic
BENCH_RESETS_WORKLOADS ?= smoke,smp8
bench-resets: build stock
	/usr/bin/python3 tests/guest/kvm-nested/reset-rate.py \
	    build/qemu-system-x86_64 build-stock/qemu-system-x86_64 \
	    "$$(sh tests/guest/fetch-kvm-host.sh $(BENCH_RESETS_KERNEL))" \
	    $(BENCH_RESETS_RUNS) $(BENCH_RESETS_L0S) $(BENCH_RESETS_WORKLOADS)

# Linux's posted MSI (seed 001's metric): reads/s and PMN notifications
# per NVMe MSI on the fork with x-posted-intr on and off and on stock,
# runs alternated (results go to docs/benchmarks.md by hand).
BENCH_POSTED_MSI_RUNS ?= 5
BENCH_POSTED_MSI_SECONDS ?= 5
BENCH_POSTED_MSI_DISKS ?= 2
# The SMMUv3 command queue, fork against stock (tests/guest/arm64/):
# 1, 2 and 4 vCPUs, strict and lazy invalidation, runs alternated.
SMMUV3_BENCH_RUNS ?= 3
bench-smmuv3: build stock
	/usr/bin/python3 tests/guest/arm64/smmuv3-bench.py \
	    build/qemu-system-aarch64 build-stock/qemu-system-aarch64 \
	    "$$(sh tests/guest/fetch-arm64-guest.sh)" $(SMMUV3_BENCH_RUNS)

bench-posted-msi: build stock
	/usr/bin/python3 tests/guest/posted-msi/posted-msi-bench.py \
	    build/qemu-system-x86_64 build-stock/qemu-system-x86_64 \
	    "$$(sh tests/guest/fetch-posted-msi-guest.sh)" \
	    $(BENCH_POSTED_MSI_RUNS) $(BENCH_POSTED_MSI_SECONDS) \
	    $(BENCH_POSTED_MSI_DISKS)

include tests/guest/ppc64/guest.mk
include tests/guest/ppc64-linux/ipi-bench.mk
include tests/guest/x86/avic-l1/avic-l1.mk
include tests/guest/x86/gif-race/gif-race.mk
include tests/guest/x86/avic-smp/avic-smp.mk
include tests/guest/x86/ipi-halt/ipi-halt.mk
include tests/guest/x86/block-access/block-access.mk
include tests/guest/x86/extint-reinject/extint-reinject.mk
include tests/guest/x86/inject-race/inject-race.mk

pq-status:
	scripts/pq status

pq-export:
	scripts/pq export

clean:
	-$(NINJA) -C $(OBJ) clean

distclean:
	scripts/pq status
	rm -rf build
