#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The x86-64 guest for Linux's posted MSI (CONFIG_X86_POSTED_MSI), which
# Debian's amd64 kernels do not enable: builds a kernel from the source
# of Debian's linux-source-6.12 package (set posted-msi in
# tests/guest/PINS, version and SHA256 checked) with `make tinyconfig`
# plus the options of tests/guest/posted-msi/kernel.config, each checked
# afterwards, and an initramfs of busybox-static running
# tests/guest/posted-msi/init.sh.  Cached in
# $QEMU_FORK_CACHE/guests/posted-msi: rebuilt only when PINS, this
# script or the config change, the built bzImage checked against its
# SHA256SUMS on every reuse.  Build time (about 7 minutes on 2 cores) is
# written to build-seconds.  Prints the folder holding bzImage and
# initrd.gz.
set -e

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${QEMU_FORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qemu-irq-fork}
dir="$cache/guests/posted-msi"
config="$top/tests/guest/posted-msi/kernel.config"
mkdir -p "$dir"

say() { echo "fetch-posted-msi-guest: $*" >&2; }
. "$(dirname "$0")/pinned-debs.sh"
pinned_lock

debs=$(pinned_debs posted-msi)
stamp="$(pinned_stamp posted-msi)
config $(sha256sum < "$config" | cut -d' ' -f1)"

if ! derived_current "$dir" "$stamp"; then
    for tool in flex bison bc; do
        command -v $tool >/dev/null ||
            { say "building the kernel needs $tool: run scripts/install-deps.sh"; exit 1; }
    done
    [ -f /usr/include/libelf.h ] ||
        { say "building the kernel needs libelf-dev: run scripts/install-deps.sh"; exit 1; }
    rm -rf "$dir/root" "$dir/src" "$dir/pkg" "$dir/.pins" "$dir/bzImage"
    start=$(date +%s)
    while IFS= read -r deb; do
        case "$deb" in
            */busybox-static_*) dpkg-deb -x "$deb" "$dir/root" ;;
            *) dpkg-deb -x "$deb" "$dir/pkg" ;;
        esac
    done <<EOL
$debs
EOL
    mkdir -p "$dir/src"
    say "unpacking the kernel source"
    tar -xJf "$dir"/pkg/usr/src/linux-source-*.tar.xz -C "$dir/src" \
        --strip-components=1
    rm -rf "$dir/pkg"
    opts=$(grep -v '^#' "$config" | awk 'NF { print $1 }')
    (
        cd "$dir/src"
        make -s tinyconfig >&2
        for o in $opts; do
            case "$o" in
                *=*) scripts/config --set-val "${o%%=*}" "${o#*=}" ;;
                *) scripts/config -e "$o" ;;
            esac
        done
        make -s olddefconfig >&2
        for o in $opts; do
            case "$o" in *=*) want="CONFIG_$o" ;; *) want="CONFIG_$o=y" ;; esac
            grep -qx "$want" .config ||
                { echo "fetch-posted-msi-guest: $want is not so after olddefconfig" >&2; exit 1; }
        done
        say "building bzImage"
        make -s -j"$(nproc)" bzImage >&2
    )
    cp "$dir/src/arch/x86/boot/bzImage" "$dir/bzImage"
    rm -rf "$dir/src"
    echo $(($(date +%s) - start)) > "$dir/build-seconds"
    say "kernel built in $(cat "$dir/build-seconds") s"
    derived_sums_write "$dir" bzImage root/bin/busybox
    echo "$stamp" > "$dir/.pins"
fi

/usr/bin/python3 "$top/tests/guest/mkinitramfs.py" "$dir/initrd.gz" \
    "$dir/root/bin/busybox" "$top/tests/guest/posted-msi/init.sh"
echo "$dir"
