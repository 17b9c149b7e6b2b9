#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make stock: build unpatched QEMU from the same pinned base (no patches,
# no overlay) into build-stock/, with the fork's configure options, so
# tests and benchmarks can run fork and stock side by side.  Targets:
# $STOCK_TARGETS (default ppc64-softmmu,x86_64-softmmu,aarch64-softmmu).  Shares ccache
# with the fork's build, so only what the patches touch is compiled
# twice.
set -e

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
targets=${STOCK_TARGETS:-ppc64-softmmu,x86_64-softmmu,aarch64-softmmu}
out=build-stock

base=$(sed -n 's/^BASE_DIR=//p' build/config.mk 2>/dev/null || true)
[ -n "$base" ] || base=$(sh scripts/fetch-base.sh)

if [ ! -f "$out/src/.stock-from" ] ||
   [ "$(cat "$out/src/.stock-from")" != "$base" ]; then
    rm -rf "$out/src" "$out/obj"
    mkdir -p "$out/src"
    tar -C "$base" --exclude=./.git --exclude=./debian --exclude=./.pc \
        --exclude=./.fork-base-verified -cf - . | tar -C "$out/src" -xf -
    echo "$base" > "$out/src/.stock-from"
fi

firmware=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
set -- --target-list="$targets" --without-default-features \
    --enable-tcg --enable-kvm --enable-slirp --enable-fdt=system \
    --enable-pixman --disable-docs --disable-tools --disable-werror \
    --disable-download --disable-install-blobs --python=/usr/bin/python3 \
    --firmwarepath="$firmware" --with-pkgversion="stock"
if [ -x /usr/lib/ccache/gcc ]; then
    set -- "$@" --cc=/usr/lib/ccache/gcc --cxx=/usr/lib/ccache/g++
fi
mkdir -p "$out/obj"
if [ ! -f "$out/obj/build.ninja" ] ||
   [ "$(cat "$out/config.args" 2>/dev/null)" != "$*" ]; then
    (cd "$out/obj" && ../src/configure "$@")
    echo "$*" > "$out/config.args"
fi

bins=
for t in $(echo "$targets" | tr , ' '); do
    bins="$bins qemu-system-${t%-softmmu}"
done
CCACHE_BASEDIR="$top" CCACHE_NOHASHDIR=1 ninja -C "$out/obj" $bins
for b in $bins; do
    ln -sf "obj/$b" "$out/$b"
done
for d in /usr/share/qemu /usr/share/seabios /usr/lib/ipxe/qemu; do
    mkdir -p "$out/obj/qemu-bundle$(dirname $d)"
    [ -e "$out/obj/qemu-bundle$d" ] || ln -s "$d" "$out/obj/qemu-bundle$d"
done
echo "stock: built$bins in $out/"
