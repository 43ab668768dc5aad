"""OpenCode (the ``opencode`` terminal agent): ``opencode.db`` and the older JSON storage files.

Ground truth relied on (OpenCode's public source, anomalyco/opencode, formerly sst/opencode):

- The store is OpenCode's data folder, ``$XDG_DATA_HOME/opencode`` or
  ``~/.local/share/opencode`` on every OS (``xdg-basedir`` falls back to the home folder on
  macOS and Windows too) [src anomalyco/opencode:packages/opencode/src/global/index.ts].
  ``BOURDON_OPENCODE_STORE`` names that folder instead.
- From v1.2.0 (February 2026) everything lives in ``opencode.db``, SQLite in WAL mode, kept
  open by every running OpenCode [src anomalyco/opencode:packages/opencode/src/storage/db.ts];
  builds of other channels write ``opencode-<channel>.db`` beside it, which is read too. Tables
  [src anomalyco/opencode:packages/opencode/src/session/session.sql.ts]:
  ``session(id, project_id, parent_id, directory, title, time_created, ...)``,
  ``message(id, session_id, time_created, data)`` and
  ``part(id, message_id, session_id, time_created, data)``, times in epoch milliseconds,
  ``data`` the JSON of the message or part without its ids. Columns are selected only if
  present. OpenCode V2 adds ``session_message(session_id, type, seq, time_created, data)``
  [src anomalyco/opencode:packages/core/src/session/sql.ts], one row per message (``user``:
  ``text``; ``assistant``: ``content`` of ``text``, ``reasoning`` and ``tool`` items with
  ``name`` and ``state``) and backfills older sessions into it
  [src anomalyco/opencode:packages/core/src/session/message-backfill.ts]: it is read for the
  sessions that have no ``message`` rows.
- Before v1.2.0 the same records were JSON files under ``storage/``
  [src anomalyco/opencode:packages/opencode/src/storage/storage.ts]:
  ``project/<projectID>.json`` (``worktree``), ``session/<projectID>/<sessionID>.json``
  (``{id, projectID, parentID?, directory, title, time: {created, updated}}``),
  ``message/<sessionID>/<messageID>.json`` and ``part/<messageID>/<partID>.json``. The first
  start of v1.2 copies them into the database and leaves them in place, so a session present in
  both is read from the database; ids come from the file names, as the migration takes them
  [src anomalyco/opencode:packages/opencode/src/storage/json-migration.ts]. The layout before
  that (``project/<dir>/storage/session/info/``) is migrated by OpenCode itself and not read.
- A message's ``data`` has ``role`` (``user`` or ``assistant``) and ``time.created``. Parts
  [src anomalyco/opencode:packages/opencode/src/session/message-v2.ts]: ``text`` (``text``;
  ``synthetic`` or ``ignored`` ones were not typed by the user), ``tool`` (``tool``, ``state:
  {status: pending|running|completed|error, input, metadata}``) and ``patch`` (``files``, the
  absolute paths a step changed). The edit tools are ``edit``, ``multiedit`` and ``write``
  (``input.filePath``) and ``apply_patch``/``patch`` (``input.patchText``, the
  ``*** Update File:`` envelope; ``metadata.files[].filePath``/``movePath`` once done)
  [src anomalyco/opencode:packages/opencode/src/tool/apply_patch.ts]. Only completed calls
  count.
- A session with a ``parent_id`` is a subagent's: its prompts are the parent agent's, so it is
  not read as a session of the user.
- ``$XDG_CONFIG_HOME/opencode/AGENTS.md`` (``~/.config/opencode/AGENTS.md``) holds the user's
  global instructions [src anomalyco/opencode:packages/web/src/content/docs/rules.mdx],
  [docs https://opencode.ai/docs/instructions/]: one note, dated by the file's modification
  time. A project's ``AGENTS.md`` (and the ``CLAUDE.md`` OpenCode falls back to) belongs to
  the project, which several agents share, and is not read here.

What it extracts, without any model call: one session per OpenCode session (date of its first
timestamp in the user's time zone, ``""`` if none; working directory; the title and the user's
own prompts as key actions; files edited); project entities and files touched in several
sessions; the global instructions as a note.

Hooks: OpenCode has no shell-command hooks in its configuration; it runs plugins, JavaScript or
TypeScript modules in ``~/.config/opencode/plugins/`` or ``.opencode/plugins/`` subscribing to
events such as ``session.idle`` [docs https://opencode.ai/docs/plugins/].

Visibility (the same rule in every reader): ``readers.common.privacy``. SQLite is read without
ever writing beside the store (``readers.common.sqlite``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    clean_text,
    default_health,
    load_json,
    normalize_path,
    parse_time,
    store_path,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import children, listing, memory_notes
from bourdon.readers.common.paths import safe_text
from bourdon.readers.common.sqlite import json_value, read_sqlite, table_names
from bourdon.readers.common.text import unique
from bourdon.readers.common.tools import patch_files, path_argument

NAME: Final = "opencode"
EDIT_TOOLS: Final = frozenset({"edit", "multiedit", "write", "apply_patch", "patch"})


@dataclass
class _Store:
    """One store's records, the same shape whether they came from SQLite or JSON files."""

    sessions: list[dict[str, Any]] = field(default_factory=list)
    worktrees: dict[str, str] = field(default_factory=dict)
    messages: dict[str, list[tuple[str, object, Any]]] = field(default_factory=dict)
    parts: dict[str, list[Any]] = field(default_factory=dict)  # message id -> part data
    # V2: session id -> (type, time created, data) of its session_message rows, in order
    conversation: dict[str, list[tuple[object, object, Any]]] = field(default_factory=dict)


