#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write a gzipped newc cpio initramfs with a static busybox as
/bin/busybox and the given script as /init (no cpio tool needed), plus
any extra files given as DEST=SOURCE (e.g. bin/ipi-bench=build/...):
SOURCE goes to /DEST, executable when SOURCE is, and the folders of DEST
are created.

Usage: mkinitramfs.py OUTPUT.gz BUSYBOX INIT-SCRIPT [DEST=SOURCE ...]
"""

import gzip
import os
import sys


def entry(name, mode, data=b"", ino=1):
    name_b = name.encode() + b"\0"
    hdr = "070701" + "".join("%08x" % v for v in (
        ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0))
    out = hdr.encode() + name_b
    out += b"\0" * (-len(out) % 4)
    out += data + b"\0" * (-len(data) % 4)
    return out


def extras(args):
    """[(dest, source)] of the DEST=SOURCE arguments."""
    out = []
    for arg in args:
        dest, sep, source = arg.partition("=")
        dest = dest.strip("/")
        if not sep or not dest or not source:
            sys.exit("mkinitramfs: extra file %r is not DEST=SOURCE" % arg)
        if dest in ("init", "bin/busybox") or ".." in dest.split("/"):
            sys.exit("mkinitramfs: bad destination %r" % dest)
        out.append((dest, source))
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip())
    out, busybox, init = sys.argv[1:4]
    files = extras(sys.argv[4:])
    with open(busybox, "rb") as f:
        bb = f.read()
    with open(init, "rb") as f:
        script = f.read()
    blob = b""
    ino = 1
    dirs = ["bin", "dev", "proc", "sys", "sbin"]
    for dest, _ in files:
        parts = dest.split("/")[:-1]
        for i in range(len(parts)):
            d = "/".join(parts[:i + 1])
            if d not in dirs:
                dirs.append(d)
    for d in dirs:
        blob += entry(d, 0o040755, ino=ino)
        ino += 1
    blob += entry("bin/busybox", 0o100755, bb, ino=ino)
    blob += entry("init", 0o100755, script, ino=ino + 1)
    ino += 2
    for dest, source in files:
        with open(source, "rb") as f:
            data = f.read()
        mode = 0o100755 if os.access(source, os.X_OK) else 0o100644
        blob += entry(dest, mode, data, ino=ino)
        ino += 1
    blob += entry("TRAILER!!!", 0, ino=0)
    with open(out, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6,
                           mtime=0) as f:
            f.write(blob)


if __name__ == "__main__":
    main()
