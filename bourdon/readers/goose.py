"""goose (Block's open-source agent, CLI and desktop): ``sessions.db`` and older JSONL sessions.

Ground truth relied on (goose's public source, block/goose, now aaif-goose/goose):

- The store is goose's ``sessions`` folder inside its data folder, chosen by ``etcetera``'s
  ``choose_app_strategy`` (``Block``/``goose``): XDG on Linux and macOS,
  ``$XDG_DATA_HOME/goose/sessions`` (``~/.local/share/goose/sessions``), and
  ``%APPDATA%\\Block\\goose\\data\\sessions`` on Windows; ``GOOSE_PATH_ROOT`` moves it to
  ``<root>/data/sessions`` [src block/goose:crates/goose/src/config/paths.rs],
  [docs https://docs.rs/etcetera/latest/etcetera/app_strategy/fn.choose_app_strategy.html].
  ``BOURDON_GOOSE_STORE`` names the sessions folder (or the data folder holding it) instead.
- From v1.10 sessions live in ``sessions.db``, SQLite in WAL mode (sqlx's default), kept open
  by goose [src block/goose:crates/goose/src/session/session_manager.rs]:
  ``sessions(id "YYYYMMDD_N", name, description, session_type, working_dir, created_at, ...)``
  (``name`` arrived in schema version 4; before it ``description`` was the title) and
  ``messages(id, session_id, role, content_json, created_timestamp, metadata_json, ...)`` in
  insertion order. ``created_at`` is SQLite text in UTC (``YYYY-MM-DD HH:MM:SS``, or RFC 3339
  when bound by sqlx); ``created_timestamp`` is epoch seconds (milliseconds in newer
  versions). Sessions of type ``sub_agent`` and ``hidden`` are goose's own, not the user's;
  ``user``, ``scheduled`` and the newer ``terminal``, ``gateway`` and ``acp`` are read.
  Columns are selected only if present.
- Before that, each session was ``<sessions>/<id>.jsonl``: a first line of metadata
  (``{working_dir, description, schedule_id, message_count, ...tokens}``; a file may lack it),
  then one message per line [src block/goose:crates/goose/src/session/legacy.rs],
  [src block/goose:crates/goose/src/session/storage.rs]. The first start of the database
  imports them under the same id and leaves them in place, so the database copy wins.
- A message is ``{role, created, content: [...], metadata: {userVisible, agentVisible}}``;
  content items are tagged by ``type`` [src block/goose:crates/goose/src/conversation/message.rs]:
  ``text`` (``text``), ``toolRequest`` (``id``, ``toolCall: {status: success, value: {name,
  arguments}}``) and ``toolResponse`` (``id``, ``toolResult: {status: success|error, value}``;
  ``value.isError`` in newer versions). A user text that is not ``userVisible`` was injected
  by goose. Tool names are ``<extension>__<tool>``; the developer extension edits files with
  ``text_editor`` (``command: write|str_replace|insert|undo_edit``, ``path``)
  [src block/goose:crates/goose-mcp/src/developer/mod.rs] and, in newer versions, ``write``
  and ``edit`` (``path``) [src block/goose:crates/goose-mcp/src/developer/edit.rs]. A call whose
  response failed changed nothing.
- ``.goosehints`` files hold the user's hints: the global ``~/.config/goose/.goosehints``
  (goose's config folder: ``%APPDATA%\\Block\\goose\\config`` on Windows, ``<root>/config``
  with ``GOOSE_PATH_ROOT``) and ``<working dir>/.goosehints`` for folders present here
  [src block/goose:crates/goose-mcp/src/developer/mod.rs]: one note each, dated by the
  file's modification time. A project's ``AGENTS.md``, which goose reads first, belongs to
  the project, which several agents share, and is not read here.

What it extracts, without any model call: one session per goose session (date of its first
timestamp in the user's time zone, ``""`` if none; working directory; the title and the user's
own prompts as key actions; files edited); project entities and files touched in several
sessions; the hints files as notes.

Hooks: goose (v1.38 and later) runs hooks from plugins, ``~/.agents/plugins/<name>/hooks/
hooks.json`` or ``<project>/.agents/plugins/<name>/hooks/hooks.json``, in the Open Plugins
format (events ``SessionStart``, ``SessionEnd``, ``Stop``, ``UserPromptSubmit``,
``PreToolUse``, ``PostToolUse``, ...; commands get JSON with ``session_id`` on stdin)
[docs https://raw.githubusercontent.com/block/goose/main/documentation/docs/guides/context-engineering/hooks.md].

Visibility (the same rule in every reader): ``readers.common.privacy``. SQLite is read without
ever writing beside the store (``readers.common.sqlite``).
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from datetime import UTC, datetime
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
    normalize_path,
    parse_time,
    project_name,
    store_path,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import listing, memory_notes
from bourdon.readers.common.paths import is_windows_path, safe_text
from bourdon.readers.common.sqlite import json_value, read_sqlite, table_names
from bourdon.readers.common.text import unique
from bourdon.readers.common.tools import path_argument

NAME: Final = "goose"
NOT_THE_USERS: Final = frozenset({"sub_agent", "hidden"})
EDITOR_COMMANDS: Final = frozenset({"write", "str_replace", "insert", "undo_edit"})
_FRACTION: Final = re.compile(r"(\.\d{6})\d+")


class GooseReader:
    """goose's session database, its older JSONL session files and its hints files."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_GOOSE_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """``GOOSE_PATH_ROOT``'s, then the XDG, then the Windows sessions folder."""
        return unique([base / "sessions" for base in _bases(ctx, "data")])

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a goose sessions folder is found and readable."""
        return default_health(self, ctx)

    def watch_paths(self, ctx: ReaderContext) -> list[Path]:
        """The global hints files, read from outside the store (an edit re-exports)."""
        return [base / ".goosehints" for base in _bases(ctx, "config")]

    def read(self, ctx: ReaderContext) -> ReadResult:
        """The database first, then the JSONL sessions it does not hold, then hints files."""
        stats = ReadStats()
        drafts: dict[str, Draft] = {}
        folder = store_path(self, ctx)
        named_data = folder is not None and not (folder / "sessions.db").exists()
        if folder is not None and named_data and (folder / "sessions").is_dir():
            folder = folder / "sessions"  # the data folder was named
        if folder is not None and folder.is_dir():
            if (folder / "sessions.db").is_file():
                for draft in read_sqlite(folder / "sessions.db", stats, _db_query) or []:
                    drafts.setdefault(draft.session_id, draft)
            for path in listing(folder, "*.jsonl"):
                if path.stem not in drafts:  # imported into the database, which is newer
                    found = _jsonl_session(path, stats)
                    if found is not None:
                        drafts[found.session_id] = found
        notes = _hints(ctx, sorted({d.cwd for d in drafts.values() if d.cwd}), stats)
        return ReadResult(assemble(self.name, list(drafts.values()), notes, ctx, stats), stats)


