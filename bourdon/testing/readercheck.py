"""Checks every reader's tests make, for bourdon's readers and for plugin authors' own.

A reader is held to the same three promises whatever its store: it turns a known store into a
known manifest (the golden file), it reads the same twice, and it never touches the store.

>>> from bourdon.testing.readercheck import check_golden, golden_text, snapshot
>>> before = snapshot(home)                                    # doctest: +SKIP
>>> check_golden(GOLDEN, golden_text(reader.read(ctx), home))  # doctest: +SKIP
>>> assert snapshot(home) == before                            # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bourdon.formats import yamlio
from bourdon.readers.base import ReaderContext, ReadResult

PARIS = ZoneInfo("Europe/Paris")  # not UTC, so a date taken in the wrong zone shows
REGENERATE = "BOURDON_REGEN_GOLDEN"  # set to 1 to rewrite the golden files from the readers


def reader_context(home: Path, **kw: Any) -> ReaderContext:
    """A context for reading the store under ``home``: no environment, Paris time, one machine."""
    kw.setdefault("env", {})
    kw.setdefault("tz", PARIS)
    kw.setdefault("machine", "test-box")
    return ReaderContext(home=home, **kw)


def snapshot(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under ``root``: size, mtime and content hash (equal before and after a read)."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            info = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            out[str(path.relative_to(root))] = (info.st_size, info.st_mtime_ns, digest)
    return out


def golden_text(result: ReadResult, home: Path, home_as: str = "~") -> str:
    """The manifest as YAML, with the temporary home written as ``home_as``."""
    return yamlio.dump(result.manifest).decode("utf-8").replace(str(home), home_as)


def check_golden(path: Path, text: str) -> None:
    """Assert ``text`` equals the golden file, or rewrite the file when regenerating."""
    if os.environ.get(REGENERATE) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden {path.name}; run with {REGENERATE}=1 to write it"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} differs from the reader output"


def sessions_by(result: ReadResult, action: str) -> list[dict[str, Any]]:
    """The sessions whose key actions include ``action``."""
    return [s for s in result.manifest["recent_sessions"] if action in s.get("key_actions", [])]
