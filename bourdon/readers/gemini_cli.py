"""Gemini CLI: chat recordings under ``~/.gemini/tmp``, prompt logs and GEMINI.md memory.

Ground truth relied on (native-stores.md section 6; google-gemini/gemini-cli
``packages/core/src/services/chatRecordingService.ts``, ``config/storage.ts``,
``config/projectRegistry.ts``):

- The root is ``~/.gemini`` (``$GEMINI_CLI_HOME/.gemini`` when that is set;
  ``BOURDON_GEMINI_CLI_STORE`` relocates it for bourdon).
- ``tmp/<id>/`` is one project. ``<id>`` is ``sha256(<project root>)`` in hex (before
  v0.29) or a short slug. ``projects.json`` is ``{"projects": {"<abs path>": "<slug>"}}`` and
  a slug folder holds ``.project_root`` with the path. A hash folder is resolved by hashing
  every candidate path known (``projects.json``, ``.project_root`` files, session
  ``directories``); an unresolved project gets no working directory, never a guessed one.
  ``tmp/bin`` is not a project.
- ``tmp/<id>/chats/session-<UTC minute>-<id8>.json`` (before v0.39) is one
  ``ConversationRecord`` ``{sessionId, projectHash, startTime, lastUpdated, summary?,
  directories?, kind?, messages[]}``. ``.jsonl`` (v0.39+) starts with that metadata, then one
  message per line; ``{"$set": {...}}`` updates metadata (``summary``); ``{"$rewindTo": id}``
  removes that message and all after it (all of them when the id is unknown); a message id
  seen again replaces the earlier message in place. ``$set.messages`` (a compression) is
  folded in the same way, so prompts from before it stay. A resumed legacy session has both
  files: they are one session. ``chats/<parentSessionId>/<id>.jsonl`` are subagent chats:
  their edits count for the parent, their prompts (written by a model) do not.
  ``*.tmp-<pid>`` and ``*.unreadable-<ms>`` files are ignored.
- Messages: ``{id, timestamp (ISO), type: user|gemini|info|error|warning, content (a string
  or parts [{text}]), displayContent?, toolCalls?[{name, args, status}]}``. Prompts are the
  user messages (``displayContent`` first), slash commands excepted. Edits are
  ``write_file``/``replace``/``edit`` calls whose status is not error or cancelled
  (``args.file_path``).
- ``tmp/<id>/logs.json`` lists user prompts ``[{sessionId, messageId, timestamp, type,
  message}]``; it makes a session only for a session id with no chat file.
- Memory: ``~/.gemini/GEMINI.md`` and a project's ``GEMINI.md`` (for project folders present
  here): each bullet of the legacy ``## Gemini Added Memories`` section is a note, the rest of
  the file one more; ``~/.gemini/memory.md`` and ``tmp/<id>/memory/*.md``: one note per
  bullet (or per file without bullets). Dated by the file's modification time.

What it extracts, without any model call: one session per session id (date of the first
timestamp in the user's time zone, ``""`` if none; working directory; the summary as title
and the user's own prompts as key actions; files edited); project entities and files touched
in several sessions; notes from the memory files.

Visibility (the same rule in every reader): a row is "private" when its working directory, or
the file a note comes from, is under ``~/personal`` or ``~/private`` (``~`` being this home or
any user's home: ``/home/<user>``, ``/Users/<user>``, ``C:\\Users\\<user>``,
``/mnt/<drive>/Users/<user>``); every other row is "team". A project is private if any of its
sessions is.
"""

from __future__ import annotations

import functools
import hashlib
import json
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
    iter_jsonl,
    load_json,
    local_date,
    normalize_path,
    parse_time,
    project_name,
    store_path,
)

NAME: Final = "gemini-cli"
EDIT_TOOLS: Final = frozenset({"write_file", "replace", "edit", "smart_edit"})
FAILED: Final = frozenset({"error", "cancelled"})
MEMORY_HEADING: Final = "## Gemini Added Memories"
_DECOY: Final = re.compile(r"\.(tmp-\d+|unreadable-\d+)$")


