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
        where = str(root)
        walked = _walk(root, listing)
        # One update of the whole text: the same digest as one per file, at a fraction of
        # the cost for thousands of files.
        text = "".join([f"{where}\0{rel}\0{st_size}\0{mtime}\n" for rel, st_size, mtime in walked])
        h.update(text.encode("utf-8", "surrogateescape"))
        files += len(walked)
        size += sum(st_size for _, st_size, _ in walked)
    return "sha256:" + h.hexdigest(), files, size


def _walk(root: Path, listing: StoreListing | None = None) -> list[tuple[str, int, int]]:
    """(relative path, size, mtime_ns) of every file under ``root``, in a stable order; the
    folders' entries and the files' stats go to ``listing`` as well."""
    out: list[tuple[str, int, int]] = []
    try:
        st = root.stat()
    except OSError:
        return out
    if not root.is_dir():
        out.append((root.name, st.st_size, st.st_mtime_ns))
        for suffix in ("-wal", "-shm", "-journal"):
            with contextlib.suppress(OSError):
                side = root.with_name(root.name + suffix).stat()
                out.append((root.name + suffix, side.st_size, side.st_mtime_ns))
        return out
    stack = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=_name)
        except OSError:
            out.append((prefix + "<unreadable>", 0, 0))
            continue
        subdirs = []
        seen: list[tuple[str, bool]] = []
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append((Path(entry.path), rel + "/"))
                    seen.append((entry.name, True))
                    continue
                info = entry.stat()
            except OSError:
                seen.append((entry.name, _is_dir(entry)))
                continue
            out.append((rel, info.st_size, info.st_mtime_ns))
            if listing is not None:
                # A symlink to a folder is a folder to a reader (it follows links).
                seen.append((entry.name, entry.is_symlink() and _is_dir(entry)))
                listing.files[entry.path] = info
        if listing is not None:
            listing.folders[str(folder)] = seen
        stack.extend(reversed(subdirs))
    return out


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
