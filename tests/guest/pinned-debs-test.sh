#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Checks tests/guest/pinned-debs.sh and a fetch script without the
# network: .debs built here stand for pinned packages, pinned by a PINS
# file of their own (QEMU_FORK_PINS), and a stub apt-get stands for the
# archive.
#   1. tests/guest/PINS is well formed: six fields, a 64-digit SHA256,
#      no line twice, one sum per PACKAGE=VERSION and architecture, the
#      architecture its set boots, a kernel and busybox-static in every
#      set the fetch scripts and the Makefile use;
#   2. a .deb in QEMU_FORK_DEBS with the pinned sum is taken and cached,
#      under its pool name or apt's (epoch as %3a);
#   3. a cached .deb whose bytes changed is not reused: taken again;
#   4. a .deb in QEMU_FORK_DEBS with another sum fails, naming it;
#   5. a download with the pinned sum is cached under its pool name;
#      one with another sum fails and is not cached;
#   6. a version that cannot be had (here: an archive that cannot be
#      reached) fails, naming PACKAGE=VERSION and QEMU_FORK_DEBS;
#   7. fetch-x86-guest.sh end to end: extracts the pinned kernel and
#      busybox, reuses them, extracts again when vmlinuz changed.
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
dup=$(grep -v '^#' "$pins" | awk 'NF' | sort | uniq -d)
[ -z "$dup" ] || fail "lines twice in PINS: $dup"
split=$(awk '!/^#/ && NF { k = $4 "=" $5 " " $3
    if (k in s && s[k] != $6) print k; s[k] = $6 }' "$pins")
[ -z "$split" ] || fail "two sums for $split"
wrong=$(awk '!/^#/ && NF && ((($1 == "ppc64") != ($3 == "ppc64el")) ||
    (($1 == "arm64") != ($3 == "arm64")) ||
    ($1 != "ppc64" && $1 != "arm64" && $3 != "amd64" && $3 != "all"))' "$pins")
[ -z "$wrong" ] || fail "architecture not the set's: $wrong"
need_sets="x86 ppc64 arm64 $(sed -n 's/^NESTED_KVM_KERNELS := //p' \
    "$here/../../Makefile" | sed 's/[^ ][^ ]*/kvm-host-&/g')"
for s in $need_sets; do
    awk -v s="$s" '$1 == s && $4 == "busybox-static"' "$pins" | grep -q . ||
        fail "set $s has no busybox-static"
    awk -v s="$s" '$1 == s && $4 ~ /^linux-(image|binary)/' "$pins" |
        grep -q . || fail "set $s has no kernel"
done
ok "PINS is well formed and has the sets $need_sets"

# mkdeb NAME VERSION FILE CONTENT OUT: a .deb holding FILE.
mkdeb() {
    rm -rf "$work/pkg"
    mkdir -p "$work/pkg/DEBIAN" "$work/pkg/$(dirname "$3")"
    printf 'Package: %s\nVersion: %s\nArchitecture: amd64\n' "$1" "$2" \
        > "$work/pkg/DEBIAN/control"
    printf 'Maintainer: t <t@example.org>\nDescription: test\n' \
        >> "$work/pkg/DEBIAN/control"
    printf '%s\n' "$4" > "$work/pkg/$3"
    dpkg-deb -b "$work/pkg" "$5" >/dev/null || fail "dpkg-deb -b $1"
}
sumof() { sha256sum "$1" | cut -d' ' -f1; }

mkdir -p "$work/supplied" "$work/archive" "$work/cache" "$work/bin"
mkdeb pin-test 1:2.0-1 payload one "$work/archive/pin-test.deb"
sum=$(sumof "$work/archive/pin-test.deb")
echo "t bookworm amd64 pin-test 1:2.0-1 $sum" > "$work/PINS"
cp "$work/archive/pin-test.deb" "$work/supplied/pin-test_2.0-1_amd64.deb"

