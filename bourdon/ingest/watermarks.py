"""What the last export of each reader left behind, in the library's git-ignored ``.bourdon/``.

``watermarks/<reader>.json`` holds the store's fingerprint, the last export, its rows and
outcome, and whether the reader is drifting (its store used to yield rows and now yields
none); ``bourdon readers`` and ``bourdon status`` show them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from bourdon.errors import BourdonError
from bourdon.ingest.outcome import ExportResult, stats_dict
from bourdon.model import LOCAL_DIR, check_agent_id
from bourdon.store.durable import atomic_write

WATERMARKS: Final = "watermarks"


def watermark_path(root: Path, reader: str) -> Path:
    return root / LOCAL_DIR / WATERMARKS / f"{check_agent_id(reader, 'reader name')}.json"


def load_watermark(root: Path, reader: str) -> dict[str, Any] | None:
    """The last export's record for ``reader`` in the library at ``root``, if any."""
    try:
        data = json.loads(watermark_path(root, reader).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def load_watermarks(root: Path) -> dict[str, dict[str, Any]]:
    """Every reader's watermark in the library at ``root``, by reader name."""
    folder = root / LOCAL_DIR / WATERMARKS
    found: dict[str, dict[str, Any]] = {}
    with contextlib.suppress(OSError):
        for path in sorted(folder.glob("*.json")):
            with contextlib.suppress(BourdonError):
                data = load_watermark(root, path.stem)
                if data is not None:
                    found[path.stem] = data
    return found


def save_watermark(root: Path, reader: str, data: Mapping[str, Any]) -> None:
    target = watermark_path(root, reader)
    atomic_write(target, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def drifting_surfaces(root: Path) -> list[dict[str, str]]:
    """Readers whose store used to yield rows and now yields none: {reader, checked_at, reason}."""
    return [
        dict(mark["drifting"])
        for mark in load_watermarks(root).values()
        if isinstance(mark.get("drifting"), dict)
    ]


def drift(reader: str, now: str, reason: str) -> dict[str, str]:
    """The drift record of a reader whose store stopped yielding rows."""
    return {"reader": reader, "checked_at": now, "reason": reason}


def mark(result: ExportResult, now: str) -> dict[str, Any]:
    """The part of a watermark every export outcome writes."""
    return {
        "reader": result.reader,
        "agent_id": result.reader,
        "store": result.store,
        "store_files": result.store_files,
        "store_bytes": result.store_bytes,
        "checked_at": now,
        "outcome": result.outcome,
        "reason": result.reason,
        "rows": result.rows,
        "redacted": result.redacted,
        "version": result.version,
        "drifting": result.drifting,
        "capped": result.capped,
        "read": stats_dict(result.stats) if result.stats is not None else None,
    }


def now() -> str:
    """The time a watermark or a failure records: UTC, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
