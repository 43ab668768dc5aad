"""GitHub Copilot CLI (the ``copilot`` terminal agent): session folders and ``session-store.db``.

Ground truth relied on (native-stores.md section 4.2):

- The root is ``~/.copilot`` (``COPILOT_HOME`` moves it; ``BOURDON_COPILOT_CLI_STORE``
  relocates it for bourdon).
- ``session-state/<uuid>/`` is one session. About half are empty templates (no
  ``events.jsonl``), which produce nothing. ``inuse.<pid>.lock`` marks a live session: it is
  read like any other (only complete lines), and a crashed one simply lacks
  ``session.shutdown``.
- ``events.jsonl`` is append-only, one ``{"type", "id", "parentId", "timestamp" (ISO), "data"}``
  per line. Used: ``session.start`` (``data.context.cwd``, ``data.startTime``),
  ``user.message`` (``data.content`` is what the user typed; ``transformedContent`` adds
  injected context and is not used), ``tool.execution_start`` (``toolName``, ``arguments``
  with ``path``/``file_path``; ``apply_patch`` carries a patch) and
  ``tool.execution_complete`` (``success: false`` means the edit did not happen). About
  thirty other event types are known and ignored; unknown ones are counted as skipped.
- ``workspace.yaml`` is flat ``key: value`` YAML, values plain, ``"double"`` or ``'single'``
  quoted: ``id``, ``cwd``, ``git_root``, ``repository``, ``branch``, ``name`` (the title),
  ``summary``, ``created_at``, ``updated_at``. It is parsed here by hand (readers may not use
  bourdon's YAML loader); nested or block values other than ``|``/``>`` scalars are ignored.
- ``session-store.db`` (SQLite, WAL, live) has ``sessions(id, cwd, summary, created_at,
  updated_at, ...)``, ``turns(session_id, turn_index, user_message, timestamp, ...)`` and
  ``session_files(session_id, file_path, tool_name, turn_index)``. Columns are selected only
  if present. A session only in the database (its folder cleaned up) is still a session; its
  prompts come from ``turns`` only when the folder had no ``user.message``.
- ``~/.copilot/copilot-instructions.md`` and a project's ``.github/copilot-instructions.md``
  (for working directories present here) are the memory files: one note each, dated by the
  file's modification time.

What it extracts, without any model call: one session per session id (date of the first
timestamp in the user's time zone, ``""`` if none; working directory; the title and the user's
own prompts as key actions; files from edit tools and ``session_files``); project entities and
files touched in several sessions; notes from the instruction files.

Visibility (the same rule in every reader): ``readers.common.privacy``.

SQLite is read without ever writing beside the store (see ``read_sqlite``): no ``-wal`` or
``-shm`` is created and no byte or modification time changes.
"""

from __future__ import annotations

import json
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
    normalize_path,
    parse_time,
    project_name,
    store_path,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import children, memory_notes, read_memory_file
from bourdon.readers.common.paths import is_windows_path, safe_text
from bourdon.readers.common.sqlite import read_sqlite, table_names
from bourdon.readers.common.text import unique
from bourdon.readers.common.tools import patch_files, path_argument

NAME: Final = "copilot-cli"
EDIT_TOOLS: Final = frozenset(
    {
        "create",
        "edit",
        "multi_edit",
        "multiedit",
        "str_replace",
        "str_replace_editor",
        "insert",
        "write",
        "write_file",
        "apply_patch",
        "delete",
    }
)
KNOWN_EVENTS: Final = frozenset(
    {
        "session.start",
        "session.resume",
        "session.shutdown",
        "session.info",
        "session.error",
        "session.warning",
        "session.model_change",
        "session.mode_changed",
        "session.context_changed",
        "session.compaction_start",
        "session.compaction_complete",
        "session.task_complete",
        "session.workspace_file_changed",
        "user.message",
        "assistant.message",
        "assistant.turn_start",
        "assistant.turn_end",
        "assistant.reasoning",
        "tool.execution_start",
        "tool.execution_complete",
        "tool.user_requested",
        "hook.start",
        "hook.end",
        "skill.invoked",
        "subagent.started",
        "subagent.completed",
        "system.message",
        "system.notification",
        "abort",
    }
)


