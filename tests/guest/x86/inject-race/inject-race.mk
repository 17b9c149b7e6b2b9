# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds inject-race (tests/guest/x86/inject-race/), a freestanding
# two-CPU L1 hypervisor, into build/guest-x86/inject-race.elf (rule:
# tests/guest/x86/flat32.mk).  Included by the top Makefile.

include tests/guest/x86/flat32.mk
$(eval $(call flat32_guest,inject-race))
