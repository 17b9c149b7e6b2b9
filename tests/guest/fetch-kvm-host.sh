#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetch a Debian amd64 kernel to act as the KVM host (L1) of the nested
# test bed (tests/guest/kvm-nested/): the packages of set
# kvm-host-VERSION in tests/guest/PINS, exact versions checked against
# their SHA256 (tests/guest/pinned-debs.sh): for 6.12 trixie's
# linux-image-6.12.*-amd64-unsigned (image and modules), for 7.3
# trixie-backports' linux-binary-unsigned-7.3.*-amd64 and
# linux-modules-7.3.*-amd64, and busybox-static.  Keeps vmlinuz, busybox
# and the KVM and VFIO modules with their dependencies, decompressed
# (busybox insmod cannot load .ko.xz), plus modules.order listing them
# dependencies first; likewise l2-modules and l2-modules.order, the
# drivers an L2 guest of that kernel needs (nvme, for
# kvm-nested-posted).  Cached in $QEMU_FORK_CACHE/guests/kvm-host-VERSION
# (default ~/.cache/qemu-irq-fork), .debs and extracted files checked
# on every reuse; prints that folder.
#
# Usage: fetch-kvm-host.sh VERSION     (a kvm-host-VERSION set of PINS)
set -e

say() { echo "fetch-kvm-host: $*" >&2; }

version=$1
case "$version" in
    [0-9]*.[0-9]*) ;;
    *) say "usage: $0 VERSION (e.g. 6.12 or 7.3)"; exit 2 ;;
esac

cache=${QEMU_FORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qemu-irq-fork}
dir="$cache/guests/kvm-host-$version"
. "$(dirname "$0")/pinned-debs.sh"
pinned_lock

stamp=$(pinned_stamp "kvm-host-$version")
if [ -z "$(awk -v s="kvm-host-$version" '$1 == s' "$PINS_FILE")" ]; then
    say "no kernel $version in tests/guest/PINS (pinned:" \
        "$(awk '$1 ~ /^kvm-host-/ { sub(/kvm-host-/, "", $1); print $1 }' \
           "$PINS_FILE" | sort -u | tr '\n' ' ')); add its packages there"
    exit 2
fi
debs=$(pinned_debs "kvm-host-$version")
if derived_current "$dir" "$stamp"; then
    echo "$dir"
    exit 0
fi

rm -f "$dir/.done" "$dir/.pins"
rm -rf "$dir/x" "$dir/modules" "$dir/l2-modules" "$dir/apt" "$dir/debs"
mkdir -p "$dir/modules" "$dir/l2-modules"

while IFS= read -r deb; do
    dpkg-deb -x "$deb" "$dir/x"
done <<EOF
$debs
EOF
# /boot/vmlinuz-* up to 6.x, /usr/lib/modules/*/vmlinuz.unsigned since 7.x.
kernel=$(find "$dir/x" -type f -name 'vmlinuz*' | head -n1)
if [ -z "$kernel" ]; then
    say "no vmlinuz in the packages of kvm-host-$version"
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
rm -rf "$dir/x" "$dir/modules.names" "$dir/l2-modules.names" \
    "$dir/modules.index"
(cd "$dir" && derived_sums_write . vmlinuz busybox modules.order \
    l2-modules.order modules/* l2-modules/*)
echo "$stamp" > "$dir/.pins"
say "$(tr '\n' ' ' < "$dir/modules.order")"
echo "$dir"