class GeminiCliReader:
    """Gemini CLI chat recordings, prompt logs and GEMINI.md memories."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_GEMINI_CLI_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        native = ctx.env.get("GEMINI_CLI_HOME")
        return unique([*([Path(native) / ".gemini"] if native else []), ctx.home / ".gemini"])

    def health(self, ctx: ReaderContext) -> Health:
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        stats = ReadStats()
        drafts: list[Draft] = []
        notes: list[NoteDraft] = []
        root = store_path(self, ctx)
        if root is not None and root.is_dir():
            drafts = _projects(root, stats)
            notes = _global_memory(root, ctx, stats)
            folders = sorted({d.cwd for d in drafts if d.cwd})
            notes += _project_memory(folders, ctx, stats)
        return ReadResult(assemble(self.name, drafts, notes, ctx, stats), stats)


# -- recordings --------------------------------------------------------------------------------


@dataclass
class _Recording:
    """One chat file, replayed: its metadata and its messages in order."""

    meta: dict[str, Any]
    messages: list[dict[str, Any]]
    parent: str | None = None  # the main session of a subagent chat


def replay(path: Path, stats: ReadStats) -> _Recording | None:
    """A ``.jsonl`` chat recording as Gemini CLI loads it (``$set``, ``$rewindTo``, upserts)."""
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    for record in iter_jsonl(path, stats):
        if isinstance(record.get("$rewindTo"), str):
            ids = list(messages)
            target = record["$rewindTo"]
            for mid in ids[ids.index(target) :] if target in messages else ids:
                del messages[mid]
        elif isinstance(record.get("id"), str):
            messages[record["id"]] = record  # a repeated id replaces the message in place
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            for message in update.get("messages") or []:
                if isinstance(message, dict) and isinstance(message.get("id"), str):
                    messages[message["id"]] = message
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(record.get("sessionId"), str):
            meta.update(record)
        else:
            stats.skipped += 1
    if isinstance(meta.get("sessionId"), str):
        return _Recording(meta, list(messages.values()))
    if not messages:  # not JSON lines at all: a whole-file record under a .jsonl name
        return _legacy(load_json(path, stats))
    stats.problem(f"{path.name}: messages without session metadata; skipped")
    return None


def _legacy(data: object) -> _Recording | None:
    if not isinstance(data, dict) or not isinstance(data.get("sessionId"), str):
        return None
    messages = data.get("messages")
    kept = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    return _Recording({k: v for k, v in data.items() if k != "messages"}, kept)


def _recordings(chats: Path, stats: ReadStats) -> list[_Recording]:
    found: list[_Recording] = []
    subagents: list[_Recording] = []  # after the main chats, so the parent's own edits lead
    for path in _children(chats):
        if _DECOY.search(path.name):
            continue
        if path.is_dir():  # chats/<parentSessionId>/<id>.jsonl: subagents
            for child in _children(path):
                if child.suffix == ".jsonl" and not _DECOY.search(child.name):
                    sub = replay(child, stats)
                    if sub is not None:
                        sub.parent = path.name
                        subagents.append(sub)
            continue
        if path.suffix == ".jsonl":
            recording = replay(path, stats)
        elif path.suffix == ".json":
            recording = _legacy(load_json(path, stats))
        else:
            continue
        if recording is not None:
            found.append(recording)
    return found + subagents


# -- projects ----------------------------------------------------------------------------------


def _projects(root: Path, stats: ReadStats) -> list[Draft]:
    registry = (
        load_json(root / "projects.json", stats) if (root / "projects.json").is_file() else None
    )
    projects = registry.get("projects") if isinstance(registry, dict) else None
    by_slug: dict[str, str] = {}
    for path, slug in projects.items() if isinstance(projects, dict) else ():
        if isinstance(path, str) and isinstance(slug, str):
            by_slug[slug] = path
    folders = [d for d in _children(root / "tmp") if d.is_dir() and d.name != "bin"]
    for folder in folders:
        marker, _ = read_memory_file(folder / ".project_root", stats)
        if marker.strip():
            by_slug[folder.name] = marker.strip()
    recordings = {folder: _recordings(folder / "chats", stats) for folder in folders}
    candidates = set(by_slug.values())
    for found in recordings.values():
        for rec in found:
            dirs = rec.meta.get("directories")
            if isinstance(dirs, list):
                candidates.update(d for d in dirs if isinstance(d, str))
    by_hash = {hashlib.sha256(p.encode("utf-8")).hexdigest(): p for p in candidates}
    drafts: dict[str, Draft] = {}
    for folder in folders:
        place = by_slug.get(folder.name) or by_hash.get(folder.name)
        for rec in recordings[folder]:
            _merge(drafts, rec, place, by_hash)
        _logs(drafts, folder / "logs.json", place, stats)
    return list(drafts.values())


def _merge(
    drafts: dict[str, Draft], rec: _Recording, place: str | None, by_hash: dict[str, str]
) -> None:
    sid = rec.parent or str(rec.meta["sessionId"])
    draft = drafts.setdefault(sid, Draft(session_id=sid))
    if not draft.cwd:
        resolved = by_hash.get(str(rec.meta.get("projectHash")))
        dirs = rec.meta.get("directories")
        first = dirs[0] if isinstance(dirs, list) and dirs and isinstance(dirs[0], str) else None
        draft.cwd = safe_text(normalize_path(resolved or place or first))
    draft.seen(parse_time(rec.meta.get("startTime")))
    if rec.parent is None and isinstance(rec.meta.get("summary"), str):
        draft.title = clean_text(rec.meta["summary"])
    for message in rec.messages:
        draft.seen(parse_time(message.get("timestamp")))
        if message.get("type") == "user" and rec.parent is None:
            text = _text(message.get("displayContent")) or _text(message.get("content"))
            if text and not text.lstrip().startswith("/"):
                draft.prompts.append(clean_text(text))
        calls = message.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if (
                isinstance(call, dict)
                and call.get("name") in EDIT_TOOLS
                and call.get("status") not in FAILED
            ):
                found = path_argument(call.get("args"))
                if found:
                    draft.files.append(found)


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if isinstance(content, list):
        return "".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _logs(drafts: dict[str, Draft], path: Path, place: str | None, stats: ReadStats) -> None:
    if not path.is_file():
        return
    entries = load_json(path, stats)
    fresh: dict[str, Draft] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("type") != "user":
            continue
        sid = entry.get("sessionId")
        if not isinstance(sid, str) or sid in drafts:
            continue  # a chat file already tells this session, better
        draft = fresh.setdefault(sid, Draft(session_id=sid, cwd=safe_text(normalize_path(place))))
        draft.seen(parse_time(entry.get("timestamp")))
        text = entry.get("message")
        if isinstance(text, str) and not text.lstrip().startswith("/"):
            draft.prompts.append(clean_text(text))
    drafts.update(fresh)


# -- memory files ------------------------------------------------------------------------------


def _global_memory(root: Path, ctx: ReaderContext, stats: ReadStats) -> list[NoteDraft]:
    notes = _gemini_md(root / "GEMINI.md", None, ctx, stats)
    notes += _memory_file(root / "memory.md", None, ctx, stats)
    for folder in _children(root / "tmp"):
        memory = folder / "memory"
        if memory.is_dir():
            marker, _ = read_memory_file(folder / ".project_root", stats)
            for path in sorted(memory.glob("*.md")):
                notes += _memory_file(path, marker.strip() or None, ctx, stats)
    return notes


def _project_memory(folders: list[str], ctx: ReaderContext, stats: ReadStats) -> list[NoteDraft]:
    notes = []
    for folder in folders:
        if not is_windows_path(folder) or sys.platform == "win32":
            notes += _gemini_md(Path(folder) / "GEMINI.md", folder, ctx, stats)
    return notes


def _gemini_md(
    path: Path, folder: str | None, ctx: ReaderContext, stats: ReadStats
) -> list[NoteDraft]:
    text, moment = read_memory_file(path, stats)
    if not text.strip() or moment is None:
        return []
    rest, memories = _split_memories(text)
    date = local_date(moment, ctx.tz)
    where = str(path) if folder is None else folder
    notes = [NoteDraft(date, m, project_name(folder), "gemini-memory", where) for m in memories]
    if rest.strip():
        label = f"GEMINI.md for {project_name(folder)}" if folder else "GEMINI.md"
        notes.append(
            NoteDraft(date, f"{label}:\n{rest}", project_name(folder), "gemini-context", where)
        )
    return notes


def _split_memories(text: str) -> tuple[str, list[str]]:
    """GEMINI.md without its ``## Gemini Added Memories`` section, and that section's bullets."""
    lines = text.replace("\r\n", "\n").split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == MEMORY_HEADING)
    except StopIteration:
        return text, []
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    return "\n".join(lines[:start] + lines[end:]), bullets("\n".join(lines[start + 1 : end]))


def _memory_file(
    path: Path, folder: str | None, ctx: ReaderContext, stats: ReadStats
) -> list[NoteDraft]:
    text, moment = read_memory_file(path, stats)
    if not text.strip() or moment is None:
        return []
    where = folder or str(path)
    items = bullets(text) or [text]
    return [
        NoteDraft(local_date(moment, ctx.tz), i, project_name(folder), "gemini-memory", where)
        for i in items
    ]


def bullets(text: str) -> list[str]:
    """The items of a Markdown bullet list (continuation lines joined)."""
    items: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        match = re.match(r"^\s{0,3}[-*+]\s+(.*)$", line)
        if match:
            items.append(match.group(1).strip())
        elif items and line.startswith(("  ", "\t")) and line.strip():
            items[-1] += " " + line.strip()
    return [i for i in items if i]


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
