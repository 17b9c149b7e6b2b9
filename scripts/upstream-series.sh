#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make upstream-series: the patches docs/patches.md marks "upstream
# candidate", in patches/series order, applied with git am on the pinned
# base alone (no overlay, no other patch) and written out again with
# git format-patch to build/upstream-series/ (to re-sign and rebase onto
# upstream before sending: docs/patches.md).
# With --check (make check), also configure and build the result for
# x86_64 and ppc64 (what the candidates touch) with stock's options.
set -e

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
check=
case "${1-}" in
--check) check=1 ;;
'') ;;
*) echo "usage: upstream-series.sh [--check]" >&2; exit 2 ;;
esac

base=$(sed -n 's/^BASE_DIR=//p' build/config.mk 2>/dev/null || true)
[ -n "$base" ] || base=$(sh scripts/fetch-base.sh)
out=build/upstream-series
tree=build/upstream/src

# docs/patches.md names every patch of patches/series once, in order,
# with its class.
table=$(sed -n 's/^| `\([0-9]\{4\}-[^`]*\.patch\)` | \(upstream candidate\|mirror of later upstream\|fork-only\) |.*/\1/p' \
            docs/patches.md)
queue=$(sed 's/#.*//; /^[[:space:]]*$/d' patches/series)
if [ "$table" != "$queue" ]; then
    echo "upstream-series: docs/patches.md does not list patches/series" \
         "(each patch once, in order, with a class):" >&2
    printf '%s\n' "$queue" > build/upstream-series.queue
    printf '%s\n' "$table" | diff build/upstream-series.queue - >&2
    rm -f build/upstream-series.queue
    exit 1
fi

# docs/patches.md: "| `NNNN-name.patch` | upstream candidate | ... |"
candidates=$(sed -n 's/^| `\([0-9]\{4\}-[^`]*\.patch\)` | upstream candidate |.*/\1/p' \
                 docs/patches.md)
[ -n "$candidates" ] || {
    echo "upstream-series: docs/patches.md marks no upstream candidate" >&2
    exit 1
}
for p in $candidates; do
    grep -qx "$p" patches/series || {
        echo "upstream-series: $p (docs/patches.md) is not in" \
             "patches/series" >&2
        exit 1
    }
done

rm -rf "$tree" "$out"
mkdir -p "$tree"
tar -C "$base" --exclude=./.git --exclude=./debian --exclude=./.pc \
    --exclude=./.fork-base-verified -cf - . | tar -C "$tree" -xf -
git_in_tree() {
    git -C "$tree" -c user.name="qemu-irq-fork" \
        -c user.email="dev@qemu-irq-fork.invalid" "$@"
}
git_in_tree init -q
git_in_tree add -A
git_in_tree commit -q -m "pinned base $(cat "$tree/VERSION")"
git_in_tree tag upstream-base
for p in $candidates; do
    if ! git_in_tree am -q "$top/patches/$p" >/dev/null 2>&1; then
        git_in_tree am --abort 2>/dev/null || true
        echo "upstream-series: $p does not apply on the base with the" \
             "candidates before it (mark it fork-only in docs/patches.md" \
             "or rebase it)" >&2
        exit 1
    fi
done
git_in_tree format-patch -q -o "$top/$out" upstream-base..HEAD
echo "upstream-series: $(ls "$out" | wc -l) patches in $out/"

[ -n "$check" ] || exit 0
firmware=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
set -- --target-list=x86_64-softmmu,ppc64-softmmu \
    --without-default-features \
    --enable-tcg --enable-kvm --enable-slirp --enable-fdt=system \
    --enable-pixman --disable-docs --disable-tools --disable-werror \
    --disable-download --disable-install-blobs --python=/usr/bin/python3 \
    --firmwarepath="$firmware" --with-pkgversion="stock"
if [ -x /usr/lib/ccache/gcc ]; then
    set -- "$@" --cc=/usr/lib/ccache/gcc --cxx=/usr/lib/ccache/g++
fi
rm -rf build/upstream/obj
mkdir -p build/upstream/obj
(cd build/upstream/obj && ../src/configure "$@" >../configure.log 2>&1) || {
    tail -20 build/upstream/configure.log
    exit 1
}
CCACHE_BASEDIR="$top" CCACHE_NOHASHDIR=1 \
    ninja -C build/upstream/obj qemu-system-x86_64 qemu-system-ppc64 \
    >build/upstream/build.log 2>&1 || {
    grep -B2 -A8 "error" build/upstream/build.log | head -40
    exit 1
}
echo "upstream-series: the series builds (x86_64, ppc64)"
