# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds extint-reinject (tests/guest/x86/extint-reinject/), a
# freestanding guest that the nested test bed boots as L2, into
# build/guest-x86/extint-reinject.elf (rule: tests/guest/x86/flat32.mk).
# Included by the top Makefile.

include tests/guest/x86/flat32.mk
$(eval $(call flat32_guest,extint-reinject))
