# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds gif-race (tests/guest/x86/gif-race/), a freestanding two-CPU
# guest, with the host's gcc in 32-bit mode into
# build/guest-x86/gif-race.elf.  Included by the top Makefile.

GIF_RACE_DIR := tests/guest/x86/gif-race
GIF_RACE_ELF := build/guest-x86/gif-race.elf
GIF_RACE_CFLAGS := -m32 -ffreestanding -fno-pic -fno-pie -fno-stack-protector \
	-nostdlib -O2 -Wall -Wextra -mno-sse -mno-mmx

.PHONY: gif-race
gif-race: $(GIF_RACE_ELF)

$(GIF_RACE_ELF): $(addprefix $(GIF_RACE_DIR)/,start.S gif-race.c gif-race.h \
		gif-race.ld gif-race.mk) \
		tests/guest/x86/flat32.inc
	@mkdir -p $(dir $@)
	gcc $(GIF_RACE_CFLAGS) -c -o $@.start.o $(GIF_RACE_DIR)/start.S
	gcc $(GIF_RACE_CFLAGS) -c -o $@.main.o $(GIF_RACE_DIR)/gif-race.c
	ld -m elf_i386 --no-warn-rwx-segments -T $(GIF_RACE_DIR)/gif-race.ld -o $@ $@.start.o $@.main.o
