"""What each agent reader looks like on this machine: its store, last export, drift, hook failures.

One assembly for ``bourdon readers``, ``bourdon status`` and the ``memory_status`` tool. It reads
the export's watermarks and the hook failure logs and asks each reader whether its store is here;
it never reads a store and never writes.

A reader that left a watermark but is no longer registered (its plugin was uninstalled) is still
listed, with ``registered: false``: its last export, and any drift, stay worth knowing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bourdon.ingest.failures import HOOK_FAILURES, hook_failures, hook_failures_path
from bourdon.ingest.outcome import FORCED, REFUSED
from bourdon.ingest.watermarks import load_watermarks
from bourdon.model import AGENTS_DIR
from bourdon.readers.base import Health, Reader, ReaderContext, store_path

if TYPE_CHECKING:
    from bourdon.readers import Broken


def is_library(root: Path) -> bool:
    return (root / AGENTS_DIR).is_dir() and (root / ".git").exists()


def failure_logs(root: Path, home: Path) -> list[Path]:
    """Where hook failures are recorded: the library's log, and the fallback in BOURDON_HOME."""
    logs = [hook_failures_path(root)] if is_library(root) else []
    return [*logs, home / HOOK_FAILURES]


def reader_report(
    readers: Mapping[str, Reader],
    broken: Iterable[Broken],
    ctx: ReaderContext,
    root: Path,
    logs: Iterable[Path],
) -> dict[str, Any]:
    """``{"readers": [...], "broken": [...], "other_hook_failures": [...]}`` (see the module)."""
    marks = load_watermarks(root) if is_library(root) else {}
    failures = sorted(
        (f for log in logs for f in hook_failures(log)), key=lambda f: str(f.get("when", ""))
    )
    entries = [
        reader_entry(name, reader, ctx, marks.get(name), failures)
        for name, reader in sorted(readers.items())
    ]
    entries += [
        reader_entry(name, None, ctx, mark, failures)
        for name, mark in sorted(marks.items())
        if name not in readers
    ]
    known = {e["reader"] for e in entries}
    return {
        "readers": entries,
        "broken": [{"name": b.name, "target": b.target, "error": b.error} for b in broken],
        "other_hook_failures": [f for f in failures if f.get("agent") not in known][-10:],
    }


def reader_entry(
    name: str,
    reader: Reader | None,
    ctx: ReaderContext,
    mark: Mapping[str, Any] | None,
    failures: list[dict[str, Any]],
) -> dict[str, Any]:
    """One reader (``None``: known only from its watermark) as ``bourdon readers`` shows it."""
    store: Path | None = None
    if reader is None:
        health = Health(False, f"no reader named {name} is registered here any more")
    else:
        try:
            health = reader.health(ctx)
            store = store_path(reader, ctx)
        except Exception as exc:  # a plugin's bug must not hide the other readers
            health = Health(False, f"health check failed: {type(exc).__name__}: {exc}")
    mark = mark or {}
    last_good = mark.get("exported_at") or ""
    fails = [f for f in failures if f.get("agent") == name]
    last_fail = fails[-1] if fails else None
    drift = mark.get("drifting") if isinstance(mark.get("drifting"), dict) else None
    reason = mark.get("reason")
    return {
        "reader": name,
        "registered": reader is not None,
        "agent_type": getattr(reader, "agent_type", None),
        "present": None if reader is None else store is not None and store.exists(),
        "store": str(store) if store is not None else None,
        "health": {"ok": health.ok, "message": health.message, "fix": health.fix},
        "last_export": mark.get("checked_at"),
        "last_commit": mark.get("committed_at"),
        "outcome": mark.get("outcome"),
        "reason": reason,
        "rows": mark.get("rows"),
        "capped": mark.get("capped"),  # sessions the cap left out at the last export
        # Before a first export nothing is known: None, not "no rows" or "not drifting".
        "yielding": bool(mark.get("rows")) if mark else None,
        "drifting": drift is not None if mark else None,
        "drift": drift,
        "erosion": (
            {
                "refused": mark.get("outcome") == REFUSED,
                "forced": isinstance(reason, str) and reason.startswith(FORCED),
            }
            if mark
            else None
        ),
        "last_hook_failure": last_fail,
        "hook_failure_resolved": bool(
            last_fail and last_good and str(last_fail.get("when", "")) < last_good
        ),
    }
