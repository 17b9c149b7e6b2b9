#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Checks tests/guest/pinned-debs.sh without the network: a .deb built
# here stands for a pinned package, pinned by a PINS file of its own.
#   1. tests/guest/PINS is well formed: six fields, a 64-digit SHA256,
#      a kernel and busybox-static in every set, the sets the fetch
#      scripts and the Makefile use present;
#   2. a .deb in QEMU_FORK_DEBS with the pinned sum is taken and cached;
#   3. a cached .deb whose bytes changed is not reused: taken again;
#   4. a .deb in QEMU_FORK_DEBS with another sum fails, naming it;
#   5. a version the archive does not serve (here: an archive that
#      cannot be reached) fails, naming PACKAGE=VERSION and
#      QEMU_FORK_DEBS;
#   6. derived_current: extracted files that changed are not current.
# Prints one "ok N" line per check; exits 1 at the first that fails.
set -u

here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() { echo "not ok $n: $*"; exit 1; }
ok() { echo "ok $n: $*"; }

# 1. The real PINS file.
n=1
pins=$here/PINS
bad=$(awk '!/^#/ && NF && (NF != 6 || length($6) != 64 || $6 ~ /[^0-9a-f]/)' "$pins")
[ -z "$bad" ] || fail "malformed lines in PINS: $bad"
need_sets="x86 ppc64 $(sed -n 's/^NESTED_KVM_KERNELS := //p' \
    "$here/../../Makefile" | sed 's/[^ ][^ ]*/kvm-host-&/g')"
for s in $need_sets; do
    awk -v s="$s" '$1 == s && $4 == "busybox-static"' "$pins" | grep -q . ||
        fail "set $s has no busybox-static"
    awk -v s="$s" '$1 == s && $4 ~ /^linux-(image|binary)/' "$pins" |
        grep -q . || fail "set $s has no kernel"
done
ok "PINS is well formed and has the sets $need_sets"

# A package of our own, pinned in a PINS file of our own.
mkdir -p "$work/pkg/DEBIAN" "$work/supplied" "$work/cache"
cat > "$work/pkg/DEBIAN/control" <<EOF
Package: pin-test
Version: 1:2.0-1
Architecture: amd64
Maintainer: test <test@example.org>
Description: a package for pinned-debs-test
EOF
echo payload > "$work/pkg/payload"
dpkg-deb -b "$work/pkg" "$work/supplied/pin-test_2.0-1_amd64.deb" \
    >/dev/null || fail "dpkg-deb -b"
sum=$(sha256sum "$work/supplied/pin-test_2.0-1_amd64.deb" | cut -d' ' -f1)
echo "t bookworm amd64 pin-test 1:2.0-1 $sum" > "$work/PINS"

export PINS_FILE="$work/PINS" QEMU_FORK_DEBS="$work/supplied"
export DEBIAN_MIRROR=http://127.0.0.1:9/debian
cache=$work/cache
say() { echo "$*" >&2; }
. "$here/pinned-debs.sh"
cached=$cache/debs/pin-test_2.0-1_amd64.deb

# 2.
n=2
out=$(pinned_debs t 2>"$work/err") || fail "supplied .deb refused: $(cat "$work/err")"
[ "$out" = "$cached" ] || fail "printed '$out', want $cached"
cmp -s "$cached" "$work/supplied/pin-test_2.0-1_amd64.deb" ||
    fail "cache does not hold the supplied .deb"
ok "a supplied .deb with the pinned sum is cached"

# 3.
n=3
printf 'x' >> "$cached"
out=$(pinned_debs t 2>"$work/err") || fail "changed cache not replaced"
grep -q "does not match its SHA256" "$work/err" ||
    fail "no message about the changed cached .deb"
cmp -s "$cached" "$work/supplied/pin-test_2.0-1_amd64.deb" ||
    fail "changed cached .deb was reused"
ok "a changed cached .deb is replaced, with a message"

# 4.
n=4
rm -f "$cached"
printf 'x' >> "$work/supplied/pin-test_2.0-1_amd64.deb"
if (pinned_debs t) >/dev/null 2>"$work/err"; then
    fail "a supplied .deb with another sum was taken"
fi
grep -q "pin-test_2.0-1_amd64.deb is not pin-test=1:2.0-1" "$work/err" ||
    fail "message does not name the .deb: $(cat "$work/err")"
[ ! -f "$cached" ] || fail "the wrong .deb reached the cache"
ok "a supplied .deb with another sum fails, named"

# 5.
n=5
rm -f "$work/supplied"/*
if (pinned_debs t) >/dev/null 2>"$work/err"; then
    fail "a version nobody serves was had"
fi
grep -q "cannot download pin-test=1:2.0-1 (amd64)" "$work/err" &&
    grep -q "QEMU_FORK_DEBS" "$work/err" ||
    fail "message does not name the package and the way out: $(cat "$work/err")"
ok "an unserved version fails, naming PACKAGE=VERSION and QEMU_FORK_DEBS"

# 6.
n=6
d=$work/derived
mkdir -p "$d"
echo kernel > "$d/vmlinuz"
derived_sums_write "$d" vmlinuz
echo stamp > "$d/.pins"
derived_current "$d" stamp 2>/dev/null || fail "fresh files not current"
derived_current "$d" other 2>/dev/null && fail "another stamp is current"
echo changed > "$d/vmlinuz"
derived_current "$d" stamp 2>/dev/null && fail "changed vmlinuz is current"
ok "changed extracted files or another pin are not current"
