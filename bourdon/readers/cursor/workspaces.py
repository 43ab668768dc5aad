"""Cursor's workspaces (``workspaceStorage/<id>/``): the folder each opens and the composers and
legacy chat tabs it lists. Shapes are in the package docstring (``bourdon.readers.cursor``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    MAX_JSON_FILE,
    ReadStats,
    load_json,
)
from bourdon.readers.common.files import children
from bourdon.readers.common.paths import is_windows_path, uri_path
from bourdon.readers.common.sqlite import json_value, read_sqlite, table_names

CAPPED: Final = "CASE WHEN length(value) > ? THEN NULL ELSE value END, length(value)"


@dataclass
class Workspace:
    """One ``workspaceStorage/<id>`` folder: what it opens and what it lists."""

    id: str
    folder: str | None = None  # the single folder it opens; None for multi-root or unknown
    composers: list[str] = field(default_factory=list)
    tabs: list[dict[str, Any]] = field(default_factory=list)


def read_workspaces(folder: Path, stats: ReadStats) -> list[Workspace]:
    """Every workspace folder under ``workspaceStorage``, in name order."""
    found: list[Workspace] = []
    for entry in children(folder):
        if not entry.is_dir():
            continue
        ws = Workspace(entry.name)
        if (entry / "workspace.json").is_file():
            pointer = load_json(entry / "workspace.json", stats)
            if isinstance(pointer, dict) and isinstance(pointer.get("folder"), str):
                ws.folder = uri_path(pointer["folder"])
        if (entry / "state.vscdb").is_file():
            keys = ("composer.composerData", "workbench.panel.aichat.view.aichat.chatdata")
            values = read_sqlite(entry / "state.vscdb", stats, item_values(keys)) or {}
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


def item_values(
    keys: tuple[str, ...],
) -> Callable[[sqlite3.Connection, ReadStats], dict[str, Any]]:
    """A query reading exactly ``keys`` of ``ItemTable``: never a prefix, credentials live there."""

    def query(conn: sqlite3.Connection, stats: ReadStats) -> dict[str, Any]:
        if "ItemTable" not in table_names(conn):
            return {}
        marks = ",".join("?" for _ in keys)
        rows = conn.execute(
            f"SELECT key, {CAPPED} FROM ItemTable WHERE key IN ({marks}) ORDER BY key",
            (MAX_JSON_FILE, *keys),
        ).fetchall()
        out: dict[str, Any] = {}
        for key, raw, size in rows:
            value = json_value(raw, size, stats)
            if value is not None:
                out[key] = value
        return out

    return query


def owner_folders(workspaces: list[Workspace], stats: ReadStats) -> dict[str, str | None]:
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
