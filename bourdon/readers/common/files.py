"""Where a store lives and its small files: store roots, folder listings, memory and rule files.

Pure like every reader: reads files, never writes, no git, no network.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Final

from bourdon.readers.base import (
    Reader,
    ReaderContext,
    ReadStats,
    local_date,
    project_name,
)
from bourdon.readers.common.assembly import NoteDraft
from bourdon.readers.common.frontmatter import Meta, front_matter
from bourdon.readers.common.text import unique

MEMORY_FILE_LIMIT: Final = 1024 * 1024


def store_roots(reader: Reader, ctx: ReaderContext) -> list[Path]:
    """Every store folder to read: the explicit one, the env list, or each default that exists."""
    if ctx.store is not None:
        return [ctx.store] if ctx.store.is_dir() else []
    override = ctx.env.get(reader.store_env)
    if override:
        parts = [p.strip() for p in re.split(rf"[,{re.escape(os.pathsep)}]", override)]
        candidates = [ctx.home / p[2:] if p.startswith("~/") else Path(p) for p in parts if p]
    else:
        candidates = list(reader.locations(ctx))
    found: list[Path] = []
    seen: set[str] = set()
    for path in candidates:
        try:
            key = str(path.resolve())
        except OSError:
            continue
        if path.is_dir() and key not in seen:
            seen.add(key)
            found.append(path)
    return found


def editor_user_dirs(ctx: ReaderContext, product: str) -> list[Path]:
    """The ``User`` folder of a VS Code-like editor, per OS, this machine's OS first."""
    xdg = ctx.env.get("XDG_CONFIG_HOME")
    appdata = ctx.env.get("APPDATA")
    linux = (Path(xdg) if xdg else ctx.home / ".config") / product / "User"
    mac = ctx.home / "Library" / "Application Support" / product / "User"
    windows = (Path(appdata) if appdata else ctx.home / "AppData" / "Roaming") / product / "User"
    order = {"darwin": [mac, linux, windows], "win32": [windows, linux, mac]}
    return unique(order.get(sys.platform, [linux, mac, windows]))


def children(folder: Path) -> list[Path]:
    """The entries of ``folder``, sorted; none when it is missing or unreadable."""
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


def listing(folder: Path, pattern: str) -> list[Path]:
    """``folder.glob(pattern)`` sorted; empty when the folder vanishes while it is listed."""
    try:
        return sorted(folder.glob(pattern))
    except OSError:
        return []


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
    heading: str | Callable[[Meta], str] | None = None,
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
        text = text.strip()
        heading = heading(meta)
    return [NoteDraft(date, f"{heading}:\n{text}" if heading else text, project, tag, where)]


def described(meta: Meta) -> str:
    """`` (<description>)`` from a rule file's front matter, or nothing."""
    value = meta.get("description")
    text = ", ".join(value) if isinstance(value, list) else value
    return f" ({text})" if text else ""


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