class CopilotCliReader:
    """Copilot CLI session folders, its session store database and instruction files."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_COPILOT_CLI_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """``$COPILOT_HOME`` when set, then ``~/.copilot``."""
        native = ctx.env.get("COPILOT_HOME")
        return unique([*([Path(native)] if native else []), ctx.home / ".copilot"])

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a Copilot CLI store is found and readable."""
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Session folders, then the session store database, then instruction files."""
        stats = ReadStats()
        drafts: dict[str, Draft] = {}
        notes: list[NoteDraft] = []
        root = store_path(self, ctx)
        if root is not None and root.is_dir():
            prompted: set[str] = set()
            for folder in children(root / "session-state"):
                found = _session_folder(folder, stats) if folder.is_dir() else None
                if found is not None:
                    draft, had_prompts = found
                    drafts[draft.session_id] = draft
                    if had_prompts:
                        prompted.add(draft.session_id)
            if (root / "session-store.db").is_file():
                rows = read_sqlite(root / "session-store.db", stats, _store_query)
                _merge_store(drafts, prompted, rows or {})
            notes = _instructions(root, list(drafts.values()), ctx, stats)
        return ReadResult(assemble(self.name, list(drafts.values()), notes, ctx, stats), stats)


# -- session folders ---------------------------------------------------------------------------


def _session_folder(folder: Path, stats: ReadStats) -> tuple[Draft, bool] | None:
    events = folder / "events.jsonl"
    meta: dict[str, str] = {}
    if (folder / "workspace.yaml").is_file():
        text, _ = read_memory_file(folder / "workspace.yaml", stats)
        meta = parse_flat_yaml(text)
    if not meta and not events.is_file():
        return None  # an empty template folder
    draft = Draft(session_id=meta.get("id") or folder.name)
    draft.title = clean_text(meta.get("name") or meta.get("summary"))
    draft.cwd = safe_text(normalize_path(meta.get("cwd")))
    draft.seen(parse_time(meta.get("created_at")))
    edits: dict[str, list[str]] = {}
    failed: set[str] = set()
    had_prompts = False
    for event in iter_jsonl(events, stats) if events.is_file() else ():
        kind = event.get("type")
        raw = event.get("data")
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        draft.seen(parse_time(event.get("timestamp")))
        if kind == "session.start":
            draft.seen(parse_time(data.get("startTime")))
            context = data.get("context")
            if not draft.cwd and isinstance(context, dict):
                draft.cwd = safe_text(normalize_path(context.get("cwd")))
        elif kind == "user.message":
            text = clean_text(data.get("content"))
            if text:
                draft.prompts.append(text)
                had_prompts = True
        elif kind == "tool.execution_start":
            call = str(data.get("toolCallId") or event.get("id") or len(edits))
            paths = edit_paths(data.get("toolName"), data.get("arguments"))
            if paths:
                edits[call] = paths
        elif kind == "tool.execution_complete":
            if data.get("success") is False:
                failed.add(str(data.get("toolCallId")))
        elif kind not in KNOWN_EVENTS:
            stats.skipped += 1
    for call, paths in edits.items():
        if call not in failed:
            draft.files += paths
    return draft, had_prompts


def edit_paths(tool: object, arguments: object) -> list[str]:
    """The files an edit tool call changes; ``[]`` for any other tool."""
    if not isinstance(tool, str) or tool.lower() not in EDIT_TOOLS:
        return []
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return patch_files(arguments)
    if tool.lower() == "apply_patch":
        patch = (
            arguments.get("input") or arguments.get("patch")
            if isinstance(arguments, dict)
            else arguments
        )
        return patch_files(patch)
    if isinstance(arguments, dict) and arguments.get("command") == "view":
        return []
    found = path_argument(arguments)
    return [found] if found else []


def parse_flat_yaml(text: str) -> dict[str, str]:
    """The top-level ``key: value`` pairs of a flat YAML document (quoted or plain values)."""
    out: dict[str, str] = {}
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line[0] in " \t#-":
            continue
        key, sep, rest = line.partition(":")
        key = key.strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][\w.-]*", key):
            continue
        value = rest.strip()
        if value in ("|", "|-", ">", ">-"):
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i][0] in " \t"):
                block.append(lines[i].strip())
                i += 1
            joiner = "\n" if value.startswith("|") else " "
            out[key] = joiner.join(block).strip()
            continue
        parsed = _yaml_scalar(value)
        if parsed is not None:
            out[key] = parsed
    return out


def _yaml_scalar(value: str) -> str | None:
    if value.startswith('"'):
        end = value.rfind('"')
        if end <= 0:
            return None
        try:
            decoded = json.loads(value[: end + 1])
        except ValueError:
            return value[1:end]
        return decoded if isinstance(decoded, str) else None
    if value.startswith("'"):
        end = value.rfind("'")
        return value[1:end].replace("''", "'") if end > 0 else None
    value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
    if value in ("", "~", "null", "Null", "NULL") or value[0] in "[{&*!|>":
        return None
    return value


# -- the session store database ----------------------------------------------------------------


def _store_query(conn: sqlite3.Connection, stats: ReadStats) -> dict[str, list[dict[str, Any]]]:
    tables = table_names(conn)
    wanted = {
        "sessions": ("id", "cwd", "summary", "created_at", "updated_at"),
        "turns": ("session_id", "turn_index", "user_message", "timestamp"),
        "session_files": ("session_id", "file_path", "tool_name", "turn_index"),
    }
    out: dict[str, list[dict[str, Any]]] = {}
    for table, columns in wanted.items():
        if table not in tables:
            continue
        present = {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}
        chosen = [c for c in columns if c in present]
        if "id" not in chosen and "session_id" not in chosen:
            continue
        order = " ORDER BY rowid"
        rows = conn.execute(f'SELECT {", ".join(chosen)} FROM "{table}"{order}').fetchall()
        out[table] = [dict(zip(chosen, row, strict=True)) for row in rows]
        stats.records += len(rows)
    return out


def _merge_store(
    drafts: dict[str, Draft], prompted: set[str], rows: dict[str, list[dict[str, Any]]]
) -> None:
    def draft_for(value: object) -> Draft | None:
        if not isinstance(value, str) or not value:
            return None
        return drafts.setdefault(value, Draft(session_id=value))

    for row in rows.get("sessions", []):
        draft = draft_for(row.get("id"))
        if draft is None:
            continue
        if not draft.cwd and isinstance(row.get("cwd"), str):
            draft.cwd = safe_text(normalize_path(row["cwd"]))
        if not draft.title:
            draft.title = clean_text(row.get("summary"))
        draft.seen(parse_time(row.get("created_at")))
    for row in sorted(rows.get("turns", []), key=lambda r: _index(r.get("turn_index"))):
        draft = draft_for(row.get("session_id"))
        if draft is None:
            continue
        draft.seen(parse_time(row.get("timestamp")))
        if draft.session_id not in prompted:
            draft.prompts.append(clean_text(row.get("user_message")))
    for row in rows.get("session_files", []):
        draft = draft_for(row.get("session_id"))
        tool = row.get("tool_name")
        if draft is None or not isinstance(row.get("file_path"), str):
            continue
        if not tool or (isinstance(tool, str) and tool.lower() in EDIT_TOOLS):
            draft.files.append(row["file_path"])


def _index(value: object) -> int:
    return value if isinstance(value, int) else 0


# -- instruction files -------------------------------------------------------------------------


def _instructions(
    root: Path, drafts: list[Draft], ctx: ReaderContext, stats: ReadStats
) -> list[NoteDraft]:
    places: list[tuple[Path, str | None]] = [(root / "copilot-instructions.md", None)]
    for folder in sorted({d.cwd for d in drafts if d.cwd}):
        if not is_windows_path(folder) or sys.platform == "win32":
            places.append((Path(folder) / ".github" / "copilot-instructions.md", folder))
    notes = []
    for path, cwd in places:
        heading = "Copilot instructions" + (f" for {project_name(cwd)}" if cwd else "")
        notes += memory_notes(path, cwd, "copilot-instructions", ctx.tz, stats, heading=heading)
    return notes
