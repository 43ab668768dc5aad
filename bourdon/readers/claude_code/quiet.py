"""The quiet files of a checkpoint: the transcripts of the sessions before it, which a resumed
read neither opens nor looks into.

Every part of every file goes into the scan's tally (the record counts, the unknown kinds, the
sessions with a top-level transcript, each project folder's cwd), and for most files of a large
store that is all a resumed read does with them: their sessions are the checkpoint's. ``Quiet``
keeps what those files added to the tally when the checkpoint was taken, and how many they
were. A checkpoint is kept only while none of its sessions' files changed, came or went; so a
read that finds every one of them unchanged (by their saved marks) takes the tally as it was
kept, and leaves each file's saved part unparsed. When fewer are found, the read looks at every
part again. A file whose read left an unfinished last line is never quiet: that line is read
again each time.

What was saved of the quiet files (marks, headers, bodies) is the resume state's cold part,
which a resumed read does not even load while its ``seal`` holds: a hash of every quiet file's
path, size, modification time and inode, which the read compares with the stats of the files
it finds outside the state's other part (``seal_of``). Only when they differ does it look each
one up in the cold part (``is_quiet``).

Pure like every reader: no writes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bourdon.readers.claude_code.transcripts import Part, SavedPart
from bourdon.readers.listing import StoreListing

if TYPE_CHECKING:
    from bourdon.readers.claude_code.files import Kept


@dataclass
class Quiet:
    """What the quiet files added to a scan's tally, and how many they were."""

    files: int = 0
    counts: list[int] = field(default_factory=lambda: [0, 0, 0])  # records, skipped, too large
    unknown: dict[str, str] = field(default_factory=dict)  # kind -> first quiet file holding it
    # the checkpoint's sessions without a quiet top-level transcript: few, where those with
    # one are thousands
    others: list[str] = field(default_factory=list)
    cwds: dict[str, list[str]] = field(default_factory=dict)  # folder -> [first file, its cwd]
    seal: str = ""  # ``seal_of`` the quiet files as they were
    keys: list[str] = field(default_factory=list)  # the quiet files (not saved: the cold part's)

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "counts": self.counts,
            "unknown": self.unknown,
            "others": self.others,
            "cwds": self.cwds,
            "seal": self.seal,
        }

    @classmethod
    def from_json(cls, data: object) -> Quiet:
        """Raises ``ValueError``/``TypeError``/``KeyError`` when garbled."""
        if not isinstance(data, dict):
            raise TypeError("not a quiet tally")
        records, skipped, too_large = data["counts"]
        return cls(
            int(data["files"]),
            [int(records), int(skipped), int(too_large)],
            {str(kind): str(key) for kind, key in data["unknown"].items()},
            [str(s) for s in data["others"]],
            {str(f): [str(key), str(cwd)] for f, (key, cwd) in data["cwds"].items()},
            str(data["seal"]),
        )


def seal_of(stats: Iterable[tuple[str, int, int, int]]) -> str:
    """A hash of files' (path, size, modification time, inode), whatever their order."""
    ordered = sorted(stats)
    seal = hashlib.blake2b(digest_size=16)
    # Paths apart by NUL, which no path holds.
    seal.update("\0".join([path for path, *_ in ordered]).encode("utf-8", "surrogatepass"))
    seal.update(",".join([f"{size}:{mtime}:{inode}" for _, size, mtime, inode in ordered]).encode())
    return seal.hexdigest()


def sealed(keys: Iterable[str], quiet: Quiet, seen: StoreListing | None) -> bool:
    """Whether ``keys`` are the quiet files of ``quiet``, each unchanged (one stat each, as the
    export's walk took it)."""
    stats = []
    look = seen.stat if seen is not None else os.stat
    try:
        for key in keys:
            info = look(key)
            stats.append((key, info.st_size, info.st_mtime_ns, info.st_ino))
    except OSError:
        return False
    return bool(quiet.seal) and len(stats) == quiet.files and seal_of(stats) == quiet.seal


def is_quiet(key: str, sessions: set[str], saved: Kept, seen: StoreListing | None) -> bool:
    """Whether the transcript ``key`` is a quiet file still: its part, of one of the
    checkpoint's ``sessions``, was read to the end and the file has not changed since.
    (Once per file of the store when the seal does not hold: kept lean.)"""
    kept = saved.marks.get(key)
    try:
        info = seen.stat(key) if seen is not None else os.stat(key)  # noqa: PTH116 - a str path
        (offset, size, mtime, inode, _), header = kept  # type: ignore[misc]
        if (
            header[0] not in sessions
            or offset != size
            or info.st_size != size
            or info.st_mtime_ns != mtime
            or info.st_ino != inode
        ):
            return False
    except (OSError, TypeError, ValueError, IndexError):
        return False  # ``transcript_parts`` looks at it (and says what is wrong)
    return saved.bodies.get(key) is not None


def quiet_files(
    parts: Iterable[tuple[Path, Part | SavedPart | None, str]],
    sessions: set[str],
    marks: dict[str, Any],
) -> Quiet:
    """The quiet files among ``parts`` (``(folder, part, path)`` in reading order, one file's
    parts one after the other): those whose one part is of one of ``sessions`` and was read to
    its end (``marks``: each file's ``[mark, header]``, as ``is_quiet`` looks at them)."""
    by_file: dict[str, list[tuple[Path, Part | SavedPart]]] = {}
    for folder, part, key in parts:
        if part is not None:
            by_file.setdefault(key, []).append((folder, part))
    out, mains, stats = Quiet(), set(), []
    for key, found in by_file.items():
        kept = marks.get(key)
        if len(found) != 1 or not isinstance(kept, list):
            continue
        folder, part = found[0]
        offset, size, mtime, inode = kept[0][:4]
        if offset != size or part.sid not in sessions:
            continue
        out.files += 1
        out.keys.append(key)
        stats.append((key, size, mtime, inode))
        for n, count in enumerate(part.counts):
            out.counts[n] += count
        for what in part.unknown:
            out.unknown.setdefault(what, key)
        if part.main:
            mains.add(part.sid)
            if part.folder_cwd is not None:
                out.cwds.setdefault(str(folder), [key, part.folder_cwd])
    out.others = sorted(sessions - mains)
    out.seal = seal_of(stats)
    return out


def quiet_mains(quiet: Quiet, sessions: set[str]) -> set[str]:
    """The sessions with a quiet top-level transcript, of a checkpoint before ``sessions``."""
    return sessions.difference(quiet.others)
