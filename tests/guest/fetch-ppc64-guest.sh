#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetch the ppc64le Linux guest of the fork's guest tests from Debian's
# registry without changing this machine's architectures: the ppc64el
# bookworm kernel (an unstripped vmlinux with XICS, pSeries and the hvc
# console built in) and busybox-static, at the versions and sums
# tests/guest/PINS gives (set ppc64; tests/guest/pinned-debs.sh), then
# an initramfs whose /init runs tests/guest/ppc64-linux/init.sh.
# Cached in $QEMU_FORK_CACHE/guests/ppc64 (default
# ~/.cache/qemu-irq-fork), .debs and extracted files checked on every
# reuse.  Prints the folder holding vmlinux and initrd.gz.
set -e

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${QEMU_FORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qemu-irq-fork}
dir="$cache/guests/ppc64"
mkdir -p "$dir"

say() { echo "fetch-ppc64-guest: $*" >&2; }
. "$(dirname "$0")/pinned-debs.sh"
pinned_lock

kernel_guest ppc64 "$dir" vmlinux

/usr/bin/python3 "$top/tests/guest/mkinitramfs.py" "$dir/initrd.gz" \
    "$dir/root/bin/busybox" "$top/tests/guest/ppc64-linux/init.sh"
echo "$dir"
