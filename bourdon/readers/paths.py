"""Paths as readers meet them in records: ``normalize_path`` (URIs decoded, Windows paths kept
Windows-shaped) and ``project_name`` (the repository a working directory belongs to). Re-exported
by ``bourdon.readers.base``, where plugins find them."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from urllib.parse import unquote, urlparse


def normalize_path(value: object) -> str | None:
    """A path as people write it: ``file://`` URIs decoded, Windows paths kept Windows-shaped."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.startswith("file://"):
        parsed = urlparse(text)
        text = unquote(parsed.path)
        if re.match(r"^/[A-Za-z]:", text):  # file:///c%3A/Users -> c:/Users
            text = text[1:]
    if re.match(r"^[A-Za-z]:[\\/]", text) or text.startswith("\\\\"):
        return str(PureWindowsPath(text))
    return str(PurePosixPath(text))


def project_name(cwd: str | None) -> str | None:
    """The project a working directory belongs to: its repository, whichever worktree or clone.

    Reads the ``.git`` marker if the folder exists on this machine (a worktree's ``.git``
    file points at the main repository), else uses the last path component.
    """
    if not cwd:
        return None
    windows = bool(re.match(r"^[A-Za-z]:\\", cwd)) or "\\" in cwd
    pure: PurePosixPath | PureWindowsPath = PureWindowsPath(cwd) if windows else PurePosixPath(cwd)
    if not windows:
        root = _repo_root(Path(cwd))
        if root is not None:
            return root.name
    parts = [p for p in pure.parts if p not in ("/", "\\")]
    return parts[-1] if parts else None


def _repo_root(folder: Path) -> Path | None:
    try:
        for candidate in (folder, *folder.parents):
            marker = candidate / ".git"
            if marker.is_dir():
                return candidate
            if marker.is_file():
                text = marker.read_text(encoding="utf-8", errors="replace")
                match = re.search(r"gitdir:\s*(.+)", text)
                if match:
                    gitdir = Path(match.group(1).strip())
                    if not gitdir.is_absolute():
                        gitdir = (candidate / gitdir).resolve()
                    # <repo>/.git/worktrees/<name> -> <repo>
                    if gitdir.parent.name == "worktrees":
                        return gitdir.parent.parent.parent
                return candidate
    except OSError:
        return None
    return None
