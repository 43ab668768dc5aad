"""Gemini CLI: chat recordings under ``~/.gemini/tmp``, prompt logs and GEMINI.md memory.

Ground truth relied on (native-stores.md section 6; google-gemini/gemini-cli
``packages/core/src/services/chatRecordingService.ts``, ``config/storage.ts``,
``config/projectRegistry.ts``):

- The root is ``~/.gemini`` (``$GEMINI_CLI_HOME/.gemini`` when that is set;
  ``BOURDON_GEMINI_CLI_STORE`` relocates it for bourdon).
- ``tmp/<id>/`` is one project. ``<id>`` is ``sha256(<project root>)`` in hex (before
  v0.29) or a short slug. ``projects.json`` is ``{"projects": {"<abs path>": "<slug>"}}`` and
  a slug folder holds ``.project_root`` with the path. A hash folder is resolved by hashing
  every candidate path known (``projects.json``, ``.project_root`` files, session
  ``directories``); an unresolved project gets no working directory, never a guessed one.
  ``tmp/bin`` is not a project.
- ``tmp/<id>/chats/session-<UTC minute>-<id8>.json`` (before v0.39) is one
  ``ConversationRecord`` ``{sessionId, projectHash, startTime, lastUpdated, summary?,
  directories?, kind?, messages[]}``. ``.jsonl`` (v0.39+) starts with that metadata, then one
  message per line; ``{"$set": {...}}`` updates metadata (``summary``); ``{"$rewindTo": id}``
  removes that message and all after it (all of them when the id is unknown); a message id
  seen again replaces the earlier message in place. ``$set.messages`` (a compression) is
  folded in the same way, so prompts from before it stay. A resumed legacy session has both
  files: they are one session. ``chats/<parentSessionId>/<id>.jsonl`` are subagent chats:
  their edits count for the parent, their prompts (written by a model) do not.
  ``*.tmp-<pid>`` and ``*.unreadable-<ms>`` files are ignored.
- Messages: ``{id, timestamp (ISO), type: user|gemini|info|error|warning, content (a string
  or parts [{text}]), displayContent?, toolCalls?[{name, args, status}]}``. Prompts are the
  user messages (``displayContent`` first), slash commands excepted. Edits are
  ``write_file``/``replace``/``edit`` calls whose status is not error or cancelled
  (``args.file_path``).
- ``tmp/<id>/logs.json`` lists user prompts ``[{sessionId, messageId, timestamp, type,
  message}]``; it makes a session only for a session id with no chat file.
- Content parts, edit tools and the memory section are what Qwen Code, its fork, still
  writes alike: ``readers.common.geminichats``.
- Memory: ``~/.gemini/GEMINI.md`` and a project's ``GEMINI.md`` (for project folders present
  here): each bullet of the legacy ``## Gemini Added Memories`` section is a note, the rest of
  the file one more; ``~/.gemini/memory.md`` and ``tmp/<id>/memory/*.md``: one note per
  bullet (or per file without bullets). Dated by the file's modification time.

What it extracts, without any model call: one session per session id (date of the first
timestamp in the user's time zone, ``""`` if none; working directory; the summary as title
and the user's own prompts as key actions; files edited); project entities and files touched
in several sessions; notes from the memory files.

Visibility (the same rule in every reader): ``readers.common.privacy``.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    clean_text,
    default_health,
    iter_jsonl,
    load_json,
    normalize_path,
    parse_time,
    store_path,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import children, memory_notes, read_memory_file
from bourdon.readers.common.geminichats import EDIT_TOOLS, FAILED, context_notes, parts_text
from bourdon.readers.common.paths import is_windows_path, safe_text
from bourdon.readers.common.text import unique
from bourdon.readers.common.tools import path_argument

NAME: Final = "gemini-cli"
MEMORY_HEADING: Final = "## Gemini Added Memories"
_DECOY: Final = re.compile(r"\.(tmp-\d+|unreadable-\d+)$")


class GeminiCliReader:
    """Gemini CLI chat recordings, prompt logs and GEMINI.md memories."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_GEMINI_CLI_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """``$GEMINI_CLI_HOME/.gemini`` when set, then ``~/.gemini``."""
        native = ctx.env.get("GEMINI_CLI_HOME")
        return unique([*([Path(native) / ".gemini"] if native else []), ctx.home / ".gemini"])

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a Gemini CLI store is found and readable."""
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Chat recordings and prompt logs, then global and project GEMINI.md files."""
        stats = ReadStats()
        drafts: list[Draft] = []
        notes: list[NoteDraft] = []
        root = store_path(self, ctx)
        if root is not None and root.is_dir():
            drafts = _projects(root, stats)
            notes = _global_memory(root, ctx, stats)
            folders = sorted({d.cwd for d in drafts if d.cwd})
            notes += _project_memory(folders, ctx, stats)
        return ReadResult(assemble(self.name, drafts, notes, ctx, stats), stats)


# -- recordings --------------------------------------------------------------------------------


@dataclass
class _Recording:
    """One chat file, replayed: its metadata and its messages in order."""

    meta: dict[str, Any]
    messages: list[dict[str, Any]]
    parent: str | None = None  # the main session of a subagent chat


def replay(path: Path, stats: ReadStats) -> _Recording | None:
    """A ``.jsonl`` chat recording as Gemini CLI loads it (``$set``, ``$rewindTo``, upserts)."""
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    for record in iter_jsonl(path, stats):
        if isinstance(record.get("$rewindTo"), str):
            ids = list(messages)
            target = record["$rewindTo"]
            for mid in ids[ids.index(target) :] if target in messages else ids:
                del messages[mid]
        elif isinstance(record.get("id"), str):
            messages[record["id"]] = record  # a repeated id replaces the message in place
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            for message in update.get("messages") or []:
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    messages[message["id"]] = message
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(record.get("sessionId"), str):
            meta.update(record)
        else:
            stats.skipped += 1
    if isinstance(meta.get("sessionId"), str):
        return _Recording(meta, list(messages.values()))
    if not messages:  # not JSON lines at all: a whole-file record under a .jsonl name
        return _legacy(load_json(path, stats))
    stats.problem(f"{path.name}: messages without session metadata; skipped")
    return None


def _legacy(data: object) -> _Recording | None:
    if not isinstance(data, dict) or not isinstance(data.get("sessionId"), str):
        return None
    messages = data.get("messages")
    kept = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    return _Recording({k: v for k, v in data.items() if k != "messages"}, kept)


def _recordings(chats: Path, stats: ReadStats) -> list[_Recording]:
    found: list[_Recording] = []
    subagents: list[_Recording] = []  # after the main chats, so the parent's own edits lead
    for path in children(chats):
        if _DECOY.search(path.name):
            continue
        if path.is_dir():  # chats/<parentSessionId>/<id>.jsonl: subagents
            for child in children(path):
                if child.suffix == ".jsonl" and not _DECOY.search(child.name):
                    sub = replay(child, stats)
                    if sub is not None:
                        sub.parent = path.name
                        subagents.append(sub)
            continue
        if path.suffix == ".jsonl":
            recording = replay(path, stats)
        elif path.suffix == ".json":
            recording = _legacy(load_json(path, stats))
        else:
            continue
        if recording is not None:
            found.append(recording)
    return found + subagents


# -- projects ----------------------------------------------------------------------------------


def _projects(root: Path, stats: ReadStats) -> list[Draft]:
    registry = (
        load_json(root / "projects.json", stats) if (root / "projects.json").is_file() else None
    )
    projects = registry.get("projects") if isinstance(registry, dict) else None
    by_slug: dict[str, str] = {}
    for path, slug in projects.items() if isinstance(projects, dict) else ():
        if isinstance(path, str) and isinstance(slug, str):
            by_slug[slug] = path
    folders = [d for d in children(root / "tmp") if d.is_dir() and d.name != "bin"]
    for folder in folders:
        marker, _ = read_memory_file(folder / ".project_root", stats)
        if marker.strip():
            by_slug[folder.name] = marker.strip()
    recordings = {folder: _recordings(folder / "chats", stats) for folder in folders}
    candidates = set(by_slug.values())
    for found in recordings.values():
        for rec in found:
            dirs = rec.meta.get("directories")
            if isinstance(dirs, list):
                candidates.update(d for d in dirs if isinstance(d, str))
    by_hash = {hashlib.sha256(p.encode("utf-8")).hexdigest(): p for p in candidates}
    drafts: dict[str, Draft] = {}
    for folder in folders:
        place = by_slug.get(folder.name) or by_hash.get(folder.name)
        for rec in recordings[folder]:
            _merge(drafts, rec, place, by_hash)
        _logs(drafts, folder / "logs.json", place, stats)
    return list(drafts.values())


def _merge(
    drafts: dict[str, Draft], rec: _Recording, place: str | None, by_hash: dict[str, str]
) -> None:
    sid = rec.parent or str(rec.meta["sessionId"])
    draft = drafts.setdefault(sid, Draft(session_id=sid))
    if not draft.cwd:
        resolved = by_hash.get(str(rec.meta.get("projectHash")))
        dirs = rec.meta.get("directories")
        first = dirs[0] if isinstance(dirs, list) and dirs and isinstance(dirs[0], str) else None
        draft.cwd = safe_text(normalize_path(resolved or place or first))
    draft.seen(parse_time(rec.meta.get("startTime")))
    if rec.parent is None and isinstance(rec.meta.get("summary"), str):
        draft.title = clean_text(rec.meta["summary"])
    for message in rec.messages:
        draft.seen(parse_time(message.get("timestamp")))
        if message.get("type") == "user" and rec.parent is None:
            text = parts_text(message.get("displayContent")) or parts_text(message.get("content"))
            if text and not text.lstrip().startswith("/"):
                draft.prompts.append(clean_text(text))
        calls = message.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if (
                isinstance(call, dict)
                and call.get("name") in EDIT_TOOLS
                and call.get("status") not in FAILED
            ):
                found = path_argument(call.get("args"))
                if found:
                    draft.files.append(found)


def _logs(drafts: dict[str, Draft], path: Path, place: str | None, stats: ReadStats) -> None:
    if not path.is_file():
        return
    entries = load_json(path, stats)
    fresh: dict[str, Draft] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("type") != "user":
            continue
        sid = entry.get("sessionId")
        if not isinstance(sid, str) or sid in drafts:
            continue  # a chat file already tells this session, better
        draft = fresh.setdefault(sid, Draft(session_id=sid, cwd=safe_text(normalize_path(place))))
        draft.seen(parse_time(entry.get("timestamp")))
        text = entry.get("message")
        if isinstance(text, str) and not text.lstrip().startswith("/"):
            draft.prompts.append(clean_text(text))
    drafts.update(fresh)


# -- memory files ------------------------------------------------------------------------------


def _global_memory(root: Path, ctx: ReaderContext, stats: ReadStats) -> list[NoteDraft]:
    notes = _gemini_md(root / "GEMINI.md", None, ctx, stats)
    notes += _memory_file(root / "memory.md", None, ctx, stats)
    for folder in children(root / "tmp"):
        memory = folder / "memory"
        if memory.is_dir():
            marker, _ = read_memory_file(folder / ".project_root", stats)
            for path in sorted(memory.glob("*.md")):
                notes += _memory_file(path, marker.strip() or None, ctx, stats)
    return notes


def _project_memory(folders: list[str], ctx: ReaderContext, stats: ReadStats) -> list[NoteDraft]:
    notes = []
    for folder in folders:
        if not is_windows_path(folder) or sys.platform == "win32":
            notes += _gemini_md(Path(folder) / "GEMINI.md", folder, ctx, stats)
    return notes


def _gemini_md(
    path: Path, folder: str | None, ctx: ReaderContext, stats: ReadStats
) -> list[NoteDraft]:
    return context_notes(
        path, folder, ctx, stats, heading=MEMORY_HEADING, tags=("gemini-memory", "gemini-context")
    )


def _memory_file(
    path: Path, folder: str | None, ctx: ReaderContext, stats: ReadStats
) -> list[NoteDraft]:
    return memory_notes(path, folder, "gemini-memory", ctx.tz, stats, per_bullet=True, where=folder)
