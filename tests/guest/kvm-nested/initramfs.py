#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Pack a directory tree (directories, regular files, symlinks) into a
newc cpio archive usable as a Linux initramfs, without the cpio tool.
Owners become root; the modes of the files are kept.

Usage: initramfs.py OUTPUT DIR     (OUTPUT ending in .gz is gzipped)
"""

import gzip
import os
import stat
import sys


def _entry(name, mode, data=b"", ino=0):
    name_b = name.encode() + b"\0"
    nlink = 2 if stat.S_ISDIR(mode) else 1
    hdr = "070701" + "".join("%08x" % v for v in (
        ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name_b), 0))
    out = hdr.encode() + name_b
    out += b"\0" * (-len(out) % 4)
    return out + data + b"\0" * (-len(data) % 4)


def pack(root, output):
    """Write the tree under root to output (gzipped if it ends in .gz)."""
    opener = gzip.open if output.endswith(".gz") else open
    with opener(output, "wb") as out:
        ino = 1
        for top, dirs, files in os.walk(root):
            dirs.sort()
            for name in dirs + sorted(files):
                path = os.path.join(top, name)
                rel = os.path.relpath(path, root)
                st = os.lstat(path)
                if stat.S_ISLNK(st.st_mode):
                    data = os.readlink(path).encode()
                elif stat.S_ISREG(st.st_mode):
                    with open(path, "rb") as f:
                        data = f.read()
                else:
                    data = b""
                out.write(_entry(rel, st.st_mode, data, ino))
                ino += 1
        out.write(_entry("TRAILER!!!", 0))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    pack(sys.argv[2], sys.argv[1])
