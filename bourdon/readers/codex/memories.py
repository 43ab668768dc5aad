"""Codex's memories (``memories/``, per-cwd buckets) and ``AGENTS.md`` as notes and entities.

Pure like every reader: reads files, never writes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bourdon.readers.base import (
    ReaderContext,
    local_date,
)
from bourdon.readers.codex.rollouts import Rollout
from bourdon.readers.common.facts import Assembler, SessionFacts
from bourdon.readers.common.files import listing
from bourdon.readers.common.privacy import is_private_path
from bourdon.readers.common.text import clean_block


def read_memories(
    root: Path,
    ctx: ReaderContext,
    rows: Assembler,
    rollouts: dict[str, Rollout],
    sessions: dict[str, SessionFacts],
) -> None:
    """``AGENTS.md`` and every memory folder (top and per-cwd buckets) as rows."""
    for name in ("AGENTS.md", "AGENTS.override.md"):
        rows.add_memory(root / name, "agents-md", None, None)
    top = root / "memories"
    if not top.is_dir():
        return
    cwds = [c for r in rollouts.values() for c in r.facts.cwds]
    places: list[tuple[Path, str | None]] = [(top, None)]
    for bucket in [p for p in listing(top, "*") if p.is_dir()]:
        if (bucket / "memory").is_dir():
            places.append((bucket / "memory", memory_bucket(bucket.name, cwds)))
    for folder, cwd in places:
        project = rows.project_of(cwd) if cwd else None
        for name in ("MEMORY.md", "memory_summary.md"):
            rows.add_memory(folder / name, "codex-memory", project, cwd)
        _raw_memories(folder / "raw_memories.md", ctx, rows, sessions)
        for path in listing(folder, "rollout_summaries/*.md"):
            text, date = _read_text(path, ctx, rows)
            if text is None:
                continue
            thread = re.search(r"^thread_id:\s*(\S+)", text, re.M)
            body = re.sub(r"^(thread_id|updated_at|cwd|rollout_path):.*\n?", "", text, flags=re.M)
            _thread_note(body, date, thread.group(1) if thread else None, rows, sessions, cwd)


def _raw_memories(
    path: Path, ctx: ReaderContext, rows: Assembler, sessions: dict[str, SessionFacts]
) -> None:
    text, date = _read_text(path, ctx, rows)
    if text is None:
        return
    parts = re.split(r"^## Thread `([^`]+)`\s*$", text, flags=re.M)
    for thread, body in zip(parts[1::2], parts[2::2], strict=True):
        body = re.sub(r"^updated_at:.*\n?", "", body, flags=re.M)
        _thread_note(body, date, thread, rows, sessions, None)


def _thread_note(
    body: str,
    date: str,
    thread: str | None,
    rows: Assembler,
    sessions: dict[str, SessionFacts],
    cwd: str | None,
) -> None:
    text = clean_block(body)
    if not text:
        return
    facts = sessions.get(thread or "")
    where = facts.cwd if facts is not None else cwd
    project = rows.project_of(where) if where else None
    private = is_private_path(where, rows.ctx.home)
    note: dict[str, Any] = {"date": date, "text": text}
    if project:
        note["related_entities"] = [project]
    note["tags"] = ["codex-memory"]
    note["visibility"] = rows.ctx.shared(private)
    rows.notes.append(note)


def _read_text(path: Path, ctx: ReaderContext, rows: Assembler) -> tuple[str | None, str]:
    try:
        if not path.is_file():
            return None, ""
        info = path.stat()
        if info.st_size > 1024 * 1024:
            rows.problems.append(f"{path.name}: skipped, {info.st_size:,} bytes is too large")
            return None, ""
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        rows.problems.append(f"{path.name}: {exc.strerror}")
        return None, ""
    return text, local_date(datetime.fromtimestamp(info.st_mtime, UTC), ctx.tz)


def memory_bucket(name: str, cwds: Iterable[str]) -> str | None:
    """The cwd whose ``sha256(cwd)[:16]`` names a memory folder (Codex's hashed layout)."""
    for cwd in cwds:
        if hashlib.sha256(cwd.encode("utf-8", "surrogatepass")).hexdigest()[:16] == name:
            return cwd
    return None
