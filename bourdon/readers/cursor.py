"""Cursor: composers (agent and chat sessions) from its ``state.vscdb`` SQLite stores.

Ground truth relied on (reverse-engineered, native-stores.md section 3):

- The user folder is ``~/.config/Cursor/User`` (Linux, honours ``XDG_CONFIG_HOME``),
  ``~/Library/Application Support/Cursor/User`` (macOS) or ``%APPDATA%\\Cursor\\User``
  (Windows). ``BOURDON_CURSOR_STORE`` relocates it (the ``User`` folder or its parent).
- ``globalStorage/state.vscdb`` holds two tables with one DDL,
  ``(key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)``: ``ItemTable`` and ``cursorDiskKV``.
  Values are UTF-8 JSON stored as BLOB or TEXT, sometimes NULL (tombstones) or not JSON.
  The database is usually in WAL mode and live while Cursor runs.
- ``cursorDiskKV['composerData:<id>']`` is one conversation: ``name`` (title),
  ``createdAt``/``lastUpdatedAt`` (epoch ms, number or string), ``fullConversationHeadersOnly``
  (ordered ``[{bubbleId, type}]``) or, in old composers, an inline ``conversation`` list;
  ``codeBlockData`` (keys are the URIs of edited files), ``newlyCreatedFiles``;
  ``latestConversationSummary`` (a string, later an object; not read). Most composers are
  empty drafts, which produce no session.
- ``cursorDiskKV['bubbleId:<composerId>:<bubbleId>']`` is one message: ``type`` 1 = user,
  2 = assistant, ``text`` (``rawText`` in some versions), ``createdAt`` (ISO, only on recent
  bubbles), ``toolFormerData{tool (int id, 7 = edit_file), name, params (a JSON string),
  rawArgs, userDecision}``. Bubbles follow the header order, then ``rowid``.
- ``ItemTable['composer.composerHeaders']`` lists composers with ``createdAt`` and
  ``workspaceIdentifier.id``. The same table holds ``cursorAuth/*`` credentials: this
  reader selects rows only by the exact keys or key ranges above and never reads those.
- ``workspaceStorage/<id>/workspace.json`` is ``{"folder": "<URI>"}`` (``file://``,
  ``file:///c%3A/...`` on Windows, ``vscode-remote://...``) or ``{"configuration": ...}``
  for a multi-root workspace; ``workspaceStorage/<id>/state.vscdb``
  ``ItemTable['composer.composerData']`` (``{allComposers: [{composerId}]}``) is what maps a
  composer to its workspace. A composer claimed by workspaces of different folders, or by a
  multi-root workspace, gets no working directory (fail closed).
- Very old chats live in the workspace ``ItemTable['workbench.panel.aichat.view.aichat.chatdata']``
  as ``{tabs: [{tabId, chatTitle, lastSendTime, bubbles: [{type: "user"|"ai", text}]}]}``.
- Project rules, ``<folder>/.cursor/rules/*.mdc`` (front matter ``description``) and the
  legacy ``<folder>/.cursorrules``, are Cursor's memory files: one note each, dated by the
  file's modification time, for workspace folders present on this machine.

What it extracts, without any model call: one session per composer or legacy tab (date of the
first timestamp in the user's time zone, ``""`` if none; working directory; the title and the
user's own prompts as key actions; files from edit tool calls and ``codeBlockData``); project
entities and files touched in several sessions; notes from the rules files.

Visibility (the same rule in every reader): a row is "private" when its working directory, or
the file a note comes from, is under ``~/personal`` or ``~/private`` (``~`` being this home or
any user's home: ``/home/<user>``, ``/Users/<user>``, ``C:\\Users\\<user>``,
``/mnt/<drive>/Users/<user>``); every other row is "team". A project is private if any of its
sessions is.

SQLite is read without ever writing beside the store (see ``read_sqlite``): no ``-wal`` or
``-shm`` is created and no byte or modification time changes.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
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
    load_json,
    local_date,
    normalize_path,
    parse_time,
    project_name,
    store_path,
)

NAME: Final = "cursor"
PRODUCT: Final = "Cursor"

# Tools whose calls change a file (names lower-cased; Cursor also sends int ids, 7 = edit_file).
EDIT_TOOLS: Final = frozenset(
    {
        "edit_file",
        "edit_file_v2",
        "search_replace",
        "strreplace",
        "str_replace",
        "multiedit",
        "multi_edit",
        "write",
        "write_file",
        "create_file",
        "delete_file",
        "delete",
        "apply_patch",
        "reapply",
    }
)
EDIT_TOOL_IDS: Final = frozenset({7})


class CursorReader:
    """Cursor's composers, legacy chat tabs and project rules."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_CURSOR_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        return editor_user_dirs(ctx, PRODUCT)

    def health(self, ctx: ReaderContext) -> Health:
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        stats = ReadStats()
        drafts: list[Draft] = []
        notes: list[NoteDraft] = []
        root = store_path(self, ctx)
        if root is not None and not (root / "globalStorage").is_dir() and (root / "User").is_dir():
            root = root / "User"
        if root is not None and root.is_dir():
            workspaces = _workspaces(root / "workspaceStorage", stats)
            drafts += _composers(root / "globalStorage" / "state.vscdb", workspaces, stats)
            for ws in workspaces:
                drafts += _legacy_tabs(ws)
            folders = sorted({ws.folder for ws in workspaces if ws.folder})
            notes += _rules(folders, ctx, stats)
        return ReadResult(assemble(self.name, drafts, notes, ctx, stats), stats)


# -- workspaces ------------------------------------------------------------------------------


@dataclass
class _Workspace:
    id: str
    folder: str | None = None  # the single folder it opens; None for multi-root or unknown
    composers: list[str] = field(default_factory=list)
    tabs: list[dict[str, Any]] = field(default_factory=list)


def _workspaces(folder: Path, stats: ReadStats) -> list[_Workspace]:
    found: list[_Workspace] = []
    for entry in _children(folder):
        if not entry.is_dir():
            continue
        ws = _Workspace(entry.name)
        if (entry / "workspace.json").is_file():
            pointer = load_json(entry / "workspace.json", stats)
            if isinstance(pointer, dict) and isinstance(pointer.get("folder"), str):
                ws.folder = uri_path(pointer["folder"])
        if (entry / "state.vscdb").is_file():
            keys = ("composer.composerData", "workbench.panel.aichat.view.aichat.chatdata")
            values = read_sqlite(entry / "state.vscdb", stats, _item_values(keys)) or {}
            index = values.get("composer.composerData")
            if isinstance(index, dict) and isinstance(index.get("allComposers"), list):
                ws.composers = [
                    c["composerId"]
                    for c in index["allComposers"]
                    if isinstance(c, dict) and isinstance(c.get("composerId"), str)
                ]
            chat = values.get("workbench.panel.aichat.view.aichat.chatdata")
            if isinstance(chat, dict) and isinstance(chat.get("tabs"), list):
                ws.tabs = [t for t in chat["tabs"] if isinstance(t, dict)]
        found.append(ws)
    return found


def _item_values(
    keys: tuple[str, ...],
) -> Callable[[sqlite3.Connection, ReadStats], dict[str, Any]]:
    """A query reading exactly ``keys`` of ``ItemTable``: never a prefix, credentials live there."""

    def query(conn: sqlite3.Connection, stats: ReadStats) -> dict[str, Any]:
        if "ItemTable" not in _tables(conn):
            return {}
        marks = ",".join("?" for _ in keys)
        rows = conn.execute(
            f"SELECT key, {_CAPPED} FROM ItemTable WHERE key IN ({marks}) ORDER BY key",
            (MAX_JSON_FILE, *keys),
        ).fetchall()
        out: dict[str, Any] = {}
        for key, raw, size in rows:
            value = json_value(raw, size, stats)
            if value is not None:
                out[key] = value
        return out

    return query


def _owner_folders(workspaces: list[_Workspace], stats: ReadStats) -> dict[str, str | None]:
    """composerId -> the folder of the workspace that lists it (None when ambiguous)."""
    claims: dict[str, dict[str, str | None]] = {}
    for ws in workspaces:
        for cid in ws.composers:
            key = _folder_key(ws.folder) if ws.folder else f"<multi-root {ws.id}>"
            claims.setdefault(cid, {})[key] = ws.folder
    owners: dict[str, str | None] = {}
    for cid, folders in claims.items():
        if len(folders) == 1:
            owners[cid] = next(iter(folders.values()))
        else:
            owners[cid] = None
            stats.problem(f"composer {cid} is listed by {len(folders)} workspaces; cwd left unset")
    return owners


def _folder_key(folder: str) -> str:
    return folder.casefold() if is_windows_path(folder) else folder


# -- the global database: composers and bubbles -----------------------------------------------


@dataclass
class _Bubble:
    type: Any
    text: str
    moment: datetime | None
    files: list[str]


@dataclass
class _Composer:
    id: str
    data: dict[str, Any]
    bubbles: list[_Bubble]


def _composers(db: Path, workspaces: list[_Workspace], stats: ReadStats) -> list[Draft]:
    if not db.is_file():
        return []
    found = read_sqlite(db, stats, _composer_query)
    if found is None:
        return []
    composers, headers = found
    owners = _owner_folders(workspaces, stats)
    by_id = {ws.id: ws for ws in workspaces}
    drafts = []
    for composer in composers:
        header = headers.get(composer.id, {})
        draft = Draft(session_id=composer.id, title=clean_text(composer.data.get("name")))
        for value in (composer.data.get("createdAt"), header.get("createdAt")):
            draft.seen(parse_time(value))
        if composer.id in owners:
            draft.cwd = owners[composer.id]
        else:
            ident = header.get("workspaceIdentifier")
            ws = by_id.get(str(ident.get("id"))) if isinstance(ident, dict) else None
            draft.cwd = ws.folder if ws else None
        for bubble in composer.bubbles:
            draft.seen(bubble.moment)
            if bubble.type in (1, "user") and bubble.text:
                draft.prompts.append(bubble.text)
            draft.files += bubble.files
        draft.files += _composer_files(composer.data)
        drafts.append(draft)
    return drafts


_CAPPED: Final = "CASE WHEN length(value) > ? THEN NULL ELSE value END, length(value)"


def _composer_query(
    conn: sqlite3.Connection, stats: ReadStats
) -> tuple[list[_Composer], dict[str, dict[str, Any]]]:
    tables = _tables(conn)
    headers: dict[str, dict[str, Any]] = {}
    if "ItemTable" in tables:
        catalog = _item_values(("composer.composerHeaders",))(conn, stats).get(
            "composer.composerHeaders"
        )
        if isinstance(catalog, dict) and isinstance(catalog.get("allComposers"), list):
            for item in catalog["allComposers"]:
                if isinstance(item, dict) and isinstance(item.get("composerId"), str):
                    headers[item["composerId"]] = item
    composers: list[_Composer] = []
    if "cursorDiskKV" not in tables:
        return composers, headers
    data: dict[str, dict[str, Any]] = {}
    for key, value in _range(conn, "composerData:", stats):
        if isinstance(value, dict):
            data[key.removeprefix("composerData:")] = value
        else:
            stats.skipped += 1
    # One scan of the bubbles, keeping those of composers that list them (drafts list none).
    wanted = {cid for cid, value in data.items() if value.get("fullConversationHeadersOnly")}
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for key, value in _range(conn, "bubbleId:", stats, lambda k: k.split(":")[1] in wanted):
        _, cid, bid = [*key.split(":", 2), "", ""][:3]
        if isinstance(value, dict):
            rows.setdefault(cid, {})[bid] = value
    for cid, value in data.items():
        inline = value.get("conversation")
        bubbles = (
            [_bubble(b) for b in inline if isinstance(b, dict)] if isinstance(inline, list) else []
        )
        order = value.get("fullConversationHeadersOnly")
        mine = rows.get(cid, {})
        for head in order if isinstance(order, list) else []:
            ref = head.get("bubbleId") if isinstance(head, dict) else None
            if isinstance(ref, str) and ref in mine:
                bubbles.append(_bubble(mine.pop(ref)))
        bubbles += [_bubble(v) for v in mine.values()]  # not in the manifest: rowid order
        composers.append(_Composer(cid, value, bubbles))
    return composers, headers


