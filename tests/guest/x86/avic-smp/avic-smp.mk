# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds avic-smp (tests/guest/x86/avic-smp/), a freestanding two-CPU
# guest, into build/guest-x86/avic-smp.elf (rule:
# tests/guest/x86/flat32.mk).  Included by the top Makefile.

include tests/guest/x86/flat32.mk
$(eval $(call flat32_guest,avic-smp))
