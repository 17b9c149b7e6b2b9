# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds the ppc64 test guest (tests/guest/ppc64/guest/) with Debian's
# powerpc64le cross compiler into build/guest-ppc64/xics-guest.elf; only
# rebuilt when a source changes.  Included by the top Makefile, or run
# alone from the top of the tree: make -f tests/guest/ppc64/guest.mk

PPC64_GUEST_SRC := tests/guest/ppc64/guest
PPC64_GUEST_OUT := build/guest-ppc64
PPC64_GUEST_ELF := $(PPC64_GUEST_OUT)/xics-guest.elf
PPC64_CROSS ?= powerpc64le-linux-gnu-
PPC64_GUEST_CFLAGS := -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
    -ffreestanding -fno-builtin -fno-stack-protector -fno-pic \
    -mcpu=power8 -mno-altivec -mno-vsx -msoft-float -mcmodel=medium \
    -mabi=elfv2 -mlittle-endian -ffixed-r13 -nostdinc

PPC64_GUEST_C := $(wildcard $(PPC64_GUEST_SRC)/*.c)
PPC64_GUEST_OBJS := $(patsubst $(PPC64_GUEST_SRC)/%.c,$(PPC64_GUEST_OUT)/%.o,$(PPC64_GUEST_C)) \
    $(PPC64_GUEST_OUT)/start.o

.PHONY: guest-ppc64
guest-ppc64: $(PPC64_GUEST_ELF)

PPC64_GUEST_MK := tests/guest/ppc64/guest.mk

PPC64_CROSS_CHECK = @command -v $(PPC64_CROSS)gcc >/dev/null || { \
    echo "guest-ppc64: $(PPC64_CROSS)gcc is missing; run" \
         "scripts/install-deps.sh as root" >&2; exit 1; }

$(PPC64_GUEST_OUT)/%.o: $(PPC64_GUEST_SRC)/%.c $(PPC64_GUEST_SRC)/guest.h \
                        $(PPC64_GUEST_MK)
	$(PPC64_CROSS_CHECK)
	@mkdir -p $(PPC64_GUEST_OUT)
	$(PPC64_CROSS)gcc $(PPC64_GUEST_CFLAGS) -c -o $@ $<

$(PPC64_GUEST_OUT)/start.o: $(PPC64_GUEST_SRC)/start.S $(PPC64_GUEST_MK)
	$(PPC64_CROSS_CHECK)
	@mkdir -p $(PPC64_GUEST_OUT)
	$(PPC64_CROSS)gcc $(PPC64_GUEST_CFLAGS) -c -o $@ $<

$(PPC64_GUEST_ELF): $(PPC64_GUEST_OBJS) $(PPC64_GUEST_SRC)/guest.lds
	$(PPC64_CROSS)ld -nostdlib -static --no-warn-rwx-segments \
	    -T $(PPC64_GUEST_SRC)/guest.lds \
	    -o $@ $(PPC64_GUEST_OBJS)
