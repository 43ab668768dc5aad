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

Visibility (the same rule in every reader): a row is "private" when its working directory, or
the file a note comes from, is under ``~/personal`` or ``~/private`` (``~`` being this home or
any user's home: ``/home/<user>``, ``/Users/<user>``, ``C:\\Users\\<user>``,
``/mnt/<drive>/Users/<user>``); every other row is "team". A project is private if any of its
sessions is.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Final, TypeVar
from urllib.parse import unquote, urlparse

from bourdon.readers.base import (
    MAX_JSON_FILE,
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    clean_text,
    default_health,
    iter_jsonl,
    load_json,
    local_date,
    normalize_path,
    parse_time,
    project_name,
)

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
    for ws in _children(root / "workspaceStorage"):
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
        titles = _titles(place / "state.vscdb", stats) if (place / "state.vscdb").is_file() else {}
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
        if "ItemTable" not in _tables(conn):
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
    for path in _children(folder):
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
    paths = sorted(folder.rglob("*.md")) if folder.is_dir() else []
    for path in paths:
        text, moment = read_memory_file(path, stats)
        if not text.strip() or moment is None:
            continue
        items = _bullets(text) or [text]
        for item in items:
            notes.append(
                NoteDraft(
                    date=local_date(moment, ctx.tz),
                    text=item,
                    project=project_name(workspace),
                    tag="copilot-memory",
                    path=workspace or str(path),
                )
            )
    return notes


def _bullets(text: str) -> list[str]:
    """The items of a Markdown bullet list (continuation lines joined)."""
    items: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        match = re.match(r"^\s{0,3}[-*+]\s+(.*)$", line)
        if match:
            items.append(match.group(1).strip())
        elif items and line.startswith(("  ", "\t")) and line.strip():
            items[-1] += " " + line.strip()
    return [i for i in items if i]


def _instructions(folders: list[str], ctx: ReaderContext, stats: ReadStats) -> list[NoteDraft]:
    notes = []
    for folder in folders:
        if is_windows_path(folder) and sys.platform != "win32":
            continue
        path = Path(folder) / ".github" / "copilot-instructions.md"
        text, moment = read_memory_file(path, stats)
        if text.strip() and moment is not None:
            notes.append(
                NoteDraft(
                    date=local_date(moment, ctx.tz),
                    text=f"Copilot instructions for {project_name(folder)}:\n{text}",
                    project=project_name(folder),
                    tag="copilot-instructions",
                    path=str(path),
                )
            )
    return notes


# -- shared: files, URIs and tool arguments (identical in every reader here; for base.py) ------

PATH_KEYS: Final = (
    "target_file",
    "targetFile",
    "relativeWorkspacePath",
    "relative_workspace_path",
    "file_path",
    "filePath",
    "absolute_path",
    "path",
)
T = TypeVar("T")
MEMORY_FILE_LIMIT: Final = 1024 * 1024
_PATCH_FILE: Final = re.compile(
    r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.MULTILINE
)


def editor_user_dirs(ctx: ReaderContext, product: str) -> list[Path]:
    """The ``User`` folder of a VS Code-like editor, per OS, this machine's OS first."""
    xdg = ctx.env.get("XDG_CONFIG_HOME")
    appdata = ctx.env.get("APPDATA")
    linux = (Path(xdg) if xdg else ctx.home / ".config") / product / "User"
    mac = ctx.home / "Library" / "Application Support" / product / "User"
    windows = (Path(appdata) if appdata else ctx.home / "AppData" / "Roaming") / product / "User"
    order = {"darwin": [mac, linux, windows], "win32": [windows, linux, mac]}
    return unique(order.get(sys.platform, [linux, mac, windows]))


def uri_path(value: object) -> str | None:
    """The path a ``file://``, ``vscode-remote://`` URI (or a plain path) names; else None."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.startswith("vscode-remote://"):
        path = unquote(urlparse(text).path)
        return normalize_path(path) if path else None
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]+://", text) and not text.startswith("file://"):
        return None  # other schemes (untitled:, vscode-vfs://...) name no local file
    return safe_text(normalize_path(text))


def read_memory_file(path: Path, stats: ReadStats) -> tuple[str, datetime | None]:
    """A small text file and its modification time; ``("", None)`` when absent or unreadable."""
    try:
        info = path.stat()
        if not path.is_file():
            return "", None
        if info.st_size > MEMORY_FILE_LIMIT:
            stats.too_large += 1
            stats.problem(f"{path.name}: skipped, {info.st_size:,} bytes is too large")
            return "", None
        raw = path.read_bytes()
    except OSError:
        return "", None
    stats.files += 1
    text = raw.decode("utf-8", "replace").lstrip("\ufeff")
    return text, datetime.fromtimestamp(info.st_mtime, UTC)


def path_argument(params: object) -> str | None:
    """The file a tool call names, from its arguments (a mapping or a JSON string)."""
    if isinstance(params, str):
        try:
            params = json.loads(params)
        except ValueError:
            return None
    if not isinstance(params, dict):
        return None
    for key in PATH_KEYS:
        value = params.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def patch_files(patch: object) -> list[str]:
    """The files an ``apply_patch`` envelope (``*** Update File: <path>``) changes."""
    if not isinstance(patch, str):
        return []
    return [a or b for a, b in _PATCH_FILE.findall(patch)]


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """Flat ``key: value`` front matter between ``---`` lines, and the body after it."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text.strip()
    meta: dict[str, str] = {}
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return meta, "\n".join(lines[i + 1 :]).strip()
        key, sep, value = line.partition(":")
        if sep and key.strip():
            meta[key.strip()] = value.strip().strip("\"'")
    return {}, text.strip()


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


