#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Install everything the fork needs to build and test on Debian bookworm:
# apt sources for bookworm-backports (meson >= 1.5, python3-pycotap) and
# trixie deb-src (the pinned QEMU base), then the build dependencies,
# the powerpc64le cross compiler for the ppc64 test guest (with the
# ppc64el C library for static Linux programs: ipi-bench) and libvirt
# 11.3 from bookworm-backports (the QEMU driver, the daemons and virsh,
# without libvirt-daemon-system's services) for tests/kvm/libvirt-domain.py.
# As non-root it only prints the commands to run.
set -e

BACKPORTS=/etc/apt/sources.list.d/qemu-irq-fork-backports.sources
TRIXIE_SRC=/etc/apt/sources.list.d/qemu-irq-fork-trixie-src.sources
PIN=/etc/apt/preferences.d/qemu-irq-fork

PKGS="build-essential pkg-config git ccache ninja-build meson python3 \
python3-venv python3-pycotap python3-tomli dpkg-dev xz-utils gdb \
libglib2.0-dev libpixman-1-dev libfdt-dev libslirp-dev zlib1g-dev \
flex bison bc libelf-dev libssl-dev seabios ipxe-qemu qemu-system-data \
gcc-powerpc64le-linux-gnu binutils-powerpc64le-linux-gnu \
libc6-dev-ppc64el-cross \
libvirt-daemon-driver-qemu libvirt-daemon libvirt-clients"

write_sources() {
    cat > "$BACKPORTS" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    cat > "$TRIXIE_SRC" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    # Only meson, pycotap and libvirt (11.3; its own libraries with it)
    # come from backports.
    cat > "$PIN" <<SRC
Package: meson python3-pycotap libvirt*
Pin: release n=bookworm-backports
Pin-Priority: 600
SRC
}

missing_pkgs() {
    for p in $PKGS; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
            grep -q 'install ok installed' || echo "$p"
    done
}

meson_ok() {
    command -v meson >/dev/null 2>&1 || return 1
    v=$(meson --version)
    [ "$(printf '%s\n1.5.0\n' "$v" | sort -V | head -n1)" = "1.5.0" ]
}

# bookworm's own libvirt 9.0 does not count: the pin upgrades it.
libvirt_ok() {
    v=$(dpkg-query -W -f='${Version}' libvirt-daemon-driver-qemu 2>/dev/null) ||
        return 1
    dpkg --compare-versions "$v" ge 11.3
}

# /dev/kvm for group kvm, mode 0660, as libvirt expects: its QEMU runs as
# libvirt-qemu, a member of kvm.  Hosts with udev set it so; a machine
# without udev keeps the kernel's root-only 0600, and every
# <domain type='kvm'> then fails to open it.
kvm_device() {
    [ -c /dev/kvm ] && [ "$(id -u)" = 0 ] && getent group kvm >/dev/null ||
        return 0
    if chgrp kvm /dev/kvm && chmod 0660 /dev/kvm; then
        echo "install-deps: /dev/kvm for group kvm, mode 0660"
    else
        echo "install-deps: could not give /dev/kvm to group kvm:" \
             "libvirt's KVM domains will not start" >&2
    fi
}

if [ -f "$BACKPORTS" ] && [ -f "$TRIXIE_SRC" ] && [ -z "$(missing_pkgs)" ] &&
   meson_ok && libvirt_ok; then
    kvm_device
    echo "install-deps: everything is installed"
    exit 0
fi

if [ "$(id -u)" != 0 ]; then
    echo "install-deps: not root; run these commands as root:" >&2
    echo "  sh $0" >&2
    echo "(it writes $BACKPORTS, $TRIXIE_SRC, $PIN," >&2
    echo " then: apt-get update && apt-get install -y $PKGS)" >&2
    exit 1
fi

write_sources
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends $PKGS
meson_ok || { echo "install-deps: meson >= 1.5 is required" >&2; exit 1; }
libvirt_ok || { echo "install-deps: libvirt >= 11.3 is required" >&2; exit 1; }
kvm_device
echo "install-deps: done (meson $(meson --version))"
