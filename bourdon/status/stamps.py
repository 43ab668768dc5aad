"""Cheap stamps of files and folders, so cached health facts are gathered again only when
what they come from moved. ``os.stat`` and ``os.scandir``: they run on every status call.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from bourdon.model import LOCAL_DIR

if TYPE_CHECKING:
    from bourdon.store.git.repo import GitRepo


def stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)  # noqa: PTH116 - on every call: the cheapest way
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def tree_stamp(folder: Path) -> tuple[object, ...]:
    """Every file under ``folder`` (small folders of refs and state files) with its stamp."""
    found: list[object] = []
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    else:
                        found.append((entry.path, stamp(Path(entry.path))))
        except OSError:
            continue
    return tuple(sorted(found, key=str))


def remotes_key(root: Path, repo: GitRepo, head: str | None) -> tuple[object, ...]:
    """What moves when a remote's report can change: HEAD, the git config (remotes and their
    settings), the remote refs, and the sync state files."""
    git_dir = repo.git_dir
    return (
        head,
        stamp(git_dir / "config"),
        stamp(git_dir / "packed-refs"),
        tree_stamp(git_dir / "refs" / "bourdon"),
        tree_stamp(root / LOCAL_DIR / "sync"),
    )