# -- end shared: files --------------------------------------------------------------------------


# -- shared: SQLite read without writing (identical in every reader of a SQLite store) ---------

BUSY_TIMEOUT: Final = 2.0
_SQLITE_MAGIC: Final = b"SQLite format 3\x00"


def read_sqlite(
    path: Path, stats: ReadStats, query: Callable[[sqlite3.Connection, ReadStats], T]
) -> T | None:
    """Run ``query`` on a consistent, read-only view of the SQLite store at ``path``.

    Nothing beside the store is ever created or written, and no byte or mtime changes:

    - a rollback-journal database without a hot journal is opened ``mode=ro``;
    - a WAL database whose ``-wal`` and ``-shm`` exist (a live writer) is opened
      ``mode=ro&readonly_shm=1``: it sees committed, not yet checkpointed frames and maps the
      ``-shm`` read-only (plain ``mode=ro`` would write read marks into it, and create
      ``-wal``/``-shm`` when they are missing);
    - a WAL database without ``-wal``/``-shm`` is fully checkpointed: ``immutable=1``, then
      checked unchanged;
    - anything else (a ``-wal`` without ``-shm``, a hot journal) or any failure: the database
      and its ``-wal`` (or journal) are copied to a temporary folder and the copy is read.
      The ``-shm`` is not copied; SQLite rebuilds it from the checksummed ``-wal`` frames.

    ``query`` runs inside one read transaction, so all its statements see the same snapshot.
    It must return plain data (it may run twice); its counters are kept only once.
    """
    try:
        with open(path, "rb") as handle:
            header = handle.read(100)
    except OSError as exc:
        stats.problem(f"{path.name}: {exc.strerror}")
        return None
    if not header.startswith(_SQLITE_MAGIC):
        stats.skipped += 1
        stats.problem(f"{path.name}: not a SQLite database")
        return None
    stats.files += 1
    wal, shm, journal = (Path(f"{path}{suffix}") for suffix in ("-wal", "-shm", "-journal"))
    wal_mode = len(header) > 19 and header[18] == 2
    direct = None
    if not wal_mode and not journal.exists():
        direct = "mode=ro"
    elif wal_mode and wal.exists() and shm.exists():
        direct = "mode=ro&readonly_shm=1"
    elif wal_mode and not wal.exists() and not shm.exists():
        direct = "mode=ro&immutable=1"
    if direct is not None:
        before = _stamp(path)
        local = ReadStats()
        try:
            result = _run(f"{path.absolute().as_uri()}?{direct}", query, local)
        except sqlite3.Error as exc:
            stats.problem(f"{path.name}: {exc}; reading a copy")
        else:
            if "immutable" not in direct or (_stamp(path) == before and not wal.exists()):
                _add(stats, local)
                return result
    return _read_copy(path, wal, journal, stats, query)


def _read_copy(
    path: Path,
    wal: Path,
    journal: Path,
    stats: ReadStats,
    query: Callable[[sqlite3.Connection, ReadStats], T],
) -> T | None:
    with tempfile.TemporaryDirectory(prefix="bourdon-sqlite-") as tmp:
        copy = Path(tmp) / "store.db"
        for _attempt in range(3):
            before = (_stamp(path), _head(wal))
            try:
                shutil.copyfile(path, copy)
                for side, suffix in ((wal, "-wal"), (journal, "-journal")):
                    target = Path(f"{copy}{suffix}")
                    target.unlink(missing_ok=True)
                    if side.exists():
                        shutil.copyfile(side, target)
            except FileNotFoundError:
                continue  # checkpointed or deleted while copied: copy again
            except OSError as exc:
                stats.problem(f"{path.name}: {exc.strerror}")
                return None
            if (_stamp(path), _head(wal)) == before:
                break
        local = ReadStats()
        try:
            result = _run(str(copy), query, local)
        except sqlite3.Error as exc:
            stats.skipped += 1
            stats.problem(f"{path.name}: {exc}")
            return None
        _add(stats, local)
        return result


