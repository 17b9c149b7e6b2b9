#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write a gzipped newc cpio initramfs with a static busybox as
/bin/busybox and the given script as /init (no cpio tool needed).

Usage: mkinitramfs.py OUTPUT.gz BUSYBOX INIT-SCRIPT
"""

import gzip
import sys


def entry(name, mode, data=b"", ino=1):
    name_b = name.encode() + b"\0"
    hdr = "070701" + "".join("%08x" % v for v in (
        ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0))
    out = hdr.encode() + name_b
    out += b"\0" * (-len(out) % 4)
    out += data + b"\0" * (-len(data) % 4)
    return out


def main():
    out, busybox, init = sys.argv[1:4]
    with open(busybox, "rb") as f:
        bb = f.read()
    with open(init, "rb") as f:
        script = f.read()
    blob = b""
    ino = 1
    for d in ("bin", "dev", "proc", "sys", "sbin"):
        blob += entry(d, 0o040755, ino=ino)
        ino += 1
    blob += entry("bin/busybox", 0o100755, bb, ino=ino)
    blob += entry("init", 0o100755, script, ino=ino + 1)
    blob += entry("TRAILER!!!", 0, ino=0)
    with open(out, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6,
                           mtime=0) as f:
            f.write(blob)


if __name__ == "__main__":
    main()
