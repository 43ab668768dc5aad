"""What failed in an agent's hook, when, and why: ``.bourdon/hook-failures.jsonl``.

A hook never breaks the agent's turn; it records its failure here instead, and
``bourdon readers`` shows it. The log is cut back to its last lines once it grows past a cap.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Final

from bourdon.access.redact import redact_text
from bourdon.ingest.watermarks import now
from bourdon.model import LOCAL_DIR
from bourdon.store.durable import atomic_write

HOOK_FAILURES: Final = "hook-failures.jsonl"
_FAILURES_CAP: Final = 256 * 1024  # the failure log is cut back to its last lines past this
_KEEP_FAILURES: Final = 200


def hook_failures_path(root: Path) -> Path:
    """Where hook failures of the library at ``root`` are recorded."""
    return root / LOCAL_DIR / HOOK_FAILURES


def record_hook_failure(path: Path, what: str, agent: str | None, error: str) -> dict[str, Any]:
    """Append one failure (what, agent, when, error) to the log at ``path``; never raises."""
    entry = {
        "what": what,
        "agent": agent,
        "when": now(),
        "error": redact_text(" ".join(str(error).split()))[:2000],
    }
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
        if path.stat().st_size > _FAILURES_CAP:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            atomic_write(path, ("\n".join(lines[-_KEEP_FAILURES:]) + "\n").encode("utf-8"))
    return entry


def hook_failures(path: Path) -> list[dict[str, Any]]:
    """The recorded hook failures, oldest first (unreadable lines skipped)."""
    out: list[dict[str, Any]] = []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry, dict):
                out.append(entry)
    return out