class OpenCodeReader:
    """OpenCode's session database, its older JSON storage and the global instructions."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_OPENCODE_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """``$XDG_DATA_HOME/opencode`` when set, then ``~/.local/share/opencode``."""
        xdg = ctx.env.get("XDG_DATA_HOME")
        return unique([*([Path(xdg) / "opencode"] if xdg else []), _data_home(ctx)])

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when an OpenCode data folder is found and readable."""
        return default_health(self, ctx)

    def watch_paths(self, ctx: ReaderContext) -> list[Path]:
        """The instructions file, read from outside the store (an edit re-exports)."""
        return [_instructions_file(ctx)]

    def read(self, ctx: ReaderContext) -> ReadResult:
        """The databases first, then the JSON sessions they do not hold, then instructions."""
        stats = ReadStats()
        drafts: dict[str, Draft] = {}
        root = store_path(self, ctx)
        if root is not None and root.is_dir():
            for db in _databases(root):
                store = read_sqlite(db, stats, _db_query)
                if store is not None:
                    _add_drafts(drafts, store)
            if (root / "storage").is_dir():
                _add_drafts(drafts, _json_store(root / "storage", set(drafts), stats))
        notes = _instructions(ctx, stats)
        return ReadResult(assemble(self.name, list(drafts.values()), notes, ctx, stats), stats)


def _data_home(ctx: ReaderContext) -> Path:
    return ctx.home / ".local" / "share" / "opencode"


def _databases(root: Path) -> list[Path]:
    main = root / "opencode.db"
    others = [p for p in listing(root, "opencode-*.db") if p.is_file()]
    return [*([main] if main.is_file() else []), *others]


# -- the database -------------------------------------------------------------------------------


def _db_query(conn: sqlite3.Connection, stats: ReadStats) -> _Store:
    store = _Store()
    tables = table_names(conn)
    if not {"session", "message", "part"} <= tables:
        return store

    def columns(table: str, wanted: tuple[str, ...]) -> list[str]:
        present = {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}
        return [c for c in wanted if c in present]

    chosen = columns("session", ("id", "project_id", "parent_id", "directory", "title"))
    chosen += columns("session", ("time_created",))
    if "id" not in chosen:
        return store
    for row in conn.execute(f'SELECT {", ".join(chosen)} FROM "session"'):
        item = dict(zip(chosen, row, strict=True))
        store.sessions.append(
            {
                "id": item.get("id"),
                "project": item.get("project_id"),
                "parent": item.get("parent_id"),
                "directory": item.get("directory"),
                "title": item.get("title"),
                "created": item.get("time_created"),
            }
        )
        stats.records += 1
    if "project" in tables and columns("project", ("id", "worktree")) == ["id", "worktree"]:
        for project_id, worktree in conn.execute('SELECT id, worktree FROM "project"'):
            if isinstance(project_id, str) and isinstance(worktree, str):
                store.worktrees[project_id] = worktree
    query = 'SELECT id, session_id, time_created, data FROM "message" ORDER BY time_created, id'
    for message_id, session_id, created, data in conn.execute(query):
        entry = (str(message_id), created, json_value(data, None, stats))
        store.messages.setdefault(str(session_id), []).append(entry)
    for message_id, data in conn.execute('SELECT message_id, data FROM "part" ORDER BY id'):
        store.parts.setdefault(str(message_id), []).append(json_value(data, None, stats))
    v2 = ("session_id", "type", "time_created", "data")
    if "session_message" in tables and columns("session_message", v2) == list(v2):
        order = "seq" if columns("session_message", ("seq",)) else "time_created"
        query = f'SELECT {", ".join(v2)} FROM "session_message" ORDER BY session_id, {order}, id'
        for session_id, kind, created, data in conn.execute(query):
            entry = (kind, created, json_value(data, None, stats))
            store.conversation.setdefault(str(session_id), []).append(entry)
    return store


# -- the JSON files -----------------------------------------------------------------------------


