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

Visibility (the same rule in every reader): ``readers.common.privacy``.

SQLite is read without ever writing beside the store (see ``read_sqlite``): no ``-wal`` or
``-shm`` is created and no byte or modification time changes.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    MAX_JSON_FILE,
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    clean_text,
    default_health,
    load_json,
    parse_time,
    store_path,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import children, described, editor_user_dirs, memory_notes
from bourdon.readers.common.frontmatter import Meta
from bourdon.readers.common.paths import is_windows_path, uri_path
from bourdon.readers.common.sqlite import json_value, read_sqlite, table_names
from bourdon.readers.common.tools import path_argument

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
    for entry in children(folder):
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
        if "ItemTable" not in table_names(conn):
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
    tables = table_names(conn)
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
            label = path.stem if path.suffix == ".mdc" else ".cursorrules"

            def heading(meta: Meta, label: str = label) -> str:
                return f"Cursor rule {label}{described(meta)}"

            notes += memory_notes(path, folder, "cursor-rule", ctx.tz, stats, heading=heading)
    return notes