def _run(target: str, query: Callable[[sqlite3.Connection, ReadStats], T], local: ReadStats) -> T:
    conn = sqlite3.connect(
        target, uri=target.startswith("file:"), timeout=BUSY_TIMEOUT, isolation_level=None
    )
    try:
        conn.execute("BEGIN")  # one read transaction: every SELECT sees the same snapshot
        return query(conn, local)
    finally:
        conn.close()


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


def _head(path: Path) -> bytes | None:
    """The WAL header (its salts change when a checkpoint restarts the log)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(32)
    except OSError:
        return None


def _add(stats: ReadStats, local: ReadStats) -> None:
    stats.records += local.records
    stats.skipped += local.skipped
    stats.too_large += local.too_large
    for text in local.problems:
        stats.problem(text)


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def json_value(raw: object, size: object, stats: ReadStats) -> Any:
    """A JSON column value (BLOB or TEXT), or None, counted, for NULL, too large or not JSON."""
    if raw is None:
        if isinstance(size, int) and size > MAX_JSON_FILE:
            stats.too_large += 1
        else:
            stats.skipped += 1
        return None
    if isinstance(raw, bytes):
        text = raw.decode("utf-8", "replace")
    elif isinstance(raw, str):
        text = raw
    else:
        stats.skipped += 1
        return None
    try:
        value = json.loads(text.lstrip("\ufeff"))
    except ValueError:
        stats.skipped += 1
        return None
    stats.records += 1
    return value


# -- end shared: SQLite -------------------------------------------------------------------------


# -- shared: manifest assembly (identical in every reader here; a candidate for base.py) ------

PRIVATE_DIRS: Final = ("personal", "private")
_HOME_PRIVATE: Final = re.compile(
    r"^(?:~|/home/[^/]+|/Users/[^/]+|/root|/mnt/[a-z]/Users/[^/]+|[a-z]:/Users/[^/]+)"
    r"/(?:personal|private)(?:/|$)",
    re.IGNORECASE,
)
_UNSAFE: Final = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_NOTE_UNSAFE: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_ANSI_CODES: Final = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)")
MAX_SESSIONS: Final = 500
MAX_ENTITIES: Final = 1000
MAX_NOTES: Final = 1000
MAX_NOTE: Final = 4000
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


def visibility(path: str | None, home: Path) -> str:
    """ "private" under ``~/personal`` or ``~/private`` (this home or any user's), else "team"."""
    if not path:
        return "team"
    text = path.replace("\\", "/")
    base = str(home).replace("\\", "/").rstrip("/")
    if is_windows_path(path):
        text, base = text.casefold(), base.casefold()
    for name in PRIVATE_DIRS:
        root = f"{base}/{name}"
        if text == root or text.startswith(root + "/"):
            return "private"
    return "private" if _HOME_PRIVATE.match(text) else "team"


def is_windows_path(path: str) -> bool:
    return bool(re.match(r"^[A-Za-z]:[\\/]", path)) or path.startswith("\\\\")


def safe_text(value: str | None) -> str | None:
    """``value`` unless it holds control characters or lone surrogates (a garbled path)."""
    return value if value and not _UNSAFE.search(value) else None


def relative_file(path: str, cwd: str | None) -> str | None:
    """A touched file as people name it: relative to the session's folder when inside it."""
    norm = safe_text(normalize_path(path))
    if norm is None:
        return None
    windows = is_windows_path(norm)
    if not windows and "\\" in norm and not norm.startswith("/"):
        return PureWindowsPath(norm).as_posix()  # a relative path written on Windows
    if not cwd or windows != is_windows_path(cwd):
        return norm
    pure: type[PurePosixPath] | type[PureWindowsPath] = (
        PureWindowsPath if windows else PurePosixPath
    )
    file, folder = pure(norm), pure(cwd)
    if not file.is_absolute():
        return file.as_posix()
    try:
        return file.relative_to(folder).as_posix()
    except ValueError:
        return norm


def note_text(text: str) -> str:
    """Memory-file text kept readable and within the note limit."""
    text = _ANSI_CODES.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _NOTE_UNSAFE.sub(" ", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return text if len(text) <= MAX_NOTE else text[: MAX_NOTE - 1].rstrip() + "…"


def unique(items: Iterable[T]) -> list[T]:
    """Items in first-seen order, without repeats or empty values."""
    seen: set[Any] = set()
    out = []
    for item in items:
        if item and item not in seen:
            seen.add(item)
            out.append(item)
    return out


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
    rows = rows[:MAX_SESSIONS]
    stats.sessions = len(rows)
    return {
        "agent": {"id": agent_id, "type": "code-assistant"},
        "known_entities": _entities(rows, project)[:MAX_ENTITIES],
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
        row["visibility"] = visibility(note.path, ctx.home)
        rows[(note.date, text)] = row
    ordered = sorted(rows.values(), key=lambda r: (r["date"], r["text"]), reverse=True)
    return ordered[:MAX_NOTES]


# -- end shared: assembly -----------------------------------------------------------------------
