#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fetch the pinned QEMU base (base/base.conf) from Debian's registry with
# `apt-get source --download-only`, verify base/SHA256SUMS, and extract it
# with Debian's patches applied (dpkg-source -x) into a cache outside the
# repository.  Prints the path of the extracted tree on stdout.
#
# Cache: $QEMU_FORK_CACHE, default ~/.cache/qemu-irq-fork.
set -e

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/base/base.conf"

cache=${QEMU_FORK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/qemu-irq-fork}
upver=${BASE_VERSION#*:}
dl="$cache/downloads"
tree="$cache/base-$upver"

say() { echo "fetch-base: $*" >&2; }
die() { say "error: $*"; exit 1; }

if [ -f "$tree/.fork-base-verified" ]; then
    echo "$tree"
    exit 0
fi

mkdir -p "$dl"
cd "$dl"

verify() {
    sha256sum --quiet -c "$top/base/SHA256SUMS" >/dev/null 2>&1
}

if ! verify; then
    if ! apt-cache showsrc "$BASE_PACKAGE" 2>/dev/null |
         grep -q "^Version: $BASE_VERSION\$"; then
        if [ "$(id -u)" = 0 ]; then
            say "no deb-src entry offers $BASE_PACKAGE $BASE_VERSION;" \
                "running scripts/install-deps.sh"
            sh "$top/scripts/install-deps.sh" >&2
        fi
        apt-cache showsrc "$BASE_PACKAGE" 2>/dev/null |
            grep -q "^Version: $BASE_VERSION\$" ||
            die "apt has no source for $BASE_PACKAGE=$BASE_VERSION:" \
                "add a 'deb-src' entry for Debian $BASE_SUITE" \
                "(scripts/install-deps.sh does it) and run apt-get update;" \
                "if the suite has moved on, put the three files of" \
                "base/SHA256SUMS (from snapshot.debian.org, package" \
                "$BASE_PACKAGE, version $BASE_VERSION) into $dl, or" \
                "use ./configure --base=DIR"
    fi
    say "downloading $BASE_PACKAGE=$BASE_VERSION into $dl"
    apt-get source --download-only -q "$BASE_PACKAGE=$BASE_VERSION" >&2 ||
        die "apt-get source failed"
    # A file that does not match its pinned sum stops the build.
    if ! sha256sum -c "$top/base/SHA256SUMS" >&2; then
        die "checksum mismatch against base/SHA256SUMS: the download is" \
            "not the pinned base; delete $dl and retry, or check your mirror"
    fi
fi
verify || die "checksum mismatch against base/SHA256SUMS in $dl"

dsc=$(awk '{print $2}' "$top/base/SHA256SUMS" | grep '\.dsc$')
rm -rf "$tree.tmp"
say "extracting $dsc (with Debian's patches) into $tree"
dpkg-source --no-check -x "$dsc" "$tree.tmp" >&2 || die "dpkg-source -x failed"
rm -rf "$tree"
mv "$tree.tmp" "$tree"
touch "$tree/.fork-base-verified"
echo "$tree"
