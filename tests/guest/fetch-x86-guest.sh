#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetch the x86-64 guest of the fork's guest tests from Debian's
# registry: the amd64 bookworm kernel (AMD_IOMMU built in) and
# busybox-static, at the versions and sums tests/guest/PINS gives (set
# x86; tests/guest/pinned-debs.sh), then build an initramfs whose /init
# runs tests/guest/x86/init.sh.  Cached in $QEMU_FORK_CACHE/guests
# (default ~/.cache/qemu-irq-fork/guests), .debs and extracted files
# checked on every reuse.  Prints the folder holding vmlinuz and
# initrd.gz.
set -e

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${QEMU_FORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qemu-irq-fork}
dir="$cache/guests/x86"
mkdir -p "$dir"

say() { echo "fetch-x86-guest: $*" >&2; }
. "$(dirname "$0")/pinned-debs.sh"
pinned_lock

kernel_guest x86 "$dir" vmlinuz

# The initramfs follows init.sh, so it is rebuilt when the script changes.
/usr/bin/python3 "$top/tests/guest/mkinitramfs.py" "$dir/initrd.gz" \
    "$dir/root/bin/busybox" "$top/tests/guest/x86/init.sh"
echo "$dir"
