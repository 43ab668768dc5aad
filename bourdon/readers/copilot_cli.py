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

Visibility (the same rule in every reader): a row is "private" when its working directory, or
the file a note comes from, is under ``~/personal`` or ``~/private`` (``~`` being this home or
any user's home: ``/home/<user>``, ``/Users/<user>``, ``C:\\Users\\<user>``,
``/mnt/<drive>/Users/<user>``); every other row is "team". A project is private if any of its
sessions is.
"""

from __future__ import annotations

import functools
import json
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
    local_date,
    normalize_path,
    parse_time,
    project_name,
    store_path,
)

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
        native = ctx.env.get("COPILOT_HOME")
        return unique([*([Path(native)] if native else []), ctx.home / ".copilot"])

    def health(self, ctx: ReaderContext) -> Health:
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        stats = ReadStats()
        drafts: dict[str, Draft] = {}
        notes: list[NoteDraft] = []
        root = store_path(self, ctx)
        if root is not None and root.is_dir():
            prompted: set[str] = set()
            for folder in _children(root / "session-state"):
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
    tables = _tables(conn)
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
        text, moment = read_memory_file(path, stats)
        if text.strip() and moment is not None:
            where = f" for {project_name(cwd)}" if cwd else ""
            notes.append(
                NoteDraft(
                    date=local_date(moment, ctx.tz),
                    text=f"Copilot instructions{where}:\n{text}",
                    project=project_name(cwd),
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
