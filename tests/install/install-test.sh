#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make install and make uninstall into a staging DESTDIR: the binaries
# get names of their own (beside Debian's qemu-system-*), start from
# outside the build tree with the machines that need firmware (pc, q35,
# pseries; virt), and nothing of the install is left after uninstall.
# A relative PREFIX is refused with a message naming it.
#
# Usage: install-test.sh TOP (the checkout, built)
set -u
top=$1
dest=$(mktemp -d /tmp/qemu-irq-fork-install-test.XXXXXX)
trap 'rm -rf "$dest"' EXIT
bindir=$dest/usr/local/bin
failed=0

fail() { echo "FAIL $*"; failed=1; }
pass() { echo "PASS $*"; }

if ! make -s -C "$top" install DESTDIR="$dest" >"$dest/make.log" 2>&1; then
    cat "$dest/make.log"
    echo "FAIL make install"
    exit 1
fi
rm -f "$dest/make.log"

want="qemu-irq-fork-system-aarch64
qemu-irq-fork-system-ppc64
qemu-irq-fork-system-x86_64"
got=$(ls "$bindir")
if [ "$got" = "$want" ]; then
    pass "bin: $(echo $got)"
else
    fail "bin: $(echo $got), want $(echo $want)"
fi
doc=$dest/usr/local/share/doc/qemu-irq-fork
if [ -f "$doc/README.md" ] && [ -f "$doc/docs/reference.md" ]; then
    pass "docs"
else
    fail "docs: no share/doc/qemu-irq-fork/README.md and docs/reference.md"
fi

# A machine starts only if its firmware is found: from /, no -L.
start() {
    target=$1
    shift
    bin=$bindir/qemu-irq-fork-system-$target
    out=$(cd / && printf '%s\n' '{"execute": "qmp_capabilities"}' \
              '{"execute": "query-status"}' '{"execute": "quit"}' |
          timeout 60 "$bin" "$@" -display none -nodefaults -S \
              -qmp stdio 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && echo "$out" | grep -q '"status": "prelaunch"'; then
        pass "$target $*"
    else
        fail "$target $* (rc $rc): $(echo "$out" | grep -v '^{' | head -3)"
    fi
}
start x86_64 -M pc
start x86_64 -M q35
start ppc64 -M pseries
start aarch64 -M virt -cpu max
if "$bindir/qemu-irq-fork-system-x86_64" -version | grep -q "qemu-irq-fork"; then
    pass "-version names the fork"
else
    fail "-version: $("$bindir/qemu-irq-fork-system-x86_64" -version | head -1)"
fi

if make -s -C "$top" uninstall DESTDIR="$dest" >/dev/null 2>&1 &&
   [ -z "$(find "$dest" -type f)" ]; then
    pass "uninstall"
else
    fail "uninstall left: $(find "$dest" -type f | head -5)"
fi

out=$(make -s -C "$top" install DESTDIR="$dest" PREFIX=usr 2>&1)
if [ $? -ne 0 ] && echo "$out" | grep -q "PREFIX=usr is not an absolute"; then
    pass "relative PREFIX refused"
else
    fail "relative PREFIX: $out"
fi
exit $failed
