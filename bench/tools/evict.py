#!/usr/bin/python3
"""Drop files' pages from the page cache, and only theirs.

Usage: evict.py FILE...

Each file is written back first (fdatasync), since POSIX_FADV_DONTNEED
drops only clean pages, then its cached pages are dropped. Unlike
/proc/sys/vm/drop_caches this leaves every other file's pages alone (other
jobs on a shared machine, the server's binary, the probe's small file).
"""
import os
import sys

for name in sys.argv[1:]:
    fd = os.open(name, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