def _json_store(storage: Path, known: set[str], stats: ReadStats) -> _Store:
    store = _Store()
    for path in listing(storage / "project", "*.json"):
        data = load_json(path, stats)
        if isinstance(data, dict) and isinstance(data.get("worktree"), str):
            store.worktrees[path.stem] = data["worktree"]
    for project in children(storage / "session"):
        for path in listing(project, "*.json"):
            if path.stem in known:
                continue  # copied into the database, which is newer
            data = load_json(path, stats)
            if not isinstance(data, dict):
                stats.skipped += data is not None  # valid JSON, but not a session
                continue
            info: dict[str, Any] = data
            time = info.get("time")
            store.sessions.append(
                {
                    "id": path.stem,
                    "project": project.name,
                    "parent": info.get("parentID"),
                    "directory": info.get("directory"),
                    "title": info.get("title"),
                    "created": time.get("created") if isinstance(time, dict) else None,
                }
            )
            if not info.get("parentID"):
                _json_messages(storage, path.stem, store, stats)
    return store


def _json_messages(storage: Path, session_id: str, store: _Store, stats: ReadStats) -> None:
    messages: list[tuple[str, object, Any]] = []
    for path in listing(storage / "message" / session_id, "*.json"):
        data = load_json(path, stats)
        time = data.get("time") if isinstance(data, dict) else None
        messages.append((path.stem, time.get("created") if isinstance(time, dict) else None, data))
        parts = [load_json(p, stats) for p in listing(storage / "part" / path.stem, "*.json")]
        store.parts[path.stem] = parts
    messages.sort(key=lambda m: (_number(m[1]), m[0]))
    store.messages[session_id] = messages


def _number(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


# -- records to drafts --------------------------------------------------------------------------


def _add_drafts(drafts: dict[str, Draft], store: _Store) -> None:
    for info in store.sessions:
        session_id = info["id"]
        if not isinstance(session_id, str) or session_id in drafts or info["parent"]:
            continue
        draft = Draft(session_id=session_id, title=clean_text(info["title"]))
        directory = info["directory"]
        if not isinstance(directory, str) or not directory.strip():
            worktree = store.worktrees.get(str(info["project"]))
            directory = worktree if worktree and worktree != "/" else None
        draft.cwd = safe_text(normalize_path(directory))
        draft.seen(parse_time(info["created"]))
        messages = store.messages.get(session_id, [])
        for message_id, created, data in messages:
            draft.seen(parse_time(created))
            role = data.get("role") if isinstance(data, dict) else None
            for part in store.parts.get(message_id, []):
                if isinstance(part, dict):
                    _part(draft, role, part)
        if not messages:  # only V2 keeps this session's conversation
            for kind, created, data in store.conversation.get(session_id, []):
                draft.seen(parse_time(created))
                if isinstance(data, dict):
                    _v2_message(draft, kind, data)
        draft.files = unique(draft.files)  # a file edited 100 times is named once
        drafts[session_id] = draft


def _part(draft: Draft, role: object, part: dict[str, Any]) -> None:
    kind = part.get("type")
    if kind == "text":
        typed = not part.get("synthetic") and not part.get("ignored")
        if role == "user" and typed and isinstance(part.get("text"), str):
            draft.prompts.append(clean_text(part["text"]))
    elif kind == "tool" and part.get("tool") in EDIT_TOOLS:
        draft.files += edited_files(part.get("state"))
    elif kind == "patch" and isinstance(part.get("files"), list):
        draft.files += [f for f in part["files"] if isinstance(f, str)]


def _v2_message(draft: Draft, kind: object, data: dict[str, Any]) -> None:
    if kind == "user" and isinstance(data.get("text"), str):
        draft.prompts.append(clean_text(data["text"]))
    elif kind == "assistant" and isinstance(data.get("content"), list):
        for item in data["content"]:
            tool = isinstance(item, dict) and item.get("type") == "tool"
            if tool and item.get("name") in EDIT_TOOLS:
                draft.files += edited_files(item.get("state"))


def edited_files(state: object) -> list[str]:
    """The files a completed edit tool call changed; ``[]`` unless it completed."""
    if not isinstance(state, dict) or state.get("status") != "completed":
        return []
    params = state.get("input")
    found: list[str] = []
    metadata = state.get("metadata")
    listed = metadata.get("files") if isinstance(metadata, dict) else None
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, dict):
            target = entry.get("movePath") or entry.get("filePath")
            if isinstance(target, str) and target:
                found.append(target)
    if not found and isinstance(params, dict):
        found = patch_files(params.get("patchText"))
        single = path_argument(params)
        if single:
            found.append(single)
    return found


# -- instructions -------------------------------------------------------------------------------


def _instructions_file(ctx: ReaderContext) -> Path:
    xdg = ctx.env.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else ctx.home / ".config") / "opencode" / "AGENTS.md"


def _instructions(ctx: ReaderContext, stats: ReadStats) -> list[NoteDraft]:
    path, heading = _instructions_file(ctx), "OpenCode instructions"
    return memory_notes(path, None, "opencode-instructions", ctx.tz, stats, heading=heading)