# The stub archive: update succeeds, download PKG=VER writes apt's
# file name (epoch as %3a) with the bytes of $STUB_ARCHIVE/PKG.deb.
cat > "$work/bin/apt-get" <<'EOF'
#!/bin/sh
case "$*" in
    *update*) exit 0 ;;
    *download*)
        for a; do :; done
        pkg=${a%%=*} ver=${a#*=}
        [ -f "$STUB_ARCHIVE/$pkg.deb" ] || exit 100
        cp "$STUB_ARCHIVE/$pkg.deb" \
            "${pkg}_$(echo "$ver" | sed 's/:/%3a/')_amd64.deb" ;;
esac
EOF
chmod +x "$work/bin/apt-get"

export QEMU_FORK_PINS="$work/PINS" QEMU_FORK_DEBS="$work/supplied"
export DEBIAN_MIRROR=http://127.0.0.1:9/debian
cache=$work/cache
say() { echo "$*" >&2; }
. "$here/pinned-debs.sh"
cached=$cache/debs/pin-test_2.0-1_amd64.deb

# 2.
n=2
out=$(pinned_debs t 2>"$work/err") || fail "supplied .deb refused: $(cat "$work/err")"
[ "$out" = "$cached" ] || fail "printed '$out', want $cached"
cmp -s "$cached" "$work/archive/pin-test.deb" ||
    fail "cache does not hold the supplied .deb"
rm -f "$cached"
mv "$work/supplied/pin-test_2.0-1_amd64.deb" \
    "$work/supplied/pin-test_1%3a2.0-1_amd64.deb"
out=$(pinned_debs t 2>"$work/err") ||
    fail "supplied .deb under apt's name refused: $(cat "$work/err")"
cmp -s "$cached" "$work/archive/pin-test.deb" ||
    fail "cache does not hold the .deb supplied under apt's name"
ok "a supplied .deb with the pinned sum is cached (pool or apt name)"

# 3.
n=3
printf 'x' >> "$cached"
out=$(pinned_debs t 2>"$work/err") || fail "changed cache not replaced"
grep -q "does not match its SHA256" "$work/err" ||
    fail "no message about the changed cached .deb"
cmp -s "$cached" "$work/archive/pin-test.deb" ||
    fail "changed cached .deb was reused"
ok "a changed cached .deb is replaced, with a message"

# 4.
n=4
rm -f "$cached"
printf 'x' >> "$work/supplied/pin-test_1%3a2.0-1_amd64.deb"
if (pinned_debs t) >/dev/null 2>"$work/err"; then
    fail "a supplied .deb with another sum was taken"
fi
grep -q "pin-test_1%3a2.0-1_amd64.deb is not pin-test=1:2.0-1" "$work/err" ||
    fail "message does not name the .deb: $(cat "$work/err")"
[ ! -f "$cached" ] || fail "the wrong .deb reached the cache"
ok "a supplied .deb with another sum fails, named"

# 5.
n=5
rm -f "$work/supplied"/*
out=$(PATH="$work/bin:$PATH" STUB_ARCHIVE="$work/archive" \
      pinned_debs t 2>"$work/err") ||
    fail "a download with the pinned sum refused: $(cat "$work/err")"
[ "$out" = "$cached" ] && cmp -s "$cached" "$work/archive/pin-test.deb" ||
    fail "the download is not cached under $cached"
rm -f "$cached"
printf 'x' >> "$work/archive/pin-test.deb"
if (PATH="$work/bin:$PATH" STUB_ARCHIVE="$work/archive" pinned_debs t) \
        >/dev/null 2>"$work/err"; then
    fail "a download with another sum was taken"
fi
grep -q "downloaded pin-test=1:2.0-1 (amd64, bookworm) does not match" \
    "$work/err" || fail "message does not say so: $(cat "$work/err")"
[ -z "$(ls "$cache/debs")" ] || fail "the wrong download was kept: $(ls "$cache/debs")"
ok "a download is checked: the pinned sum cached, another refused"

# 6.
n=6
if (pinned_debs t) >/dev/null 2>"$work/err"; then
    fail "a version nobody serves was had"
fi
grep -q "cannot download pin-test=1:2.0-1 (amd64)" "$work/err" &&
    grep -q "QEMU_FORK_DEBS" "$work/err" ||
    fail "message does not name the package and the way out: $(cat "$work/err")"
ok "an unreachable version fails, naming PACKAGE=VERSION and QEMU_FORK_DEBS"

# 7. The x86 guest's fetch script, offline.
n=7
mkdeb linux-image-test 1.0-1 boot/vmlinuz-test "kernel one" \
    "$work/supplied/linux-image-test_1.0-1_amd64.deb"
mkdeb busybox-static 1:1.0-1 bin/busybox "busybox one" \
    "$work/supplied/busybox-static_1.0-1_amd64.deb"
{
    echo "x86 bookworm amd64 linux-image-test 1.0-1" \
        "$(sumof "$work/supplied/linux-image-test_1.0-1_amd64.deb")"
    echo "x86 bookworm amd64 busybox-static 1:1.0-1" \
        "$(sumof "$work/supplied/busybox-static_1.0-1_amd64.deb")"
} > "$work/PINS"
export QEMU_FORK_CACHE="$work/cache7"
guest=$QEMU_FORK_CACHE/guests/x86
dir=$(sh "$here/fetch-x86-guest.sh" 2>"$work/err") ||
    fail "fetch-x86-guest.sh failed: $(cat "$work/err")"
[ "$dir" = "$guest" ] || fail "printed '$dir', want $guest"
[ "$(cat "$guest/vmlinuz")" = "kernel one" ] || fail "vmlinuz not extracted"
[ -s "$guest/initrd.gz" ] || fail "no initrd.gz"
sh "$here/fetch-x86-guest.sh" >/dev/null 2>"$work/err" ||
    fail "second fetch failed: $(cat "$work/err")"
[ ! -s "$work/err" ] || fail "reuse said something: $(cat "$work/err")"
echo "kernel two" > "$guest/vmlinuz"
sh "$here/fetch-x86-guest.sh" >/dev/null 2>"$work/err" ||
    fail "fetch after a change failed: $(cat "$work/err")"
grep -q "do not match its SHA256SUMS" "$work/err" ||
    fail "no message about the changed vmlinuz"
[ "$(cat "$guest/vmlinuz")" = "kernel one" ] || fail "changed vmlinuz kept"
ok "fetch-x86-guest.sh extracts, reuses, extracts again after a change"
