"""GitHub Copilot Chat in VS Code: chat sessions, replayed from VS Code's mutation logs.

Ground truth relied on (native-stores.md section 4.1; microsoft/vscode
``src/vs/workbench/contrib/chat/common/model/objectMutationLog.ts``):

- The user folder is ``~/.config/Code/User`` (Linux, honours ``XDG_CONFIG_HOME``),
  ``~/Library/Application Support/Code/User`` (macOS) or ``%APPDATA%\\Code\\User``
  (Windows); ``Code - Insiders``, ``VSCodium`` and ``~/.vscode-server/data/User`` too. Every
  one present is read. ``BOURDON_COPILOT_STORE`` names the user folder(s) to read instead
  (several separated by the path separator).
- ``workspaceStorage/<id>/workspace.json`` names the folder (``{"folder": "<URI>"}``;
  ``{"configuration": ...}`` is multi-root and gives no working directory);
  ``globalStorage/emptyWindowChatSessions/`` holds chats opened without a folder.
- ``chatSessions/<sessionId>.json`` (old) is one session object. ``<sessionId>.jsonl``
  (new) is a mutation log that is replayed in full: ``{"kind":0,"v":…}`` sets the whole state
  (first line, and again when VS Code compacts the file), ``{"kind":1,"k":[path],"v":…}``
  sets a value, ``{"kind":2,"k":[path],"v":[…],"i":n}`` truncates the array at ``k`` to
  ``n`` items when ``i`` is given and then appends ``v``, ``{"kind":3,"k":[path]}`` deletes.
  Paths mix keys and indexes. An entry whose path does not exist is skipped and counted;
  a torn last line is ignored. Both files may exist for one session: the one with more
  requests wins, the ``.jsonl`` on a tie.
- The session object: ``sessionId``, ``creationDate`` (epoch ms), ``customTitle``,
  ``workingDirectory`` (newer, a URI), ``requests[]`` with ``timestamp``,
  ``message.text`` (or ``message.parts[].text``), ``response[]`` parts and
  ``result.metadata.toolCallRounds[].toolCalls[]{name, arguments (JSON string)}``.
  Files edited come from ``textEditGroup``/``notebookEditGroup`` parts (``uri`` as a string
  or ``{fsPath, path, scheme}``), from edit tools' ``toolInvocationSerialized`` parts (the
  ``file://`` links of their messages), from edit tool calls' arguments (``filePath``,
  ``apply_patch`` envelopes) and from ``chatEditingSessions/<sessionId>/state.json``
  (``recentSnapshot.entries[].resource``, ``initialFileContents[][0]``).
- Titles: ``customTitle``, else the UI index ``ItemTable['chat.ChatSessionStore.index']``
  of the workspace ``state.vscdb`` (``entries.<id>.title``), read by that exact key. Index
  entries without a session file are ignored.
- Memory files: ``GitHub.copilot-chat/memory-tool/memories/**.md`` (one note per Markdown
  bullet, or per file without bullets) and a workspace folder's
  ``.github/copilot-instructions.md`` (one note), dated by modification time.

What it extracts, without any model call: one session per chat (date of the first timestamp
in the user's time zone, ``""`` if none; working directory; the title and the user's own
prompts as key actions; files edited); project entities and files touched in several
sessions; notes from the memory files. Sessions with no request produce nothing.

Visibility (the same rule in every reader): ``readers.common.privacy``.

SQLite is read without ever writing beside the store (see ``read_sqlite``): no ``-wal`` or
``-shm`` is created and no byte or modification time changes.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    default_health,
    load_json,
    project_name,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import children, editor_user_dirs, memory_notes
from bourdon.readers.common.paths import is_windows_path, uri_path
from bourdon.readers.common.sqlite import json_value, read_sqlite, table_names
from bourdon.readers.common.text import unique
from bourdon.readers.copilot.replay import replay
from bourdon.readers.copilot.sessions import editing_files, session_draft

NAME: Final = "copilot"
PRODUCTS: Final = ("Code", "Code - Insiders", "VSCodium")
INDEX_KEY: Final = "chat.ChatSessionStore.index"


class CopilotReader:
    """VS Code Copilot Chat sessions (every VS Code flavour present) and memory files."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_COPILOT_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """The ``User`` folders of VS Code, Insiders, VSCodium and VS Code Server."""
        dirs = [d for product in PRODUCTS for d in editor_user_dirs(ctx, product)]
        return unique([*dirs, ctx.home / ".vscode-server" / "data" / "User"])

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a VS Code user folder is found and readable."""
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        """The chat sessions and memory files of every user folder present, as one view."""
        stats = ReadStats()
        drafts: list[Draft] = []
        notes: list[NoteDraft] = []
        for root in self._roots(ctx):
            found, memories = _read_user_dir(root, ctx, stats)
            drafts += found
            notes += memories
        return ReadResult(assemble(self.name, drafts, notes, ctx, stats), stats)

    def _roots(self, ctx: ReaderContext) -> list[Path]:
        if ctx.store is not None:
            return [ctx.store]
        override = ctx.env.get(self.store_env)
        if override:
            return [Path(p).expanduser() for p in override.split(os.pathsep) if p]
        return [p for p in self.locations(ctx) if p.is_dir()]


