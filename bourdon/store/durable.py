"""Writing a file so that a crash leaves the old bytes or the new ones, never a mix.

The recipe: a temp file with a name unique to this process and thread, in the same folder;
write, fsync, ``os.replace`` over the target, fsync the folder (a rename is atomic but not
durable until its folder is synced). ``O_NOFOLLOW`` keeps a planted symlink from redirecting
the write.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def atomic_write(target: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``target`` with ``data``, durably; readers see the old or the new bytes."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
