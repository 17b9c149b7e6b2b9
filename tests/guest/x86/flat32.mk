# SPDX-License-Identifier: GPL-2.0-or-later
#
# The build rule of our freestanding 32-bit x86 guests (they share
# flat32.inc and flat32.h): $(call flat32_guest,NAME) builds
# tests/guest/x86/NAME/ (start.S, NAME.c, NAME.h, NAME.ld) with the
# host's gcc in 32-bit mode into build/guest-x86/NAME.elf, with a phony
# target NAME.  Included by
# each guest's NAME.mk, which the top Makefile and scripts/run-checks.sh
# use.

ifndef FLAT32_MK
FLAT32_MK := 1

FLAT32_CFLAGS := -m32 -ffreestanding -fno-pic -fno-pie -fno-stack-protector \
	-nostdlib -O2 -Wall -Wextra -mno-sse -mno-mmx

define flat32_guest
.PHONY: $(1)
$(1): build/guest-x86/$(1).elf

build/guest-x86/$(1).elf: $$(addprefix tests/guest/x86/$(1)/,start.S $(1).c \
		$(1).h $(1).ld $(1).mk) \
		tests/guest/x86/flat32.inc tests/guest/x86/flat32.h tests/guest/x86/flat32.mk
	@mkdir -p $$(dir $$@)
	gcc $$(FLAT32_CFLAGS) -c -o $$@.start.o tests/guest/x86/$(1)/start.S
	gcc $$(FLAT32_CFLAGS) -c -o $$@.main.o tests/guest/x86/$(1)/$(1).c
	ld -m elf_i386 --no-warn-rwx-segments -T tests/guest/x86/$(1)/$(1).ld \
		-o $$@ $$@.start.o $$@.main.o
endef

endif
