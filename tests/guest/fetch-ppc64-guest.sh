#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetch the ppc64le Linux guest of the fork's guest tests from Debian's
# registry without changing this machine's architectures: a private apt
# configuration (APT_CONFIG) for ppc64el bookworm resolves the kernel
# through linux-image-powerpc64le (an unstripped vmlinux with XICS,
# pSeries and the hvc console built in) and fetches busybox-static,
# then an initramfs whose /init runs tests/guest/ppc64-linux/init.sh is
# built.  Cached in $QEMU_FORK_CACHE/guests/ppc64 (default
# ~/.cache/qemu-irq-fork).  Prints the folder holding vmlinux and
# initrd.gz.
set -e

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${QEMU_FORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qemu-irq-fork}
dir="$cache/guests/ppc64"
apt="$dir/apt"
mkdir -p "$dir/debs"

say() { echo "fetch-ppc64-guest: $*" >&2; }

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
. "$(dirname "$0")/private-apt.sh"
private_apt "$apt" ppc64el bookworm

if [ ! -f "$dir/kernel.done" ]; then
    apt-get update -q >&2 || say "apt-get update reported errors"
    kpkg=$(apt-cache depends linux-image-powerpc64le 2>/dev/null |
           sed -n 's/^ *Depends: \(linux-image-[0-9].*-powerpc64le\)$/\1/p' |
           head -n1)
    if [ -z "$kpkg" ]; then
        say "cannot resolve linux-image-powerpc64le from $mirror"
        exit 1
    fi
    say "downloading $kpkg and busybox-static (ppc64el)"
    (cd "$dir/debs" && rm -f ./*.deb &&
     apt-get download -q "$kpkg" busybox-static >&2)
    rm -rf "$dir/root" "$dir/kernel"
    dpkg-deb -x "$dir"/debs/linux-image-*.deb "$dir/kernel"
    dpkg-deb -x "$dir"/debs/busybox-static_*.deb "$dir/root"
    cp "$dir"/kernel/boot/vmlinux-* "$dir/vmlinux"
    rm -rf "$dir/kernel" "$dir/debs"
    echo "$kpkg" > "$dir/kernel.done"
fi

/usr/bin/python3 "$top/tests/guest/mkinitramfs.py" "$dir/initrd.gz" \
    "$dir/root/bin/busybox" "$top/tests/guest/ppc64-linux/init.sh"
echo "$dir"
