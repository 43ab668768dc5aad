"""Cline, Roo Code and Kilo Code: the task folders of all three forks, as one reader.

Ground truth relied on (native-stores.md section 5; cline/cline ``core/storage/disk.ts``,
``shared/ExtensionMessage.ts``, ``shared/HistoryItem.ts``, ``ContextTrackerTypes.ts``):

- Task roots: ``<editor User>/globalStorage/<extension>/`` for the extensions
  ``saoudrizwan.claude-dev`` (Cline), ``rooveterinaryinc.roo-cline`` (Roo Code) and
  ``kilocode.kilo-code`` (Kilo Code), in the user folders of VS Code, Insiders, VSCodium,
  Cursor and Windsurf (Linux ``~/.config``, macOS ``~/Library/Application Support``, Windows
  ``%APPDATA%``) and ``~/.vscode-server/data/User``; and ``~/.cline/data`` (Cline CLI and
  4.x, moved by ``CLINE_DIR``). Every root present is read. ``BOURDON_CLINE_STORE`` names
  the root(s) to read instead (several separated by the path separator); a folder holding the
  extension folders works too. Each session is tagged with its fork.
- ``tasks/<taskId>/`` is one task (the id is usually the creation time in epoch ms):
  ``ui_messages.json`` (legacy ``claude_messages.json``), a JSON array of
  ``{ts (ms), type: say|ask, say?, ask?, text?, partial?}``: ``say: task`` and
  ``say: user_feedback`` carry the user's words; ``say: tool`` and ``say: api_req_started``
  carry JSON encoded in ``text`` (``{tool: editedExistingFile|newFileCreated|fileDeleted|…,
  path}``, ``{request}``); ``partial: true`` entries are streaming fragments and are ignored;
  ``ask: resume_task`` marks a resumption.
- ``api_conversation_history.json``: Anthropic messages. Edits are native ``tool_use`` blocks
  (``write_to_file``, ``replace_in_file``, ``apply_diff``, ``insert_content``,
  ``search_and_replace``, ``edit_file``, ``apply_patch``; ``input.path``) or, in the older
  XML era, ``<write_to_file><path>…</path>`` inside assistant text. The first user message
  wraps the user's prompt in ``<task>…</task>`` (read, in case ``ui_messages.json`` is lost)
  and its ``<environment_details>`` holds ``# Current Working Directory (<path>) Files``, the
  only working directory of old tasks.
- ``task_metadata.json``: ``files_in_context[{path, record_source}]``; ``cline_edited``
  entries are files the agent edited (paths relative to the workspace).
- ``state/taskHistory.json`` (Cline) and Roo's ``tasks/<id>/history_item.json``: HistoryItem
  ``{id, ts, task (first prompt), cwdOnTaskInitialization? | workspace?}``. A history entry
  without a task folder is still a session. (Older Cline kept this list in VS Code's
  ``state.vscdb``; that is not read.)
- Whole-file JSON is rewritten on every turn and may be caught mid-write: such a file is
  skipped (counted) and the task's other files are still read.
- Memory files: ``.clinerules`` (a file, or a folder of ``.md`` files) in a task's working
  directory present on this machine, and the global ``~/Documents/Cline/Rules/*.md``: one
  note each, dated by the file's modification time.

What it extracts, without any model call: one session per task (date of the first timestamp in
the user's time zone, ``""`` if none; working directory; the user's own prompts as key
actions; files edited); project entities and files touched in several sessions; notes from the
rules files.

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
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Final, TypeVar
from urllib.parse import unquote, urlparse

from bourdon.readers.base import (
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
)

NAME: Final = "cline"
EXTENSIONS: Final = {
    "saoudrizwan.claude-dev": "cline",
    "rooveterinaryinc.roo-cline": "roo-code",
    "kilocode.kilo-code": "kilo-code",
}
EDITORS: Final = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
EDIT_TOOLS: Final = frozenset(
    {
        "write_to_file",
        "replace_in_file",
        "apply_diff",
        "insert_content",
        "search_and_replace",
        "edit_file",
        "apply_patch",
        "new_rule",
    }
)
UI_EDITS: Final = frozenset({"editedExistingFile", "newFileCreated", "fileDeleted"})
_XML_EDIT: Final = re.compile(
    r"<(write_to_file|replace_in_file|apply_diff|insert_content|search_and_replace)>\s*"
    r"<path>\s*(.*?)\s*</path>",
    re.DOTALL,
)
_TASK: Final = re.compile(r"<task>\s*(.*?)\s*</task>", re.DOTALL)
_CWD: Final = re.compile(r"# Current Working Directory \((.+)\) Files\s*$", re.MULTILINE)


class ClineReader:
    """Task folders of Cline, Roo Code and Kilo Code, wherever their hosts keep them."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_CLINE_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        users = [d for editor in EDITORS for d in editor_user_dirs(ctx, editor)]
        users.append(ctx.home / ".vscode-server" / "data" / "User")
        roots = [user / "globalStorage" / ext for user in users for ext in EXTENSIONS]
        native = ctx.env.get("CLINE_DIR")
        roots.append(Path(native) if native else ctx.home / ".cline" / "data")
        return unique(roots)

    def health(self, ctx: ReaderContext) -> Health:
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        stats = ReadStats()
        drafts: list[Draft] = []
        for root in self._roots(ctx):
            drafts += _read_root(root, EXTENSIONS.get(root.name, "cline"), stats)
        folders = sorted({d.cwd for d in drafts if d.cwd})
        notes = _rules(folders, ctx, stats)
        return ReadResult(assemble(self.name, drafts, notes, ctx, stats), stats)

    def _roots(self, ctx: ReaderContext) -> list[Path]:
        if ctx.store is not None:
            given = [ctx.store]
        elif ctx.env.get(self.store_env):
            given = [Path(p).expanduser() for p in ctx.env[self.store_env].split(os.pathsep) if p]
        else:
            return [p for p in self.locations(ctx) if p.is_dir()]
        roots: list[Path] = []
        for path in given:
            forks = [path / ext for ext in EXTENSIONS if (path / ext).is_dir()]
            roots += forks if forks and not (path / "tasks").is_dir() else [path]
        return roots


