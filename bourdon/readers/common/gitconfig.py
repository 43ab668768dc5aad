"""The git repository around a folder, read from its ``.git`` marker and config (never ``git``).

Worktrees and clones of one repository share a name this way: a worktree's ``.git`` file points
at ``<main>/.git/worktrees/<name>``, and a clone carries the same remote URL.

Pure like every reader: reads files, never writes, never runs git.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from bourdon.readers.common.paths import is_windows_path


@dataclass(frozen=True)
class GitInfo:
    """Where a folder's repository lives and where it came from."""

    toplevel: Path | None  # the working tree holding cwd (a worktree's own folder)
    main: Path | None  # the main repository (the same folder unless a worktree)
    remote: str | None  # the origin URL, else the first remote's


def git_info(cwd: str, home: Path) -> GitInfo:
    """The git repository around a local folder (worktrees resolved), never above ``home``."""
    none = GitInfo(None, None, None)
    if is_windows_path(cwd) or not cwd.startswith("/"):
        return none
    folder = Path(cwd)
    stops = {home, *home.parents} if home in folder.parents or folder == home else {Path("/")}
    try:
        for candidate in (folder, *folder.parents):
            if candidate in stops:
                return none
            marker = candidate / ".git"
            if marker.is_dir():
                return GitInfo(candidate, candidate, _remote(marker / "config"))
            if marker.is_file():
                text = marker.read_text(encoding="utf-8", errors="replace")
                match = re.search(r"gitdir:\s*(.+)", text)
                if not match:
                    return GitInfo(candidate, candidate, None)
                gitdir = Path(match.group(1).strip())
                if not gitdir.is_absolute():
                    gitdir = Path(os.path.normpath(candidate / gitdir))
                if gitdir.parent.name == "worktrees":  # <main>/.git/worktrees/<name>
                    common = gitdir.parent.parent
                    return GitInfo(candidate, common.parent, _remote(common / "config"))
                return GitInfo(candidate, candidate, _remote(gitdir / "config"))
    except OSError:
        return none
    return none


def _remote(config: Path) -> str | None:
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    remotes: dict[str, str] = {}
    section = None
    for line in text.splitlines():
        head = re.match(r'\s*\[remote\s+"([^"]+)"\]', line)
        if head:
            section = head.group(1)
            continue
        if line.strip().startswith("["):
            section = None
            continue
        url = re.match(r"\s*url\s*=\s*(\S+)", line)
        if section and url:
            remotes.setdefault(section, url.group(1))
    return remotes.get("origin") or next(iter(remotes.values()), None)


def repo_name(url: str | None) -> str | None:
    """``git@github.com:dana/ledgerline.git`` -> ``ledgerline``."""
    if not url:
        return None
    tail = re.split(r"[/:\\]", url.strip().rstrip("/"))[-1]
    tail = tail.removesuffix(".git")
    return tail or None
