#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetch the x86-64 guest of the fork's guest tests from Debian's
# registry: the amd64 kernel (resolved through linux-image-amd64, which
# has AMD_IOMMU built in) and busybox-static, then build an initramfs
# whose /init runs tests/guest/x86/init.sh.  Cached in
# $QEMU_FORK_CACHE/guests (default ~/.cache/qemu-irq-fork/guests).
# Prints the folder holding vmlinuz and initrd.gz.
set -e

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${QEMU_FORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qemu-irq-fork}
dir="$cache/guests/x86"
mkdir -p "$dir/debs"

say() { echo "fetch-x86-guest: $*" >&2; }

kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
       sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)
if [ -z "$kpkg" ]; then
    say "cannot resolve linux-image-amd64 (run apt-get update)"
    exit 1
fi

if [ ! -f "$dir/$kpkg.done" ]; then
    say "downloading $kpkg and busybox-static"
    (cd "$dir/debs" && rm -f ./*.deb &&
     apt-get download -q "$kpkg" busybox-static >&2)
    rm -rf "$dir/root" "$dir/kernel"
    dpkg-deb -x "$dir"/debs/linux-image-*.deb "$dir/kernel"
    dpkg-deb -x "$dir"/debs/busybox-static_*.deb "$dir/root"
    cp "$dir"/kernel/boot/vmlinuz-* "$dir/vmlinuz"
    rm -rf "$dir/kernel" "$dir/debs"
    touch "$dir/$kpkg.done"
fi

# The initramfs follows init.sh, so it is rebuilt when the script changes.
/usr/bin/python3 "$top/tests/guest/mkinitramfs.py" "$dir/initrd.gz" \
    "$dir/root/bin/busybox" "$top/tests/guest/x86/init.sh"
echo "$dir"