def _bases(ctx: ReaderContext, kind: str) -> list[Path]:
    """goose's ``data`` or ``config`` folders: ``GOOSE_PATH_ROOT``, XDG, then Windows."""
    bases: list[Path] = []
    root = ctx.env.get("GOOSE_PATH_ROOT")
    if root and (root.startswith("/") or is_windows_path(root)):
        bases.append(Path(root) / kind)
    xdg = ctx.env.get("XDG_DATA_HOME" if kind == "data" else "XDG_CONFIG_HOME")
    default = ctx.home / (".local/share" if kind == "data" else ".config")
    bases.append((Path(xdg) if xdg else default) / "goose")
    appdata = ctx.env.get("APPDATA")
    roaming = Path(appdata) if appdata else ctx.home / "AppData" / "Roaming"
    bases.append(roaming / "Block" / "goose" / kind)
    return bases


def _utc(value: object) -> datetime | None:
    """A goose timestamp: SQLite text in UTC (naive or with an offset), or epoch numbers."""
    if isinstance(value, str):
        value = _FRACTION.sub(r"\1", value.strip())
    return parse_time(value, UTC)


# -- the database -------------------------------------------------------------------------------


def _db_query(conn: sqlite3.Connection, stats: ReadStats) -> list[Draft]:
    tables = table_names(conn)
    if "sessions" not in tables:
        return []

    def columns(table: str, wanted: tuple[str, ...]) -> list[str]:
        present = {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}
        return [c for c in wanted if c in present]

    wanted = ("id", "name", "description", "session_type", "working_dir", "created_at")
    chosen = columns("sessions", wanted)
    if "id" not in chosen:
        return []
    drafts: dict[str, Draft] = {}
    for row in conn.execute(f'SELECT {", ".join(chosen)} FROM "sessions" ORDER BY id'):
        item = dict(zip(chosen, row, strict=True))
        stats.records += 1
        if not isinstance(item["id"], str) or item.get("session_type") in NOT_THE_USERS:
            continue
        draft = Draft(session_id=item["id"])
        draft.title = clean_text(item.get("name")) or clean_text(item.get("description"))
        draft.cwd = _folder(item.get("working_dir"))
        draft.seen(_utc(item.get("created_at")))
        drafts[draft.session_id] = draft
    if "messages" not in tables:
        return list(drafts.values())
    chosen = columns("messages", ("session_id", "role", "content_json", "created_timestamp"))
    chosen += columns("messages", ("metadata_json",))
    if chosen[:3] != ["session_id", "role", "content_json"]:
        return list(drafts.values())
    edits: dict[str, _Edits] = {}
    for row in conn.execute(f'SELECT {", ".join(chosen)} FROM "messages" ORDER BY id'):
        item = dict(zip(chosen, row, strict=True))
        owner = drafts.get(str(item["session_id"]))
        if owner is None:
            continue
        content = json_value(item["content_json"], None, stats)
        metadata = _lenient_json(item.get("metadata_json"))
        message = {"role": item["role"], "created": item.get("created_timestamp")}
        message |= {"content": content, "metadata": metadata}
        _message(owner, message, edits.setdefault(owner.session_id, _Edits()))
    for session_id, found in edits.items():
        drafts[session_id].files += unique(found.done())  # a file edited 100 times: once
    return list(drafts.values())