def _read_user_dir(
    root: Path, ctx: ReaderContext, stats: ReadStats
) -> tuple[list[Draft], list[NoteDraft]]:
    drafts: list[Draft] = []
    notes: list[NoteDraft] = []
    places: list[tuple[Path, str | None]] = []
    for ws in children(root / "workspaceStorage"):
        if not ws.is_dir():
            continue
        folder = None
        if (ws / "workspace.json").is_file():
            pointer = load_json(ws / "workspace.json", stats)
            if isinstance(pointer, dict):
                folder = uri_path(pointer.get("folder"))
        places.append((ws, folder))
    places.append((root / "globalStorage" / "emptyWindowChatSessions", None))
    for place, folder in places:
        sessions = place if place.name == "emptyWindowChatSessions" else place / "chatSessions"
        titles: dict[str, str] = {}
        if (place / "state.vscdb").is_file() and children(sessions):  # most have no chats
            titles = _titles(place / "state.vscdb", stats)
        drafts += _sessions(sessions, place / "chatEditingSessions", folder, titles, stats)
        notes += _memories(
            place / "GitHub.copilot-chat" / "memory-tool" / "memories", folder, ctx, stats
        )
    notes += _memories(
        root / "globalStorage" / "github.copilot-chat" / "memory-tool" / "memories",
        None,
        ctx,
        stats,
    )
    folders = sorted({f for _, f in places if f})
    notes += _instructions(folders, ctx, stats)
    return drafts, notes


def _titles(db: Path, stats: ReadStats) -> dict[str, str]:
    def query(conn: sqlite3.Connection, local: ReadStats) -> dict[str, str]:
        if "ItemTable" not in table_names(conn):
            return {}
        row = conn.execute(
            "SELECT value, length(value) FROM ItemTable WHERE key = ?", (INDEX_KEY,)
        ).fetchone()
        index = json_value(row[0], row[1], local) if row else None
        entries = index.get("entries") if isinstance(index, dict) else None
        titles = {}
        for sid, entry in entries.items() if isinstance(entries, dict) else ():
            if isinstance(entry, dict) and isinstance(entry.get("title"), str):
                titles[str(sid)] = entry["title"]
        return titles

    return read_sqlite(db, stats, query) or {}


# -- chat sessions -----------------------------------------------------------------------------


def _sessions(
    folder: Path, editing: Path, cwd: str | None, titles: dict[str, str], stats: ReadStats
) -> list[Draft]:
    states: dict[str, dict[str, Any]] = {}
    for path in children(folder):
        if path.suffix not in (".json", ".jsonl") or not path.is_file():
            continue
        state = replay(path, stats) if path.suffix == ".jsonl" else load_json(path, stats)
        if not isinstance(state, dict):
            continue
        named = state.get("sessionId")
        sid = named if isinstance(named, str) and named else path.stem
        known = states.get(sid)
        if known is None or _count(state) >= _count(known):
            states[sid] = state
    drafts = []
    for sid, state in states.items():
        draft = session_draft(sid, state, cwd, titles.get(sid, ""))
        if draft is None:
            continue
        state_file = editing / sid / "state.json"
        if state_file.is_file():
            draft.files += editing_files(load_json(state_file, stats))
        drafts.append(draft)
    return drafts


def _count(state: dict[str, Any]) -> int:
    requests = state.get("requests")
    return len(requests) if isinstance(requests, list) else 0


# -- memory files ------------------------------------------------------------------------------


def _memories(
    folder: Path, workspace: str | None, ctx: ReaderContext, stats: ReadStats
) -> list[NoteDraft]:
    notes = []
    for path in sorted(folder.rglob("*.md")) if folder.is_dir() else []:
        notes += memory_notes(
            path, workspace, "copilot-memory", ctx.tz, stats, per_bullet=True, where=workspace
        )
    return notes


def _instructions(folders: list[str], ctx: ReaderContext, stats: ReadStats) -> list[NoteDraft]:
    notes = []
    for folder in folders:
        if is_windows_path(folder) and sys.platform != "win32":
            continue
        path = Path(folder) / ".github" / "copilot-instructions.md"
        heading = f"Copilot instructions for {project_name(folder)}"
        notes += memory_notes(path, folder, "copilot-instructions", ctx.tz, stats, heading=heading)
    return notes
