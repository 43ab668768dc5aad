"""Which git processes are using a repository right now: the proof a lock file is stale.

git's lock files (``index.lock``, ``<ref>.lock``...) are removed by the git that made them, unless
it was killed. A lock is only ever removed by bourdon when no live git process may be writing
in the repository: on Linux, ``/proc`` says which processes run git, in which folder, with which
``GIT_DIR``; read-only commands (``cat-file --batch`` of a bourdon server, ``log``...) take no
lock and do not count. Elsewhere, ``ps`` says whether any git runs at all. When that cannot be
told (another user's git whose folder we may not read, a hidden ``/proc``), the answer is
"unsure" and the lock stays.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path
from typing import Final

# Commands that never take a lock; anything else (or unknown) may be writing.
READ_ONLY: Final = frozenset(
    {
        "blame", "cat-file", "diff-tree", "for-each-ref", "grep", "log", "ls-files",
        "ls-remote", "ls-tree", "merge-base", "rev-list", "rev-parse", "show", "show-ref",
        "var", "version", "help", "check-ignore", "check-attr",
    }
)  # fmt: skip
_WITH_VALUE: Final = frozenset(
    {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}
)
_PROC: Final = Path("/proc")


def git_users(root: Path, git_dir: Path) -> list[int] | None:
    """Process ids of live git processes that may write in this repository (``[]``: none);
    ``None`` when it cannot be told, and a caller must then assume one does."""
    if (_PROC / "self").is_dir():
        return _from_proc(root.resolve(), git_dir.resolve())
    return _from_ps()


def _from_proc(root: Path, git_dir: Path) -> list[int] | None:
    if not (_PROC / "1").is_dir():
        return None  # /proc hides other users' processes (hidepid): their gits are unseen
    found: list[int] = []
    me = os.getpid()
    for where in _PROC.iterdir():
        entry = where.name
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            comm = (where / "comm").read_text(encoding="utf-8", errors="replace").strip()
            if comm != "git" and not comm.startswith("git-"):
                continue
            argv = (where / "cmdline").read_bytes().decode("utf-8", "replace").split("\0")
            if comm == "git" and _subcommand(argv) in READ_ONLY:
                continue
            cwd = (where / "cwd").readlink()
            dirs = [cwd]
            environ = (where / "environ").read_bytes().split(b"\0")
        except (FileNotFoundError, ProcessLookupError):
            continue  # it ended meanwhile
        except OSError:
            return None  # someone else's git: where it runs cannot be read
        for var in environ:
            if var.startswith((b"GIT_DIR=", b"GIT_WORK_TREE=")):
                dirs.append(cwd / os.fsdecode(var.split(b"=", 1)[1]))
        dirs += [cwd / a.split("=", 1)[1] for a in argv if a.startswith("--git-dir=")]
        if any(_inside(d, root) or _inside(d, git_dir) for d in dirs):
            found.append(int(entry))
    return found


def _from_ps() -> list[int] | None:
    try:
        out = subprocess.run(
            ["ps", "-A", "-o", "pid=,comm="], capture_output=True, check=True, timeout=10
        ).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        name = line.strip().partition(" ")[2].strip().rsplit("/", 1)[-1]
        if name == "git" or name.startswith("git-"):
            return None  # a git runs, and where cannot be told portably
    return []


def _subcommand(argv: list[str]) -> str | None:
    args = iter(argv[1:])
    for arg in args:
        if arg in _WITH_VALUE:
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return None


def _inside(path: Path, folder: Path) -> bool:
    with contextlib.suppress(OSError, ValueError):
        resolved = path.resolve()
        return resolved == folder or folder in resolved.parents
    return False
