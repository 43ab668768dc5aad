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

import sys
from pathlib import Path
from typing import Final

from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    clean_text,
    default_health,
    parse_time,
    store_path,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import described, editor_user_dirs, memory_notes
from bourdon.readers.common.frontmatter import Meta
from bourdon.readers.common.paths import is_windows_path
from bourdon.readers.cursor.composers import read_composers
from bourdon.readers.cursor.workspaces import Workspace, read_workspaces

NAME: Final = "cursor"
PRODUCT: Final = "Cursor"


class CursorReader:
    """Cursor's composers, legacy chat tabs and project rules."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_CURSOR_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """Cursor's ``User`` folder on Linux, macOS and Windows, this OS first."""
        return editor_user_dirs(ctx, PRODUCT)

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a Cursor user folder is found and readable."""
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Workspaces, composers, legacy tabs and project rules, as one view."""
        stats = ReadStats()
        drafts: list[Draft] = []
        notes: list[NoteDraft] = []
        root = store_path(self, ctx)
        if root is not None and not (root / "globalStorage").is_dir() and (root / "User").is_dir():
            root = root / "User"
        if root is not None and root.is_dir():
            workspaces = read_workspaces(root / "workspaceStorage", stats)
            drafts += read_composers(root / "globalStorage" / "state.vscdb", workspaces, stats)
            for ws in workspaces:
                drafts += _legacy_tabs(ws)
            folders = sorted({ws.folder for ws in workspaces if ws.folder})
            notes += _rules(folders, ctx, stats)
        return ReadResult(assemble(self.name, drafts, notes, ctx, stats), stats)


def _legacy_tabs(ws: Workspace) -> list[Draft]:
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
