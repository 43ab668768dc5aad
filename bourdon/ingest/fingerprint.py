"""Step 1 of the export: a cheap signature of an agent's store, to skip a store that has not
changed since the last export without reading it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import operator
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

from bourdon.access.redact import RULES_VERSION
from bourdon.readers.base import Reader, ReaderContext
from bourdon.readers.listing import StoreListing

PIPELINE_VERSION: Final = "1"
_name = operator.attrgetter("name")


def store_fingerprint(
    reader: Reader, ctx: ReaderContext, store: Path, listing: StoreListing | None = None
) -> tuple[str, int, int]:
    """A cheap signature of a store: (digest, files, bytes). Reads no file, only their stats.

    It covers every file under the store (a file store: the file and its SQLite companions),
    plus whatever the reader, the pipeline or the redaction rules are, so a new bourdon
    re-exports an unchanged store. A reader may name more places it reads with an optional
    ``watch_paths(ctx)`` method. ``listing`` learns every folder and file stat the walk saw,
    for the reader that reads the store next.
    """
    h = hashlib.sha256()
    ident = [
        PIPELINE_VERSION,
        RULES_VERSION,
        type(reader).__module__,
        type(reader).__qualname__,
        str(getattr(reader, "version", "")),
        str(ctx.tz),
        ctx.machine,
    ]
    h.update(json.dumps(ident).encode())
    roots = [store]
    extra: Callable[[ReaderContext], list[Path]] | None = getattr(reader, "watch_paths", None)
    if callable(extra):
        with contextlib.suppress(Exception):
            roots += [Path(p) for p in extra(ctx)]
    files = size = 0
    for root in roots:
        lines, held = _walk(root, listing)
        # One update of the whole text: the same digest as one per file, at a fraction of
        # the cost for thousands of files.
        h.update("".join(lines).encode("utf-8", "surrogateescape"))
        files += len(lines)
        size += held
    return "sha256:" + h.hexdigest(), files, size


def _walk(root: Path, listing: StoreListing | None = None) -> tuple[list[str], int]:
    """The digest's line of every file under ``root`` (``root``, its path under ``root``,
    size, mtime_ns; NUL-separated) in a stable order, and their bytes; the folders'
    entries and the files' stats go to ``listing`` as well. The loop does the least it can
    per file: a store holds thousands, and an export after one appended line is mostly this."""
    where = str(root)
    out: list[str] = []
    try:
        st = root.stat()
    except OSError:
        return out, 0
    if not root.is_dir():
        out.append(f"{where}\0{root.name}\0{st.st_size}\0{st.st_mtime_ns}\n")
        size = st.st_size
        for suffix in ("-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                side = root.with_name(root.name + suffix).stat()
                out.append(f"{where}\0{root.name}{suffix}\0{side.st_size}\0{side.st_mtime_ns}\n")
                size += side.st_size
        return out, size
    add = out.append
    files = listing.files if listing is not None else None
    size = 0
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=_name)
        except OSError:
            add(f"{where}\0{prefix}<unreadable>\0{0}\0{0}\n")
            continue
        subdirs = []
        seen: list[tuple[str, bool]] = []
        base = f"{where}\0{prefix}"
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append((entry.path, f"{prefix}{name}/"))
                    seen.append((name, True))
                    continue
                info = entry.stat()
            except OSError:
                seen.append((name, _is_dir(entry)))
                continue
            size += info.st_size
            add(f"{base}{name}\0{info.st_size}\0{info.st_mtime_ns}\n")
            if files is not None:
                # A symlink to a folder is a folder to a reader (it follows links).
                seen.append((name, entry.is_symlink() and _is_dir(entry)))
                files[entry.path] = info
        if listing is not None:
            listing.folders[folder] = seen
        stack.extend(reversed(subdirs))
    return out, size


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
