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

import json
import os
import re
import sqlite3
import sys
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
    project_name,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import children, editor_user_dirs, memory_notes
from bourdon.readers.common.paths import is_windows_path, safe_text, uri_path
from bourdon.readers.common.sqlite import json_value, read_sqlite, table_names
from bourdon.readers.common.text import unique
from bourdon.readers.common.tools import patch_files, path_argument

NAME: Final = "copilot"
PRODUCTS: Final = ("Code", "Code - Insiders", "VSCodium")
INDEX_KEY: Final = "chat.ChatSessionStore.index"
# Response-part tool ids and model-facing tool names that edit files.
EDIT_TOOL_IDS: Final = frozenset(
    {
        "copilot_createFile",
        "copilot_replaceString",
        "copilot_multiReplaceString",
        "copilot_applyPatch",
        "copilot_insertEdit",
        "copilot_editFile",
        "copilot_editNotebook",
    }
)
EDIT_TOOL_NAMES: Final = frozenset(
    {
        "create_file",
        "replace_string_in_file",
        "multi_replace_string_in_file",
        "apply_patch",
        "insert_edit_into_file",
        "edit_file",
        "edit_notebook_file",
    }
)
_LINK: Final = re.compile(r"\]\((file:[^)\s]+)\)")


class CopilotReader:
    """VS Code Copilot Chat sessions (every VS Code flavour present) and memory files."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_COPILOT_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        dirs = [d for product in PRODUCTS for d in editor_user_dirs(ctx, product)]
        return unique([*dirs, ctx.home / ".vscode-server" / "data" / "User"])

    def health(self, ctx: ReaderContext) -> Health:
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
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
            draft.files += _editing_files(load_json(state_file, stats))
        drafts.append(draft)
    return drafts


def _count(state: dict[str, Any]) -> int:
    requests = state.get("requests")
    return len(requests) if isinstance(requests, list) else 0


def replay(path: Path, stats: ReadStats) -> dict[str, Any] | None:
    """The session state a VS Code ``chatSessions/*.jsonl`` mutation log ends in."""
    state: Any = None
    for entry in iter_jsonl(path, stats):
        kind = entry.get("kind")
        if kind == 0:
            state = entry.get("v")
            continue
        if not isinstance(state, dict):
            stats.skipped += 1  # no initial state to apply it to
            continue
        try:
            state = _apply(state, kind, entry)
        except (KeyError, IndexError, TypeError, ValueError):
            stats.skipped += 1
    return state if isinstance(state, dict) else None


def _apply(state: dict[str, Any], kind: object, entry: dict[str, Any]) -> dict[str, Any]:
    path = entry.get("k")
    if kind not in (1, 2, 3) or not isinstance(path, list):
        raise ValueError(f"unknown entry kind {kind!r}")
    if not path:
        whole = entry.get("v")
        if kind == 1 and isinstance(whole, dict):
            return whole  # the whole state replaced
        raise ValueError("empty path")
    parent: Any = state
    for step in path[:-1]:
        parent = parent[_step(parent, step)]
    last = _step(parent, path[-1], allow_end=True)
    if kind == 1:
        _put(parent, last, entry.get("v"))
    elif kind == 2:
        current = parent[last] if _has(parent, last) else None
        items = current if isinstance(current, list) else []
        if isinstance(entry.get("i"), int):
            del items[entry["i"] :]
        values = entry.get("v")
        if isinstance(values, list):
            items.extend(values)
        _put(parent, last, items)
    elif isinstance(parent, dict):
        parent.pop(last, None)
    elif isinstance(parent, list) and last < len(parent):
        parent[last] = None  # a hole, as JavaScript leaves it
    return state


def _step(container: Any, step: object, allow_end: bool = False) -> Any:
    if isinstance(container, dict) and isinstance(step, str):
        if not allow_end and step not in container:
            raise KeyError(step)
        return step
    if isinstance(container, list) and isinstance(step, int) and not isinstance(step, bool):
        if 0 <= step < len(container) or (allow_end and step == len(container)):
            return step
        raise IndexError(step)
    raise TypeError(f"cannot step into {type(container).__name__} with {step!r}")


def _has(container: Any, key: Any) -> bool:
    return key in container if isinstance(container, dict) else key < len(container)


def _put(container: Any, key: Any, value: Any) -> None:
    if isinstance(container, list) and key == len(container):
        container.append(value)
    else:
        container[key] = value


def session_draft(sid: str, state: dict[str, Any], folder: str | None, title: str) -> Draft | None:
    """A session from its replayed state; None when it holds no request."""
    requests = [r for r in state.get("requests") or [] if isinstance(r, dict)]
    if not requests:
        return None
    draft = Draft(session_id=sid, cwd=_uri(state.get("workingDirectory")) or folder)
    draft.title = clean_text(state.get("customTitle") or title)
    draft.seen(parse_time(state.get("creationDate")))
    for request in requests:
        draft.seen(parse_time(request.get("timestamp")))
        draft.prompts.append(clean_text(_message(request.get("message"))))
        response = request.get("response")
        for part in response if isinstance(response, list) else []:
            draft.files += _part_files(part)
        draft.files += _round_files(request.get("result"))
    return draft


def _message(message: object) -> str:
    if isinstance(message, str):
        return message
    if not isinstance(message, dict):
        return ""
    if isinstance(message.get("text"), str):
        return str(message["text"])
    parts = message.get("parts")
    texts = [p.get("text") for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    return "".join(t for t in texts if isinstance(t, str))


def _part_files(part: object) -> list[str]:
    if not isinstance(part, dict):
        return []
    kind = part.get("kind")
    if kind in ("textEditGroup", "notebookEditGroup"):
        found = _uri(part.get("uri"))
        return [found] if found else []
    if kind == "toolInvocationSerialized" and part.get("toolId") in EDIT_TOOL_IDS:
        texts = []
        for key in ("pastTenseMessage", "invocationMessage"):
            value = part.get(key)
            texts.append(value.get("value") if isinstance(value, dict) else value)
        links = [m for t in texts if isinstance(t, str) for m in _LINK.findall(t)]
        return [p for p in (uri_path(link) for link in links) if p]
    return []


def _round_files(result: object) -> list[str]:
    metadata = result.get("metadata") if isinstance(result, dict) else None
    rounds = metadata.get("toolCallRounds") if isinstance(metadata, dict) else None
    files: list[str] = []
    for round_ in rounds if isinstance(rounds, list) else []:
        calls = round_.get("toolCalls") if isinstance(round_, dict) else None
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict) and call.get("name") in EDIT_TOOL_NAMES:
                files += _call_files(call.get("arguments"))
    return files


def _call_files(arguments: object) -> list[str]:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return []
    if not isinstance(arguments, dict):
        return []
    if isinstance(arguments.get("input"), str) and "*** " in arguments["input"]:
        return patch_files(arguments["input"])
    found = path_argument(arguments)
    files = [found] if found else []
    replacements = arguments.get("replacements")
    for item in replacements if isinstance(replacements, list) else []:
        found = path_argument(item)
        if found:
            files.append(found)
    return files


def _editing_files(state: object) -> list[str]:
    if not isinstance(state, dict):
        return []
    files: list[str] = []
    snapshot = state.get("recentSnapshot")
    entries = snapshot.get("entries") if isinstance(snapshot, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            files.append(_uri(entry.get("resource")) or "")
    initial = state.get("initialFileContents")
    for pair in initial if isinstance(initial, list) else []:
        if isinstance(pair, list) and pair:
            files.append(_uri(pair[0]) or "")
    return [f for f in files if f]


def _uri(value: object) -> str | None:
    """A URI as VS Code serializes it: a string, or ``{fsPath, external, path, scheme}``."""
    if isinstance(value, dict):
        if isinstance(value.get("fsPath"), str):
            return safe_text(normalize_path(value["fsPath"]))
        if isinstance(value.get("external"), str):
            return uri_path(value["external"])
        if isinstance(value.get("path"), str) and value.get("scheme", "file") == "file":
            return uri_path("file://" + value["path"])
        return None
    return uri_path(value)


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
