"""Paths as the stores record them: Windows or POSIX shaped, relative or absolute, as URIs.

Pure like every reader: reads nothing, writes nothing.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
from functools import lru_cache
from pathlib import PurePosixPath, PureWindowsPath
from typing import Final
from urllib.parse import unquote, urlparse

from bourdon.readers.base import normalize_path

_UNSAFE: Final = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def is_windows_path(path: str) -> bool:
    """A drive-letter (``C:\\``, ``c:/``) or UNC (``\\\\server``) path."""
    return bool(re.match(r"^[A-Za-z]:[\\/]", path)) or path.startswith("\\\\")


@lru_cache(maxsize=8192)
def _normalized(value: str) -> str | None:
    return normalize_path(value)


def remembered_path(value: object) -> str | None:
    """``base.normalize_path``, remembered: the same few cwds come back on every record."""
    return _normalized(value) if isinstance(value, str) else None


def safe_text(value: str | None) -> str | None:
    """``value`` unless it holds control characters or lone surrogates (a garbled path)."""
    return value if value and not _UNSAFE.search(value) else None


def absolute_path(path: str, cwd: object) -> str:
    """A recorded path made absolute against the record's cwd when it was relative."""
    text = remembered_path(path) or path
    base = remembered_path(cwd)
    if base and not is_windows_path(text) and not text.startswith("/"):
        module = ntpath if is_windows_path(base) else posixpath
        text = module.normpath(module.join(base, text))
        return remembered_path(text) or text
    return text


def relative_path(path: str, base: str | None) -> str | None:
    """``path`` relative to ``base`` when it lies under it (``None`` if not), with ``/``."""
    if not base:
        return None
    windows = is_windows_path(path)
    if windows != is_windows_path(base):
        return None
    if windows:  # drive letters and names compare case-insensitively
        a, b = ntpath.normpath(path), ntpath.normpath(base).rstrip("\\")
        if not a.casefold().startswith(b.casefold() + "\\"):
            return None
        return a[len(b) + 1 :].replace("\\", "/") or None
    a, b = posixpath.normpath(path), posixpath.normpath(base).rstrip("/")
    if not a.startswith(b + "/"):
        return None
    return a[len(b) + 1 :] or None


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


def last_part(path: str) -> str | None:
    """The last component of a folder path (a drive letter is no component)."""
    parts = re.split(r"[\\/]" if is_windows_path(path) else "/", path)
    parts = [p for p in parts if p and not (p.endswith(":") and is_windows_path(path))]
    return parts[-1] if parts else None


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
