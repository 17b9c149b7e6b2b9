# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds gif-race (tests/guest/x86/gif-race/), a freestanding two-CPU
# guest, into build/guest-x86/gif-race.elf (rule:
# tests/guest/x86/flat32.mk).  Included by the top Makefile.

include tests/guest/x86/flat32.mk
$(eval $(call flat32_guest,gif-race))
