# SPDX-License-Identifier: GPL-2.0-or-later
#
# Sourced by the guest fetch scripts: the Debian packages of one set in
# tests/guest/PINS, exact versions, each checked against its SHA256
# after every download and every time a cached copy is reused.
#
#   pinned_debs SET       puts SET's .debs in $cache/debs (shared by
#                         the sets) and prints their paths, one per
#                         line; run it as debs=$(pinned_debs SET)
#   pinned_stamp SET      prints SET's lines of PINS (a cache stamp:
#                         a change in PINS re-extracts the set)
#   derived_current DIR STAMP   true if DIR holds files extracted from
#                         the .debs of STAMP (DIR/.pins) that still
#                         match DIR/SHA256SUMS
#   derived_sums_write DIR FILE...   writes DIR/SHA256SUMS
#
# A pinned .deb is taken from, in order: the cache (if its sum matches),
# $QEMU_FORK_DEBS (a folder of .debs the user supplies, for versions
# the archive no longer serves), the Debian archive through a private
# apt configuration (tests/guest/private-apt.sh) for the pin's suite
# and architecture.  A wrong sum or a version that cannot be had is a
# failure that names the package, the version and the way out.
# The caller sets $cache and defines say().

_pins_here=$(cd "$(dirname "$0")" && pwd)
PINS_FILE=${PINS_FILE:-$_pins_here/PINS}
. "$_pins_here/private-apt.sh"

pinned_stamp() {
    awk -v s="$1" '$1 == s' "$PINS_FILE"
}

# The name a pinned .deb has in the cache: the archive's file name
# (Debian pool names drop the epoch).
_pinned_name() {
    echo "${1}_${2#*:}_${3}.deb"
}

_sum_ok() {
    echo "$2  $1" | sha256sum -c --status 2>/dev/null
}

_pinned_fail() {
    say "$*"
    exit 1
}

# Download $pkg=$ver for $arch from $suite into folder $1.
_pinned_download() {
    _into=$1
    _apt="$cache/apt/$arch-$suite"
    private_apt "$_apt" "$arch" "$suite"
    if [ ! -f "$_apt/.updated.$$" ]; then
        rm -f "$_apt"/.updated.*
        apt-get update -q >&2 </dev/null || say "apt-get update reported errors"
        touch "$_apt/.updated.$$"
    fi
    (cd "$_into" && apt-get download -q "$pkg=$ver" >&2 </dev/null)
}

pinned_debs() {
    pinned_dir="$cache/debs"
    mkdir -p "$pinned_dir"
    _lines=$(pinned_stamp "$1")
    [ -n "$_lines" ] || _pinned_fail "no set '$1' in $PINS_FILE"
    while read -r _set suite arch pkg ver sum; do
        name=$(_pinned_name "$pkg" "$ver" "$arch")
        deb="$pinned_dir/$name"
        if [ -f "$deb" ]; then
            if _sum_ok "$deb" "$sum"; then
                echo "$deb"
                continue
            fi
            say "cached $name does not match its SHA256 in PINS; fetching it again"
            rm -f "$deb"
        fi
        if [ -n "$QEMU_FORK_DEBS" ] && [ -f "$QEMU_FORK_DEBS/$name" ]; then
            _sum_ok "$QEMU_FORK_DEBS/$name" "$sum" ||
                _pinned_fail "$QEMU_FORK_DEBS/$name is not $pkg=$ver" \
                    "($arch): its SHA256 differs from tests/guest/PINS"
            cp "$QEMU_FORK_DEBS/$name" "$deb"
            echo "$deb"
            continue
        fi
        tmp="$pinned_dir/partial.$$"
        rm -rf "$tmp"
        mkdir -p "$tmp"
        say "downloading $pkg=$ver ($arch, $suite)"
        if ! _pinned_download "$tmp" || [ -z "$(ls "$tmp")" ]; then
            rm -rf "$tmp"
            _pinned_fail "cannot download $pkg=$ver ($arch) from Debian's" \
                "$suite: the archive may no longer serve this version." \
                "Put $name (SHA256 $sum) in a folder and set" \
                "QEMU_FORK_DEBS to that folder, or move the pin in" \
                "tests/guest/PINS to a version $suite serves, with its" \
                "SHA256 from apt-cache show."
        fi
        mv "$tmp"/*.deb "$deb"
        rm -rf "$tmp"
        if ! _sum_ok "$deb" "$sum"; then
            rm -f "$deb"
            _pinned_fail "downloaded $pkg=$ver ($arch, $suite) does not" \
                "match its SHA256 in tests/guest/PINS; not used"
        fi
        echo "$deb"
    done <<EOL
$_lines
EOL
}

derived_sums_write() {
    _d=$1
    shift
    (cd "$_d" && sha256sum "$@" > SHA256SUMS.new && mv SHA256SUMS.new SHA256SUMS)
}

derived_current() {
    [ "$(cat "$1/.pins" 2>/dev/null)" = "$2" ] || return 1
    [ -s "$1/SHA256SUMS" ] &&
        (cd "$1" && sha256sum -c --status SHA256SUMS 2>/dev/null) &&
        return 0
    say "files in $1 do not match its SHA256SUMS; extracting them again"
    return 1
}
