#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetch the arm64 guest of the SMMUv3 tests from Debian's registry:
# trixie's arm64 kernel (ARM_SMMU_V3, PCI_HOST_GENERIC and VIRTIO_PCI
# built in, strict DMA invalidation by default) and busybox-static, at
# the versions and sums tests/guest/PINS gives (set arm64;
# tests/guest/pinned-debs.sh).  Keeps Image (the package's vmlinuz, a
# plain arm64 Image that -kernel takes), busybox, and the NVMe and
# virtio-blk modules decompressed (busybox insmod cannot load .ko.xz)
# with modules.order listing them dependencies first; then builds an
# initramfs whose /init runs tests/guest/arm64/init.sh.  Cached in
# $QEMU_FORK_CACHE/guests/arm64, checked against SHA256SUMS on every
# reuse.  Prints the folder holding Image and initrd.gz.
set -e

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${QEMU_FORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qemu-irq-fork}
dir="$cache/guests/arm64"
mkdir -p "$dir"

say() { echo "fetch-arm64-guest: $*" >&2; }
. "$(dirname "$0")/pinned-debs.sh"
pinned_lock

# What the guest loads, in this order after their dependencies.
MODULES="nvme virtio_blk"

debs=$(pinned_debs arm64)
stamp=$(pinned_stamp arm64)
if ! derived_current "$dir" "$stamp"; then
    rm -rf "$dir/x" "$dir/root" "$dir/modules" "$dir/.pins"
    mkdir -p "$dir/x" "$dir/modules"
    for deb in $debs; do
        case "$deb" in
            */busybox-static_*) dpkg-deb -x "$deb" "$dir/root" ;;
            *) dpkg-deb -x "$deb" "$dir/x" ;;
        esac
    done
    cp "$dir"/x/boot/vmlinuz-* "$dir/Image"
    find "$dir/x/usr/lib/modules" -name '*.ko*' | awk '{
        b = $0; sub(/.*\//, "", b); sub(/\.ko.*/, "", b); gsub(/-/, "_", b)
        print b, $0 }' > "$dir/modules.index"
    : > "$dir/modules.order"
    # Decompress module $1 after the modules it depends on.
    add() {
        local name file dep
        name=$(echo "$1" | tr - _)
        grep -qx "$name" "$dir/modules.names" 2>/dev/null && return 0
        file=$(awk -v n="$name" '$1 == n { print $2; exit }' \
               "$dir/modules.index")
        [ -n "$file" ] || { say "no module $name in the kernel package"; exit 1; }
        echo "$name" >> "$dir/modules.names"
        # .modinfo's depends= (no kmod tools needed)
        for dep in $(xz -dc "$file" | tr '\0' '\n' |
                     sed -n 's/^depends=//p' | head -n 1 | tr , ' '); do
            add "$dep"
        done
        xz -dc "$file" > "$dir/modules/$name.ko"
        echo "$name.ko" >> "$dir/modules.order"
    }
    for m in $MODULES; do
        add "$m"
    done
    rm -rf "$dir/x" "$dir/modules.index" "$dir/modules.names"
    (cd "$dir" && derived_sums_write . Image root/bin/busybox \
        modules.order $(sed 's|^|modules/|' modules.order))
    echo "$stamp" > "$dir/.pins"
fi

extra=
for m in $(cat "$dir/modules.order"); do
    extra="$extra lib/modules/$m=$dir/modules/$m"
done
extra="$extra etc/modules.order=$dir/modules.order"
# The initramfs follows init.sh, so it is rebuilt when the script changes.
/usr/bin/python3 "$top/tests/guest/mkinitramfs.py" "$dir/initrd.gz" \
    "$dir/root/bin/busybox" "$top/tests/guest/arm64/init.sh" $extra
echo "$dir"
