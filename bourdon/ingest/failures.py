"""What failed in an agent's hook, when, and why: ``.bourdon/hook-failures.jsonl``.

A hook never breaks the agent's turn; it records its failure here instead, and
``bourdon readers`` shows it. The log is cut back to its last lines once it grows past a cap;
``hook-failures.jsonl.lock`` keeps two hooks' appends and cuts apart.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Final

from bourdon.access.redact import redact_text
from bourdon.ingest.watermarks import now
from bourdon.model import LOCAL_DIR
from bourdon.store.durable import atomic_write

HOOK_FAILURES: Final = "hook-failures.jsonl"
_FAILURES_CAP: Final = 256 * 1024  # the failure log is cut back to its last lines past this
_KEEP_FAILURES: Final = 200
_LOCK_WAIT: Final = 10.0  # a hook gives up recording rather than hold up its agent longer
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)


def hook_failures_path(root: Path) -> Path:
    """Where hook failures of the library at ``root`` are recorded."""
    return root / LOCAL_DIR / HOOK_FAILURES


def record_hook_failure(path: Path, what: str, agent: str | None, error: str) -> dict[str, Any]:
    """Append one failure (what, agent, when, error) to the log at ``path``; never raises.

    Hooks of several agents may fail at once: each append, and the cut back past the cap (a
    read, then an atomic replace), happen under the log's own lock file, so no failure written
    meanwhile is lost; a line a killed hook left unfinished is closed before the next one.
    """
    entry = {
        "what": what,
        "agent": agent,
        "when": now(),
        "error": redact_text(" ".join(str(error).split()))[:2000],
    }
    line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
    import filelock  # on use: a hook with nothing new to export loads no lock machinery

    with contextlib.suppress(OSError, filelock.Timeout):
        path.parent.mkdir(parents=True, exist_ok=True)
        with filelock.FileLock(str(path.with_name(path.name + ".lock")), timeout=_LOCK_WAIT):
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o644)
            try:
                size = os.fstat(fd).st_size
                if size and _last_byte(path, size) != b"\n":
                    line = b"\n" + line  # a killed hook's unfinished line ends here
                os.write(fd, line)
                size += len(line)
            finally:
                os.close(fd)
            if size > _FAILURES_CAP:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
                atomic_write(path, ("\n".join(lines[-_KEEP_FAILURES:]) + "\n").encode("utf-8"))
    return entry


def _last_byte(path: Path, size: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)


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
