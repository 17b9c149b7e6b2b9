# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds avic-l1 (tests/guest/x86/avic-l1/), the freestanding L1
# hypervisor of the AVIC exit test, with the host's gcc in 32-bit mode
# into build/guest-x86/avic-l1.elf.  Included by the top Makefile.

AVIC_L1_DIR := tests/guest/x86/avic-l1
AVIC_L1_ELF := build/guest-x86/avic-l1.elf
AVIC_L1_CFLAGS := -m32 -ffreestanding -fno-pic -fno-pie -fno-stack-protector \
	-nostdlib -O2 -Wall -Wextra -mno-sse -mno-mmx

.PHONY: avic-l1
avic-l1: $(AVIC_L1_ELF)

$(AVIC_L1_ELF): $(addprefix $(AVIC_L1_DIR)/,start.S avic-l1.c avic-l1.h avic-l1.ld \
		avic-l1.mk) \
		tests/guest/x86/flat32.inc
	@mkdir -p $(dir $@)
	gcc $(AVIC_L1_CFLAGS) -c -o $@.start.o $(AVIC_L1_DIR)/start.S
	gcc $(AVIC_L1_CFLAGS) -c -o $@.main.o $(AVIC_L1_DIR)/avic-l1.c
	ld -m elf_i386 --no-warn-rwx-segments -T $(AVIC_L1_DIR)/avic-l1.ld -o $@ $@.start.o $@.main.o