# -- tasks -------------------------------------------------------------------------------------


def _read_root(root: Path, fork: str, stats: ReadStats) -> list[Draft]:
    history: dict[str, dict[str, Any]] = {}
    listed = (
        load_json(root / "state" / "taskHistory.json", stats)
        if (root / "state" / "taskHistory.json").is_file()
        else None
    )
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, dict) and isinstance(item.get("id"), (str, int)):
            history[str(item["id"])] = item
    drafts: dict[str, Draft] = {}
    for folder in _children(root / "tasks"):
        if folder.is_dir():
            drafts[folder.name] = task_draft(folder, history.get(folder.name), fork, stats)
    for task_id, item in history.items():
        if task_id not in drafts:  # listed, its folder gone: what the list says is still true
            draft = Draft(session_id=task_id, tags=[fork])
            _history_item(draft, item)
            drafts[task_id] = draft
    return list(drafts.values())


def task_draft(folder: Path, item: dict[str, Any] | None, fork: str, stats: ReadStats) -> Draft:
    """One task folder as a session draft."""
    draft = Draft(session_id=folder.name, tags=[fork])
    if item is None and (folder / "history_item.json").is_file():
        found = load_json(folder / "history_item.json", stats)
        item = found if isinstance(found, dict) else None
    if item is not None:
        _history_item(draft, item)
    ui_file = folder / "ui_messages.json"
    if not ui_file.is_file() and (folder / "claude_messages.json").is_file():
        ui_file = folder / "claude_messages.json"
    ui = load_json(ui_file, stats) if ui_file.is_file() else None
    for message in ui if isinstance(ui, list) else []:
        if isinstance(message, dict):
            _ui_message(draft, message, stats)
    api_file = folder / "api_conversation_history.json"
    api = load_json(api_file, stats) if api_file.is_file() else None
    for message in api if isinstance(api, list) else []:
        if isinstance(message, dict):
            _api_message(draft, message)
    meta_file = folder / "task_metadata.json"
    meta = load_json(meta_file, stats) if meta_file.is_file() else None
    files = meta.get("files_in_context") if isinstance(meta, dict) else None
    for entry in files if isinstance(files, list) else []:
        edited = isinstance(entry, dict) and entry.get("record_source") == "cline_edited"
        if edited and isinstance(entry.get("path"), str):
            draft.files.append(entry["path"])
    return draft