def _range(
    conn: sqlite3.Connection,
    prefix: str,
    stats: ReadStats,
    keep: Callable[[str], bool] = lambda key: True,
) -> Iterator[tuple[str, Any]]:
    """Rows of ``cursorDiskKV`` whose key starts with ``prefix`` (an index range scan)."""
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    cursor = conn.execute(
        f"SELECT key, {_CAPPED} FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY rowid",
        (MAX_JSON_FILE, prefix, end),
    )
    for key, raw, size in cursor:
        if not isinstance(key, str) or not keep(key):
            continue
        value = json_value(raw, size, stats)
        if value is not None:
            yield key, value


def _bubble(data: dict[str, Any]) -> _Bubble:
    text = data.get("text") if isinstance(data.get("text"), str) and data.get("text") else None
    text = text or data.get("rawText")
    moment = parse_time(data.get("createdAt"))
    timing = data.get("timingInfo")
    if moment is None and isinstance(timing, dict):
        moment = parse_time(timing.get("clientStartTime"))
    return _Bubble(data.get("type"), clean_text(text), moment, _tool_files(data))


def _tool_files(bubble: dict[str, Any]) -> list[str]:
    tool = bubble.get("toolFormerData")
    if not isinstance(tool, dict) or tool.get("userDecision") == "rejected":
        return []
    name = tool.get("name")
    edits = (isinstance(name, str) and name.lower() in EDIT_TOOLS) or (
        tool.get("tool") in EDIT_TOOL_IDS and not name
    )
    if not edits:
        return []
    for source in (tool.get("params"), tool.get("rawArgs")):
        found = path_argument(source)
        if found:
            return [found]
    return []


def _composer_files(data: dict[str, Any]) -> list[str]:
    files: list[str] = []
    blocks = data.get("codeBlockData")
    if isinstance(blocks, dict):
        files += [p for p in (uri_path(k) for k in blocks) if p]
    created = data.get("newlyCreatedFiles")
    if isinstance(created, list):
        for item in created:
            uri = item.get("uri") if isinstance(item, dict) else item
            if isinstance(uri, dict):
                uri = uri.get("fsPath") or uri.get("path")
            found = uri_path(uri) if isinstance(uri, str) else None
            if found:
                files.append(found)
    return files


def _legacy_tabs(ws: _Workspace) -> list[Draft]:
    drafts = []
    for tab in ws.tabs:
        tab_id = tab.get("tabId")
        if not isinstance(tab_id, str):
            continue
        draft = Draft(session_id=tab_id, cwd=ws.folder, title=clean_text(tab.get("chatTitle")))
        draft.seen(parse_time(tab.get("lastSendTime")))
        bubbles = tab.get("bubbles")
        for bubble in bubbles if isinstance(bubbles, list) else []:
            if isinstance(bubble, dict) and bubble.get("type") == "user":
                draft.prompts.append(clean_text(bubble.get("text") or bubble.get("rawText")))
        drafts.append(draft)
    return drafts


# -- rules files -------------------------------------------------------------------------------


def _rules(folders: list[str], ctx: ReaderContext, stats: ReadStats) -> list[NoteDraft]:
    notes: list[NoteDraft] = []
    for folder in folders:
        if is_windows_path(folder) and sys.platform != "win32":
            continue
        base = Path(folder)
        rules = sorted((base / ".cursor" / "rules").glob("*.mdc")) if base.is_dir() else []
        for path in [*rules, base / ".cursorrules"]:
            text, moment = read_memory_file(path, stats)
            if not text or moment is None:
                continue
            meta, body = front_matter(text)
            label = path.stem if path.suffix == ".mdc" else ".cursorrules"
            head = f"Cursor rule {label}" + (
                f" ({meta['description']})" if meta.get("description") else ""
            )
            notes.append(
                NoteDraft(
                    date=local_date(moment, ctx.tz),
                    text=f"{head}:\n{body}",
                    project=project_name(folder),
                    tag="cursor-rule",
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
