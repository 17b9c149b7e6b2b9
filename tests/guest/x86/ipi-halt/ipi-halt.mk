# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds ipi-halt (tests/guest/x86/ipi-halt/), a freestanding two-CPU
# guest, into build/guest-x86/ipi-halt.elf (rule:
# tests/guest/x86/flat32.mk).  Included by the top Makefile.

include tests/guest/x86/flat32.mk
$(eval $(call flat32_guest,ipi-halt))