def _history_item(draft: Draft, item: dict[str, Any]) -> None:
    draft.seen(parse_time(item.get("ts")))
    cwd = item.get("cwdOnTaskInitialization") or item.get("workspace")
    if not draft.cwd and isinstance(cwd, str):
        draft.cwd = safe_text(normalize_path(cwd))
    if isinstance(item.get("task"), str):
        draft.prompts.append(clean_text(item["task"]))


def _ui_message(draft: Draft, message: dict[str, Any], stats: ReadStats) -> None:
    draft.seen(parse_time(message.get("ts")))
    if message.get("partial") is True or message.get("type") != "say":
        return  # streaming fragments; asks are the agent's questions
    say, text = message.get("say"), message.get("text")
    if say in ("task", "user_feedback"):
        draft.prompts.append(clean_text(text))
    elif say in ("tool", "api_req_started"):
        try:
            data = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            stats.skipped += 1
            return
        if not isinstance(data, dict):
            return
        if say == "tool" and data.get("tool") in UI_EDITS and isinstance(data.get("path"), str):
            draft.files.append(data["path"])
        elif say == "api_req_started" and not draft.cwd:
            draft.cwd = _environment_cwd(data.get("request"))


def _api_message(draft: Draft, message: dict[str, Any]) -> None:
    draft.seen(parse_time(message.get("ts")))
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            if message.get("role") == "user":
                task = _TASK.search(block["text"])
                if task:  # the first prompt, as the model received it
                    draft.prompts.append(clean_text(task.group(1)))
                draft.cwd = draft.cwd or _environment_cwd(block["text"])
            elif message.get("role") == "assistant":
                draft.files += [path for _, path in _XML_EDIT.findall(block["text"])]
        elif block.get("type") == "tool_use" and block.get("name") in EDIT_TOOLS:
            found = path_argument(block.get("input"))
            if found:
                draft.files.append(found)


def _environment_cwd(text: object) -> str | None:
    match = _CWD.search(text) if isinstance(text, str) else None
    return safe_text(normalize_path(match.group(1).strip())) if match else None


# -- rules files -------------------------------------------------------------------------------


def _rules(folders: list[str], ctx: ReaderContext, stats: ReadStats) -> list[NoteDraft]:
    places: list[tuple[Path, str | None]] = [
        (p, None) for p in sorted((ctx.home / "Documents" / "Cline" / "Rules").glob("*.md"))
    ]
    for cwd in folders:
        if is_windows_path(cwd) and sys.platform != "win32":
            continue
        rules = Path(cwd) / ".clinerules"
        if rules.is_dir():
            places += [(p, cwd) for p in sorted(rules.glob("*.md"))]
        else:
            places.append((rules, cwd))
    notes = []
    for path, folder in places:
        text, moment = read_memory_file(path, stats)
        if not text.strip() or moment is None:
            continue
        meta, body = front_matter(text)
        label = path.stem if path.suffix == ".md" else ".clinerules"
        head = f"Cline rule {label}" + (
            f" ({meta['description']})" if meta.get("description") else ""
        )
        where = f" for {project_name(folder)}" if folder else ""
        notes.append(
            NoteDraft(
                date=local_date(moment, ctx.tz),
                text=f"{head}{where}:\n{body}",
                project=project_name(folder),
                tag="cline-rule",
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
