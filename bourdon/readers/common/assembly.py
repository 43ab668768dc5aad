"""From drafts (sessions, files, notes) to the rows of a manifest view: limits, project and
file entities, notes. Used by the readers whose projects are named by their folder
(``base.project_name``): Cursor, Copilot, Copilot CLI, Gemini CLI, Cline. Visibility is the
shared rule of ``common.privacy``.

Pure like every reader: reads files, never writes, no git, no network.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from bourdon.readers.base import (
    ReaderContext,
    ReadStats,
    clean_text,
    local_date,
    project_name,
)
from bourdon.readers.common.paths import is_windows_path, relative_file, safe_text
from bourdon.readers.common.privacy import visibility
from bourdon.readers.common.text import note_text, unique

MAX_SESSIONS: Final = 500
MAX_ENTITIES: Final = 1000
MAX_NOTES: Final = 1000
OFTEN: Final = 2  # a file touched in at least this many sessions becomes an entity


@dataclass
class Draft:
    """One session as read, before limits and visibility are applied."""

    session_id: str
    start: datetime | None = None
    cwd: str | None = None
    title: str = ""
    prompts: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)

    def seen(self, moment: datetime | None) -> None:
        """Keep the earliest timestamp seen as the session's start."""
        if moment is not None and (self.start is None or moment < self.start):
            self.start = moment


@dataclass
class NoteDraft:
    """One note from a native memory file."""

    date: str
    text: str
    project: str | None
    tag: str
    path: str


def session_row(
    draft: Draft, ctx: ReaderContext, project: Callable[[str | None], str | None] = project_name
) -> dict[str, Any] | None:
    """The manifest row of one session, or None for an empty draft."""
    actions = unique(clean_text(t) for t in (draft.title, *draft.prompts))[:10]
    named = unique(relative_file(f, draft.cwd) for f in draft.files)
    files = [f for f in named if f is not None and len(f) <= 1024][:50]
    if not actions and not files:
        return None
    cwd = safe_text(draft.cwd)
    row: dict[str, Any] = {"date": local_date(draft.start, ctx.tz)}
    if draft.session_id and len(draft.session_id) <= 128 and safe_text(draft.session_id):
        row["session_id"] = draft.session_id
    if cwd and len(cwd) <= 512:
        row["cwd"] = cwd
    focus = unique([project(cwd) or "", clean_text(draft.title)])
    if focus:
        row["project_focus"] = focus[:16]
    if actions:
        row["key_actions"] = actions
    if files:
        row["files_touched"] = files
    tags = unique(t for t in draft.tags if len(t) <= 64)[:32]
    if tags:
        row["tags"] = tags
    row["visibility"] = visibility(cwd, ctx.home)
    return row


def assemble(
    agent_id: str,
    drafts: list[Draft],
    notes: list[NoteDraft],
    ctx: ReaderContext,
    stats: ReadStats,
) -> dict[str, Any]:
    """The reader's fresh view: sessions newest first, entities, notes, all within limits."""
    ordered = sorted(
        drafts,
        key=lambda d: (d.start is None, -(d.start.timestamp() if d.start else 0), d.session_id),
    )
    project = functools.cache(project_name)  # it looks for .git folders: once per folder
    rows = [r for r in (session_row(d, ctx, project) for d in ordered) if r is not None]
    stats.found_sessions = len(rows)  # the text output says how many the cap left out
    rows = rows[:MAX_SESSIONS]
    stats.sessions = len(rows)
    entities = _entities(rows, project)[:MAX_ENTITIES]  # private by the folders' rule only
    for row in rows:
        row["visibility"] = ctx.shared(row["visibility"] == "private", prompts="key_actions" in row)
    return {
        "agent": {"id": agent_id, "type": "code-assistant"},
        "known_entities": entities,
        "recent_sessions": rows,
        "notes": _notes(notes, ctx),
    }


def _entities(
    rows: list[dict[str, Any]], project_of: Callable[[str | None], str | None]
) -> list[dict[str, Any]]:
    projects: dict[str, dict[str, Any]] = {}
    files: dict[str, dict[str, Any]] = {}
    for row in rows:
        cwd = row.get("cwd")
        project = project_of(cwd)
        private = row["visibility"] == "private"
        if project and len(project) <= 128:
            entry = projects.setdefault(
                project.casefold(),
                {"name": project, "folders": [], "dates": [], "private": False, "aliases": []},
            )
            entry["folders"].append(cwd)
            entry["dates"].append(row["date"])
            entry["private"] |= private
            base = re.split(r"[\\/]", cwd.rstrip("\\/"))[-1] if cwd else ""
            if base and base.casefold() != project.casefold() and len(base) <= 128:
                entry["aliases"].append(base)
        for path in row.get("files_touched", []):
            relative = not (path.startswith("/") or is_windows_path(path))
            name = f"{project}/{path}" if project and relative else path
            if len(name) > 128:
                continue
            entry = files.setdefault(
                name.casefold(), {"name": name, "sessions": 0, "dates": [], "private": False}
            )
            entry["sessions"] += 1
            entry["dates"].append(row["date"])
            entry["private"] |= private
    out: list[dict[str, Any]] = []
    for entry in sorted(projects.values(), key=lambda e: e["name"].casefold()):
        folders = unique(entry["folders"])
        count = len(entry["dates"])
        summary = f"Worked on in {count} session{'s' if count > 1 else ''}"
        summary += f" in {', '.join(folders)}." if folders else "."
        item: dict[str, Any] = {"name": entry["name"], "type": "project"}
        aliases = unique(entry["aliases"])[:16]
        if aliases:
            item["aliases"] = aliases
        item["summary"] = summary if len(summary) <= 2000 else summary[:1999] + "…"
        _touched(item, entry)
        out.append(item)
    often = [e for e in files.values() if e["sessions"] >= OFTEN]
    for entry in sorted(often, key=lambda e: (-e["sessions"], e["name"].casefold())):
        item = {
            "name": entry["name"],
            "type": "file",
            "summary": f"Touched in {entry['sessions']} sessions.",
        }
        _touched(item, entry)
        out.append(item)
    return out


def _touched(item: dict[str, Any], entry: dict[str, Any]) -> None:
    dates = [d for d in entry["dates"] if d]
    if dates:
        item["last_touched"] = max(dates)
    item["visibility"] = "private" if entry["private"] else "team"


def _notes(notes: list[NoteDraft], ctx: ReaderContext) -> list[dict[str, Any]]:
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for note in notes:
        text = note_text(note.text)
        if not note.date or not text or (note.date, text) in rows:
            continue
        row: dict[str, Any] = {"date": note.date, "text": text}
        if note.project and len(note.project) <= 128:
            row["related_entities"] = [note.project]
        row["tags"] = [note.tag]
        row["visibility"] = ctx.shared(visibility(note.path, ctx.home) == "private")
        rows[(note.date, text)] = row
    ordered = sorted(rows.values(), key=lambda r: (r["date"], r["text"]), reverse=True)
    return ordered[:MAX_NOTES]
