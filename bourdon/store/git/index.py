"""git's index (``.git/index``), kept equal to HEAD by every write, in-process.

bourdon commits without the index, but people run ``git status`` and ``git commit`` in the
library: an index left behind HEAD shows every file bourdon wrote as deleted and untracked, and a
plain ``git commit`` then commits the old tree, deleting those agents. So each write sets the
entries of the paths it changes, after its objects exist and before the branch moves: whenever
the process dies, the index holds HEAD's tree, or HEAD's plus the write in flight (which crash
recovery then undoes), never less than HEAD.

The format is git's (``Documentation/gitformat-index.txt``): versions 2 and 3, entries sorted by
path, optional extensions dropped (git rebuilds its caches), a trailing checksum. The lock is
git's own (``index.lock``, created exclusively), so a git process holding it (a ``git commit``
with its editor open) is never raced: the update is skipped and the index refreshed later.
An index this module cannot read (version 4, a split or sparse index, a merge in progress)
is left to ``git read-tree``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

_HEADER: Final = struct.Struct(">4sLL")
_STAT: Final = struct.Struct(">10L")
_FILE_MODE: Final = 0o100644
_EXTENDED: Final = 0x4000
_STAGE: Final = 0x3000

Entry = tuple[bytes, bytes]  # (everything before the path: stat, id, flags), path


class Unreadable(Exception):
    """An index this module does not rewrite (``git read-tree`` does)."""


def read_entries(git_dir: Path, oid_len: int) -> tuple[int, dict[bytes, bytes]]:
    """(version, path -> the entry's bytes before its path); ``Unreadable`` if not v2/v3."""
    try:
        raw = (git_dir / "index").read_bytes()
    except FileNotFoundError:
        return 2, {}
    if len(raw) < _HEADER.size + oid_len:
        raise Unreadable("index too short")
    signature, version, count = _HEADER.unpack_from(raw)
    if signature != b"DIRC" or version not in (2, 3):
        raise Unreadable(f"index version {version}")
    algo = hashlib.sha256 if oid_len == 32 else hashlib.sha1
    trailer = raw[-oid_len:]
    if trailer != bytes(oid_len) and algo(raw[:-oid_len]).digest() != trailer:
        raise Unreadable("index checksum")
    entries: dict[bytes, bytes] = {}
    at = _HEADER.size
    fixed = _STAT.size + oid_len + 2
    for _ in range(count):
        flags = int.from_bytes(raw[at + fixed - 2 : at + fixed], "big")
        head = fixed + (2 if flags & _EXTENDED else 0)
        if flags & _STAGE:
            raise Unreadable("a merge is in progress")
        end = raw.index(b"\0", at + head)
        entries[raw[at + head : end]] = raw[at : at + head]
        at += (end - at + 8) & ~7
    body_end = len(raw) - oid_len
    while at < body_end:  # extensions: optional ones start with an upper-case letter
        name, size = raw[at : at + 4], int.from_bytes(raw[at + 4 : at + 8], "big")
        if not b"A"[0] <= name[0] <= b"Z"[0]:
            raise Unreadable(f"index extension {name!r}")
        at += 8 + size
    return version, entries


def entry_for(path: Path, oid: str, flags_extra: int = 0) -> bytes:
    """The bytes before the path of an index entry for the file at ``path`` (its stat now)."""
    st = path.stat()
    stat = _STAT.pack(
        int(st.st_ctime) & 0xFFFFFFFF,
        st.st_ctime_ns % 1_000_000_000,
        int(st.st_mtime) & 0xFFFFFFFF,
        st.st_mtime_ns % 1_000_000_000,
        st.st_dev & 0xFFFFFFFF,
        st.st_ino & 0xFFFFFFFF,
        _FILE_MODE,
        st.st_uid & 0xFFFFFFFF,
        st.st_gid & 0xFFFFFFFF,
        st.st_size & 0xFFFFFFFF,
    )
    return stat + bytes.fromhex(oid) + flags_extra.to_bytes(2, "big")


def update(git_dir: Path, root: Path, oid_len: int, changes: Mapping[str, str | None]) -> bool:
    """Set the entries of ``changes`` (path -> blob id of the file now on disk, ``None``:
    removed); ``False`` when git holds the index lock or the index is not one to rewrite."""
    lock: Path | None = git_dir / "index.lock"
    assert lock is not None
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False  # a git process is using the index: never race it
    try:
        try:
            version, entries = read_entries(git_dir, oid_len)
        except Unreadable:
            return False
        for path, oid in changes.items():
            name = path.encode("utf-8")
            if oid is None:
                entries.pop(name, None)
                continue
            entries[name] = entry_for(root / path, oid, min(len(name), 0xFFF))
        out = [_HEADER.pack(b"DIRC", version, len(entries))]
        for name in sorted(entries):
            entry = entries[name] + name
            out.append(entry + b"\0" * (8 - len(entry) % 8))
        body = b"".join(out)
        algo = hashlib.sha256 if oid_len == 32 else hashlib.sha1
        os.write(fd, body + algo(body).digest())
        os.close(fd)
        fd = -1
        os.replace(lock, git_dir / "index")
        lock = None  # renamed: a lock of that name now is another process's
        return True
    finally:
        if fd != -1:
            os.close(fd)
        if lock is not None:
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()


def differences(git_dir: Path, oid_len: int, head: Mapping[str, str]) -> list[str] | None:
    """Paths whose index entry differs from HEAD (``head``: path -> blob id), sorted;
    ``None`` when the index cannot be read here."""
    try:
        _, entries = read_entries(git_dir, oid_len)
    except (Unreadable, OSError):
        return None
    at = _STAT.size
    indexed = {
        n.decode("utf-8", "surrogateescape"): e[at : at + oid_len].hex() for n, e in entries.items()
    }
    return sorted(p for p in set(indexed) | set(head) if indexed.get(p) != head.get(p))


def tree_files(
    entries: Callable[[str | None], Mapping[bytes, tuple[bytes, str]]], tree: str | None
) -> dict[str, str]:
    """``path -> blob id`` of every file below ``tree`` (``entries`` lists one tree)."""
    files: dict[str, str] = {}
    stack = [("", tree)] if tree is not None else []
    while stack:
        prefix, at = stack.pop()
        for name, (mode, oid) in entries(at).items():
            path = prefix + name.decode("utf-8", "surrogateescape")
            if mode == b"40000":
                stack.append((path + "/", oid))
            else:
                files[path] = oid
    return files
