"""Where a resumable read of an append-only file stopped, and whether it can continue there.

A mark is ``[offset, size, mtime_ns, inode, head]``: the offset after the last complete line
read, the file's size, modification time and inode then, and a short hash of its first bytes.
Next time the file is *unchanged* (same inode, size and mtime, nothing left unread: its part is
reused without opening it), *grown* (same inode and first bytes, not shorter than the offset:
read from the offset on), or *rewritten* (anything else: read whole). Plain lists, so the
pipeline can keep them as JSON.

Pure like every reader: reads files, never writes.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Final

HEAD: Final = 1024  # bytes of a file's start whose hash tells a rewrite from an append
UNCHANGED: Final = "unchanged"
GROWN: Final = "grown"
REWRITTEN: Final = "rewritten"


def head_hash(path: str | Path, length: int) -> str:
    """The hash of the first ``min(length, HEAD)`` bytes of ``path`` ("" when unreadable)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(min(length, HEAD))
    except OSError:
        return ""
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def new_mark(path: str | Path, info: os.stat_result, offset: int) -> list[Any]:
    """The mark of ``path`` read up to ``offset`` (its stat taken before the read)."""
    return [offset, info.st_size, info.st_mtime_ns, info.st_ino, head_hash(path, offset)]


def compare(path: str | Path, info: os.stat_result, mark: object) -> str:
    """``UNCHANGED``, ``GROWN`` or ``REWRITTEN``: how ``path`` (stat ``info``) moved on."""
    if not (isinstance(mark, list) and len(mark) == 5):
        return REWRITTEN
    offset, size, mtime, inode, head = mark
    if not isinstance(offset, int) or info.st_ino != inode or info.st_size < offset:
        return REWRITTEN
    if info.st_size == size == offset and info.st_mtime_ns == mtime:
        return UNCHANGED
    if head_hash(path, offset) != head:
        return REWRITTEN
    return GROWN
