# SPDX-License-Identifier: GPL-2.0-or-later
#
# Sourced by the guest fetch scripts (from tests/guest/): the Debian
# packages of one set in tests/guest/PINS, exact versions, each checked
# against its SHA256 after every download and every time a cached copy
# is reused.
#
#   pinned_lock           serialises fetches sharing $cache (flock)
#   pinned_debs SET       puts SET's .debs in $cache/debs (shared by
#                         the sets) and prints their paths, one per
#                         line; run it as debs=$(pinned_debs SET)
#   pinned_stamp SET      SET's lines of PINS and the calling script's
#                         SHA256 (a cache stamp: a change of either
#                         re-extracts the set)
#   derived_current DIR STAMP   true if DIR holds files extracted from
#                         the .debs of STAMP (DIR/.pins) that still
#                         match DIR/SHA256SUMS
#   derived_sums_write DIR FILE...   writes DIR/SHA256SUMS
#   kernel_guest SET DIR IMAGE   a kernel-plus-busybox guest (x86,
#                         ppc64): DIR/IMAGE (/boot/IMAGE-* of SET's
#                         kernel) and DIR/root/bin/busybox, extracted
#                         again unless derived_current
#
# A pinned .deb is taken from, in order: the cache (if its sum matches),
# $QEMU_FORK_DEBS (a folder of .debs the user supplies, for versions
# the archive no longer serves; pool names or apt's, with %3a for the
# epoch), the Debian archive through a private apt configuration
# (tests/guest/private-apt.sh) for the pin's suite and architecture.
# A wrong sum or a version that cannot be had is a failure that names
# the package, the version and the way out.  The caller sets $cache and
# defines say().  QEMU_FORK_PINS names another PINS file (tests).

_pins_here=$(cd "$(dirname "$0")" && pwd)
PINS_FILE=${QEMU_FORK_PINS:-$_pins_here/PINS}
. "$_pins_here/private-apt.sh"
_pinned_updated=
_pinned_update_failed=

pinned_lock() {
    mkdir -p "$cache"
    exec 9>"$cache/.lock"
    flock 9
}

pinned_stamp() {
    awk -v s="$1" '$1 == s' "$PINS_FILE"
    echo "script $(sha256sum < "$0" | cut -d' ' -f1)"
}

# The name a pinned .deb has in the cache: the archive's pool name,
# which drops the epoch.
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

# Download $pkg=$ver for $arch from $suite into folder $1; lists are
# updated once per suite and call ($_pinned_updated).
_pinned_download() {
    _apt="$cache/apt/$arch-$suite"
    # Architecture-independent packages come through the amd64 indexes.
    _apt_arch=$arch
    [ "$arch" != all ] || _apt_arch=amd64
    private_apt "$_apt" "$_apt_arch" "$suite"
    case " $_pinned_updated " in
        *" $arch-$suite "*) ;;
        *)
            _pinned_updated="$_pinned_updated $arch-$suite"
            if ! apt-get update -q >&2 </dev/null; then
                say "apt-get update for $suite ($arch) reported errors"
                _pinned_update_failed="$_pinned_update_failed $suite"
            fi ;;
    esac
    (cd "$1" && apt-get download -q "$pkg=$ver" >&2 </dev/null)
}

pinned_debs() {
    pinned_dir="$cache/debs"
    mkdir -p "$pinned_dir"
    _lines=$(awk -v s="$1" '$1 == s' "$PINS_FILE")
    [ -n "$_lines" ] || _pinned_fail "no set '$1' in $PINS_FILE"
    while read -r _set suite arch pkg ver sum; do
        name=$(_pinned_name "$pkg" "$ver" "$arch")
        deb="$pinned_dir/$name"
        tmp="$pinned_dir/partial.$$"
        if [ -f "$deb" ]; then
            if _sum_ok "$deb" "$sum"; then
                echo "$deb"
                continue
            fi
            say "cached $name does not match its SHA256 in PINS; fetching it again"
            rm -f "$deb"
        fi
        rm -rf "$tmp"
        mkdir -p "$tmp"
        supplied=
        if [ -n "${QEMU_FORK_DEBS:-}" ]; then
            for f in "$QEMU_FORK_DEBS/$name" \
                     "$QEMU_FORK_DEBS/${pkg}_$(echo "$ver" |
                         sed 's/:/%3a/')_$arch.deb"; do
                [ -f "$f" ] && supplied=$f && break
            done
        fi
        if [ -n "$supplied" ]; then
            cp "$supplied" "$tmp/$name"
            if ! _sum_ok "$tmp/$name" "$sum"; then
                rm -rf "$tmp"
                _pinned_fail "$supplied is not $pkg=$ver ($arch):" \
                    "its SHA256 differs from tests/guest/PINS"
            fi
        else
            say "downloading $pkg=$ver ($arch, $suite)"
            if ! _pinned_download "$tmp" || [ -z "$(ls "$tmp")" ]; then
                rm -rf "$tmp"
                case " $_pinned_update_failed " in
                    *" $suite "*) _why="the archive could not be reached (apt-get update failed above)" ;;
                    *) _why="the archive no longer serves this version" ;;
                esac
                _pinned_fail "cannot download $pkg=$ver ($arch) from" \
                    "Debian's $suite: $_why.  Put $name (SHA256 $sum;" \
                    "snapshot.debian.org keeps old versions) in a folder" \
                    "and set QEMU_FORK_DEBS to that folder, or move the" \
                    "pin in tests/guest/PINS to a version $suite serves," \
                    "with its SHA256 from apt-cache show."
            fi
            # apt names the file with the epoch as %3a: one .deb here.
            for f in "$tmp"/*.deb; do
                [ "$f" = "$tmp/$name" ] || mv "$f" "$tmp/$name"
            done
            if ! _sum_ok "$tmp/$name" "$sum"; then
                rm -rf "$tmp"
                _pinned_fail "downloaded $pkg=$ver ($arch, $suite) does not" \
                    "match its SHA256 in tests/guest/PINS; not used"
            fi
        fi
        # Only a checked file takes the cache name.
        mv "$tmp/$name" "$deb"
        rm -rf "$tmp"
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

kernel_guest() {
    _debs=$(pinned_debs "$1")
    _stamp=$(pinned_stamp "$1")
    derived_current "$2" "$_stamp" && return 0
    rm -rf "$2/root" "$2/kernel" "$2/.pins" "$2"/*.done "$2/apt"
    while IFS= read -r _deb; do
        case "$_deb" in
            */busybox-static_*) dpkg-deb -x "$_deb" "$2/root" ;;
            *) dpkg-deb -x "$_deb" "$2/kernel" ;;
        esac
    done <<EOL
$_debs
EOL
    cp "$2"/kernel/boot/"$3"-* "$2/$3"
    rm -rf "$2/kernel"
    derived_sums_write "$2" "$3" root/bin/busybox
    echo "$_stamp" > "$2/.pins"
}
