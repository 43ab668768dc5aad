"""Cursor's global database (``globalStorage/state.vscdb``): composers and their bubbles, as
session drafts. Rows are selected by exact keys or key ranges only: credentials live there too.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    MAX_JSON_FILE,
    ReadStats,
    clean_text,
    parse_time,
)
from bourdon.readers.common.assembly import Draft
from bourdon.readers.common.paths import uri_path
from bourdon.readers.common.sqlite import json_value, read_sqlite, table_names
from bourdon.readers.common.tools import path_argument
from bourdon.readers.cursor.workspaces import CAPPED, Workspace, item_values, owner_folders

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


def read_composers(db: Path, workspaces: list[Workspace], stats: ReadStats) -> list[Draft]:
    """Every composer of the global database as a draft, in its workspace folder."""
    if not db.is_file():
        return []
    found = read_sqlite(db, stats, _composer_query)
    if found is None:
        return []
    composers, headers = found
    owners = owner_folders(workspaces, stats)
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


def _composer_query(
    conn: sqlite3.Connection, stats: ReadStats
) -> tuple[list[_Composer], dict[str, dict[str, Any]]]:
    tables = table_names(conn)
    headers: dict[str, dict[str, Any]] = {}
    if "ItemTable" in tables:
        catalog = item_values(("composer.composerHeaders",))(conn, stats).get(
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
        f"SELECT key, {CAPPED} FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY rowid",
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
