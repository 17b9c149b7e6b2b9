# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds block-access (tests/guest/x86/block-access/), a freestanding
# one-CPU guest, into build/guest-x86/block-access.elf (rule:
# tests/guest/x86/flat32.mk).  Included by the top Makefile.

include tests/guest/x86/flat32.mk
$(eval $(call flat32_guest,block-access))