def _lenient_json(raw: object) -> Any:
    try:
        return json.loads(raw) if isinstance(raw, (str, bytes)) else None
    except ValueError:
        return None


def _folder(value: object) -> str | None:
    return safe_text(normalize_path(value)) if isinstance(value, str) else None


# -- the JSONL files ----------------------------------------------------------------------------


def _jsonl_session(path: Path, stats: ReadStats) -> Draft | None:
    draft = Draft(session_id=path.stem)
    edits = _Edits()
    any_record = False
    for index, record in enumerate(iter_jsonl(path, stats)):
        any_record = True
        if index == 0 and "role" not in record and "content" not in record:
            draft.title = clean_text(record.get("description"))
            draft.cwd = _folder(record.get("working_dir"))
            continue
        _message(draft, record, edits)
    draft.files += unique(edits.done())
    return draft if any_record else None


# -- messages -----------------------------------------------------------------------------------


class _Edits:
    """The files each tool request would change, and the requests whose response failed."""

    def __init__(self) -> None:
        self.requested: dict[str, list[str]] = {}
        self.failed: set[str] = set()

    def done(self) -> list[str]:
        return [
            f for call, files in self.requested.items() if call not in self.failed for f in files
        ]


def _message(draft: Draft, message: dict[str, Any], edits: _Edits) -> None:
    draft.seen(_utc(message.get("created")))
    metadata = message.get("metadata")
    visible = not (isinstance(metadata, dict) and metadata.get("userVisible") is False)
    content = message.get("content")
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        kind, call_id = item.get("type"), str(item.get("id"))
        if kind == "text" and message.get("role") == "user" and visible:
            text = clean_text(item.get("text"))
            if text:
                draft.prompts.append(text)
        elif kind == "toolRequest":
            files = edited_files(item.get("toolCall"))
            if files:
                edits.requested[call_id] = files
        elif kind == "toolResponse" and _failed(item.get("toolResult")):
            edits.failed.add(call_id)


def edited_files(call: object) -> list[str]:
    """The file a developer-extension tool call edits; ``[]`` for any other call."""
    if not isinstance(call, dict) or call.get("status") != "success":
        return []
    value = call.get("value")
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return []
    tool = value["name"].rsplit("__", 1)[-1]
    arguments = value.get("arguments")
    if tool == "text_editor":
        command = arguments.get("command") if isinstance(arguments, dict) else None
        if command not in EDITOR_COMMANDS:
            return []
    elif tool not in ("write", "edit"):
        return []
    found = path_argument(arguments)
    return [found] if found else []


def _failed(result: object) -> bool:
    if not isinstance(result, dict):
        return False
    value = result.get("value")
    return result.get("status") == "error" or (
        isinstance(value, dict) and value.get("isError") is True
    )


# -- hints --------------------------------------------------------------------------------------


def _hints(ctx: ReaderContext, folders: list[str], stats: ReadStats) -> list[NoteDraft]:
    places: list[tuple[Path, str | None]] = [
        (b / ".goosehints", None) for b in _bases(ctx, "config")
    ]
    for folder in folders:
        if not is_windows_path(folder) or sys.platform == "win32":
            places.append((Path(folder) / ".goosehints", folder))
    notes: list[NoteDraft] = []
    for path, cwd in places:
        heading = "Goose hints" + (f" for {project_name(cwd)}" if cwd else "")
        notes += memory_notes(path, cwd, "goose-hints", ctx.tz, stats, heading=heading)
    return notes
