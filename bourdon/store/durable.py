"""Writing a file so that a crash leaves the old bytes or the new ones, never a mix.

The one recipe bourdon uses for every file it replaces: a temp file with a name unique to this
process and thread, in the same folder; write, fsync, ``os.replace`` over the target, fsync the
folder (a rename is atomic but not durable until its folder is synced; a folder made for the
file is synced into its own parent too). ``O_NOFOLLOW`` keeps a planted symlink from
redirecting the write. The temp name carries the writer's pid (``.<name>.<pid>.<thread>.tmp``),
so crash recovery can tell a dead writer's leftovers from a live one's.

The only other rename-over in bourdon is the branch update in ``bourdon.store.git.refs``: its
temp file is git's own ref lock, created exclusively, which this recipe's is not.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path


def atomic_write(
    target: Path,
    data: bytes,
    mode: int = 0o644,
    *,
    keep_mode: bool = False,
    sync: bool = True,
    temp: str | None = None,
) -> None:
    """Replace ``target`` with ``data``; readers see the old or the new bytes.

    Args:
        mode: permission bits of a new file (the umask applies).
        keep_mode: the bits are set exactly, umask or not: an existing file's own, else
            ``mode`` (a user's settings file keeps what the user chose).
        sync: ``False`` for caches, which may lose a write to a power cut and are rebuilt; the
            replace is still atomic.
        temp: the temp file's name, for a folder whose owner has its own convention (git
            names its temp objects ``tmp_obj_*`` and knows to clean those).
    """
    folder = target.parent
    _make_folder(folder, sync)
    kept = None
    if keep_mode:
        kept = mode
        with contextlib.suppress(FileNotFoundError):
            kept = target.stat().st_mode & 0o7777
    tmp = folder / (temp or f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, mode if kept is None else kept)
    try:
        if kept is not None:
            os.fchmod(fd, kept)  # the umask must not change what the user chose
        os.write(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    if sync:
        fsync_dir(folder)


def move(source: Path, target: Path, *, sync: bool = True) -> None:
    """Rename ``source`` to ``target`` (a folder is made for it), durably unless ``sync`` is
    ``False`` (many moves whose progress the caller records and can redo)."""
    _make_folder(target.parent, sync)
    os.replace(source, target)
    if sync:
        fsync_dir(target.parent)
        fsync_dir(source.parent)


def fsync_dir(path: Path) -> None:
    """Make the names in a folder (a file renamed or created there) survive a power cut."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _make_folder(folder: Path, sync: bool) -> None:
    """Create ``folder`` and its missing parents; each new one is synced into its parent."""
    if folder.is_dir():
        return
    _make_folder(folder.parent, sync)
    try:
        folder.mkdir()
    except FileExistsError:
        return  # made by another writer meanwhile (or a file: the open will say so)
    if sync:
        fsync_dir(folder.parent)
