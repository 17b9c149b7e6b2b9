# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds ipi-bench (tests/guest/ppc64-linux/ipi-bench.c), the static
# ppc64le Linux program of the Linux-guest XICS benchmark, with Debian's
# powerpc64le cross compiler into build/guest-ppc64-linux/ipi-bench; only
# rebuilt when its source changes.  Included by the top Makefile (make
# bench, make bench-linux), run by xics-linux-bench.py, or alone from the
# top of the tree: make -f tests/guest/ppc64-linux/ipi-bench.mk

PPC64_CROSS ?= powerpc64le-linux-gnu-
IPI_BENCH_SRC := tests/guest/ppc64-linux/ipi-bench.c
IPI_BENCH_BIN := build/guest-ppc64-linux/ipi-bench
# The same program for x86_64, the L2 load of the nested AVIC test and
# benchmark (tests/guest/kvm-nested/), with the host's compiler.
IPI_BENCH_X86_BIN := build/guest-x86/ipi-bench

.PHONY: ipi-bench ipi-bench-x86
ipi-bench: $(IPI_BENCH_BIN)
ipi-bench-x86: $(IPI_BENCH_X86_BIN)

$(IPI_BENCH_X86_BIN): $(IPI_BENCH_SRC) tests/guest/ppc64-linux/ipi-bench.mk
	@mkdir -p $(dir $@)
	gcc -static -O2 -pthread -Wall -Wextra -o $@ $<

$(IPI_BENCH_BIN): $(IPI_BENCH_SRC) tests/guest/ppc64-linux/ipi-bench.mk
	@command -v $(PPC64_CROSS)gcc >/dev/null || { \
	    echo "ipi-bench: $(PPC64_CROSS)gcc is missing; run" \
	         "scripts/install-deps.sh as root" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(PPC64_CROSS)gcc -static -O2 -pthread -Wall -Wextra -o $@ $<
