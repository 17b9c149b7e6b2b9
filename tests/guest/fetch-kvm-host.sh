#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetch a Debian amd64 kernel to act as the KVM host (L1) of the nested
# test bed (tests/guest/kvm-nested/): a private apt configuration with
# trixie and trixie-backports resolves the newest kernel of the given
# series (6.12: linux-image-6.12.*-amd64-unsigned, which holds image and
# modules; 7.x: linux-binary[-unsigned]-7.x.*-amd64 plus
# linux-modules-7.x.*-amd64), and busybox-static comes from this
# machine's own apt sources.  Keeps vmlinuz, busybox and the KVM and
# VFIO modules with their dependencies, decompressed (busybox insmod
# cannot load .ko.xz), plus modules.order listing them dependencies
# first; likewise l2-modules and l2-modules.order, the drivers an L2
# guest of that kernel needs (nvme, for kvm-nested-posted).  Cached in
# $QEMU_FORK_CACHE/guests/kvm-host-VERSION (default
# ~/.cache/qemu-irq-fork); prints that folder.
#
# Usage: fetch-kvm-host.sh VERSION     (e.g. 6.12 or 7.3)
set -e

say() { echo "fetch-kvm-host: $*" >&2; }

version=$1
case "$version" in
    [0-9]*.[0-9]*) ;;
    *) say "usage: $0 VERSION (e.g. 6.12 or 7.3)"; exit 2 ;;
esac

cache=${QEMU_FORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qemu-irq-fork}
dir="$cache/guests/kvm-host-$version"
if [ -f "$dir/.done" ] && [ -s "$dir/l2-modules.order" ]; then
    echo "$dir"
    exit 0
fi

command -v xz >/dev/null || apt-get install -y -q xz-utils >&2

apt="$dir/apt"
rm -f "$dir/.done"
rm -rf "$dir/debs" "$dir/x" "$dir/modules" "$dir/l2-modules"
mkdir -p "$dir/debs" "$dir/modules" "$dir/l2-modules"

# busybox-static through this machine's apt configuration.
(cd "$dir/debs" && apt-get download -q busybox-static >&2)

. "$(dirname "$0")/private-apt.sh"
private_apt "$apt" amd64 trixie trixie-backports
apt-get update -q >&2 || say "apt-get update reported errors"

# Newest package whose name matches the extended regex $1.
newest() {
    apt-cache pkgnames | grep -E "^$1\$" | sort -V | tail -n1
}

v=$(echo "$version" | sed 's/\./\\./g')
abi="$v\.[0-9]+\+deb[0-9]+"
pkgs=$(newest "linux-image-$abi-amd64-unsigned")
if [ -z "$pkgs" ]; then
    bin=$(newest "linux-binary-unsigned-$abi-amd64")
    [ -n "$bin" ] || bin=$(newest "linux-binary-$abi-amd64")
    if [ -n "$bin" ]; then
        kabi=${bin#linux-binary-}
        kabi=${kabi#unsigned-}
        pkgs="$bin linux-modules-$kabi"
    fi
fi
if [ -z "$pkgs" ]; then
    say "no amd64 kernel $version in trixie or trixie-backports"
    exit 1
fi
say "downloading $pkgs"
# shellcheck disable=SC2086
(cd "$dir/debs" && apt-get download -q $pkgs >&2)

for deb in "$dir"/debs/*.deb; do
    dpkg-deb -x "$deb" "$dir/x"
done
# /boot/vmlinuz-* up to 6.x, /usr/lib/modules/*/vmlinuz.unsigned since 7.x.
kernel=$(find "$dir/x" -type f -name 'vmlinuz*' | head -n1)
if [ -z "$kernel" ]; then
    say "no vmlinuz in $pkgs"
    exit 1
fi
cp "$kernel" "$dir/vmlinuz"
cp "$dir/x/bin/busybox" "$dir/busybox"

# Decompress module $1 (a name, '-' and '_' alike) and the modules it
# depends on into $dir/$modset, appending each to $modset.order after its
# dependencies ($modset: modules, for L1, or l2-modules, for L2 guests).
: > "$dir/modules.order"
: > "$dir/l2-modules.order"
add_module() {
    local name file ko dep
    name=$(echo "$1" | tr - _)
    grep -qx "$name" "$dir/$modset.names" 2>/dev/null && return 0
    file=$(awk -v n="$name" '$1 == n { print $2; exit }' "$dir/modules.index")
    if [ -z "$file" ]; then
        say "module $1 not found"
        exit 1
    fi
    ko=$(basename "${file%.xz}")
    case "$file" in
        *.ko.xz) xz -dc "$file" > "$dir/$modset/$ko" ;;
        *.ko) cp "$file" "$dir/$modset/$ko" ;;
        *) say "unsupported module compression: $file"; exit 1 ;;
    esac
    echo "$name" >> "$dir/$modset.names"
    for dep in $(tr '\0' '\n' < "$dir/$modset/$ko" |
                 sed -n 's/^depends=//p' | tr , ' '); do
        add_module "$dep"
    done
    echo "$ko" >> "$dir/$modset.order"
}
rm -f "$dir/modules.names" "$dir/l2-modules.names"
find "$dir/x" -name '*.ko*' | awk '{ b = $0; sub(/.*\//, "", b);
    sub(/\.ko.*/, "", b); gsub(/-/, "_", b); print b, $0 }' > "$dir/modules.index"
modset=modules
for m in irqbypass kvm ccp kvm-amd vfio vfio_iommu_type1 vfio-pci-core \
         vfio-pci; do
    add_module "$m"
done
# L2's driver for the NVMe controller L1 assigns to it (kvm-nested-posted)
modset=l2-modules
add_module nvme
rm -rf "$dir/x" "$dir/debs" "$dir/modules.names" "$dir/l2-modules.names" \
    "$dir/modules.index"
echo "$pkgs" > "$dir/.done"
say "$(tr '\n' ' ' < "$dir/modules.order")"
echo "$dir"
