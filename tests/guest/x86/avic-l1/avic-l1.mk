# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds avic-l1 (tests/guest/x86/avic-l1/), the freestanding L1
# hypervisor of the AVIC exit test, into build/guest-x86/avic-l1.elf
# (rule: tests/guest/x86/flat32.mk).  Included by the top Makefile.

include tests/guest/x86/flat32.mk
$(eval $(call flat32_guest,avic-l1))
