"""``bourdon validate``: each manifest checked against the schema bourdon writes, and as bourdon
reads and serves it (wider: it names the rows it would leave out, or why it skips a file whole).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bourdon.errors import BourdonError
from bourdon.model import AGENTS_DIR, STAGING_DIR, SUFFIX

Read = Callable[[], bytes]  # the bytes of one file to check; raises BourdonError if unreadable


def library_files(root: Path) -> list[tuple[str, Read]]:
    """The live and staged manifests of the library at ``root``, named by their relative path."""
    paths = sorted((root / AGENTS_DIR).glob(f"*{SUFFIX}")) + sorted(
        (root / STAGING_DIR).glob(f"*/*{SUFFIX}")
    )
    return [(str(p.relative_to(root)), p.read_bytes) for p in paths]


def validate(targets: Iterable[tuple[str, Read]], *, as_read: bool) -> list[dict[str, Any]]:
    """``{path, valid, problems}`` per file (and ``served_whole`` when checked as written).

    ``as_read``: valid means bourdon reads and serves every row of it.
    """
    from bourdon.formats.reading import read_manifest
    from bourdon.formats.schema import load_manifest

    results: list[dict[str, Any]] = []
    for name, read in targets:
        try:
            raw = read()
        except BourdonError as exc:
            results.append({"path": name, "valid": False, "problems": [exc.message]})
            continue
        # What bourdon serves of it: the rows it would leave out, or why it skips it whole.
        try:
            served: list[str] | None = [
                p.message(name) for p in read_manifest(raw, what=name).problems
            ]
        except BourdonError as exc:
            served = None
            unserved = getattr(exc, "problems", None) or [exc.message]
        if as_read:
            problems = unserved if served is None else served
            results.append({"path": name, "valid": not problems, "problems": problems})
            continue
        try:
            load_manifest(raw, what=name)
            results.append({"path": name, "valid": True, "problems": [], "served_whole": True})
        except BourdonError as exc:
            problems = getattr(exc, "problems", None) or [exc.message]
            results.append(
                {"path": name, "valid": False, "problems": problems, "served_whole": served == []}
            )
    return results
