"""Paths, URIs and tool arguments as the IDE-based stores write them, shared by their readers.

Pure like every reader: reads files, never writes, no git, no network.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Final, TypeVar
from urllib.parse import unquote, urlparse

from bourdon.readers.base import (
    ReaderContext,
    ReadStats,
    local_date,
    normalize_path,
    project_name,
)
from bourdon.readers.common.assembly import NoteDraft, safe_text, unique

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


def memory_notes(
    path: Path,
    folder: str | None,
    tag: str,
    tz: tzinfo | None,
    stats: ReadStats,
    *,
    heading: str | Callable[[dict[str, str]], str] | None = None,
    per_bullet: bool = False,
    where: str | None = None,
) -> list[NoteDraft]:
    """An agent's memory, instruction or rule file as notes of the project ``folder``.

    One note per bullet (``per_bullet``; the whole text when it has none), else one note whose
    text is ``heading:`` and the file. A callable ``heading`` is given the file's front matter,
    which is then left out of the text (rule files describe themselves there). Dated by the
    file's modification time; none for a missing, empty or oversized file.
    """
    text, moment = read_memory_file(path, stats)
    if not text.strip() or moment is None:
        return []
    date, project, where = local_date(moment, tz), project_name(folder), where or str(path)
    if per_bullet:
        return [NoteDraft(date, item, project, tag, where) for item in bullets(text) or [text]]
    if callable(heading):
        meta, text = front_matter(text)
        heading = heading(meta)
    return [NoteDraft(date, f"{heading}:\n{text}" if heading else text, project, tag, where)]


def described(meta: dict[str, str]) -> str:
    """`` (<description>)`` from a rule file's front matter, or nothing."""
    return f" ({meta['description']})" if meta.get("description") else ""


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


def children(folder: Path) -> list[Path]:
    """The entries of ``folder``, sorted; none when it is missing or unreadable."""
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []
