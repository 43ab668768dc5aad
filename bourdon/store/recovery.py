"""Crash recovery: bringing a library back to a clean state after a writer was killed.

A write records its intent (the paths it is about to change, ``.bourdon/intent.json``) before it
touches a file and clears it once its commit exists. Opening the library, or taking its lock,
after a crash reconciles: stale git locks and temp files of dead writers go, and a file whose
write was never committed is moved to ``.bourdon/recovered/`` and restored from HEAD, so nothing
is lost and the working files equal HEAD again. Runs under the library lock (``writelock``).

The intent and git's own locks are looked for at every write. The temp files (git's fan-out
folders of loose objects, ``.bourdon/``) are swept when the library is opened, when the lock's
last holder died holding it, and otherwise at most once every ``SWEEP_EVERY`` seconds per
library object: a few hundred folder listings that would find nothing at nearly every write,
where what they would find is only files left over, never a change to the library.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from bourdon.errors import GitError, LibraryError
from bourdon.store.durable import atomic_write, fsync_dir
from bourdon.store.git.process import pid_alive
from bourdon.store.git.repo import GitRepo
from bourdon.store.layout import AGENTS, INTENT, LOCAL, STAGING
from bourdon.store.manifests import Manifests

STALE_AFTER: Final = 10.0  # seconds: a git lock younger than this is never taken for stale
INDEX_REPAIRED: Final = "brought git's index in line with HEAD"
MANAGED: Final = (f"{AGENTS}/", f"{STAGING}/")  # the folders whose index entries are bourdon's
_NOT_OURS: Final = ("recovered", "imported")  # folders of .bourdon/ that keep others' files
SWEEP_EVERY: Final = 60.0  # seconds between two sweeps for temp files, but after a crash


class Recovery:
    """What a crash may have left in one library, and how to clear it."""

    def __init__(self, root: Path, repo: GitRepo, manifests: Manifests) -> None:
        self.root = root
        self.repo = repo
        self.manifests = manifests
        self._swept: float | None = None  # when the last sweep for temp files found none

    def needed(self, crashed: bool = False) -> bool:
        """Whether a crash left something to clear; ``crashed``: the lock's last holder died
        holding it (the temp files are looked for then, whenever they last were)."""
        if (self.root / INTENT).exists():
            return True
        now = time.monotonic()
        sweep = crashed or self._swept is None or now - self._swept >= SWEEP_EVERY
        if self.stale_git_locks(objects=sweep):
            return True
        if sweep and any(True for _ in self._leftover_temp_files()):
            return True
        if sweep:
            self._swept = now
        return False

    def run(self) -> list[str]:
        """Clear what a crash left (the caller holds the library lock); return what was done."""
        done: list[str] = []
        for stale in self.stale_git_locks():
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
                done.append(f"removed stale {stale.relative_to(self.root)}")
        for tmp in self._leftover_temp_files():
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
                done.append(f"removed temp file {tmp.relative_to(self.root)}")
        intent = self.root / INTENT
        if intent.exists():
            try:
                paths = json.loads(intent.read_text(encoding="utf-8"))["paths"]
            except (ValueError, KeyError, TypeError):
                paths = []
            head = self.repo.head()
            for path in paths:
                done += self._restore(path, head)
            intent.unlink()
            self.repo.sync_index()
        done += self.repair_index()
        self._swept = time.monotonic()
        return done

    def index_behind(self) -> list[str]:
        """Manifests (``agents/``, ``staging/``) whose entry in git's index differs from HEAD
        (a write of an older bourdon, or one whose index update git's own lock held off): a
        plain ``git commit`` would undo them."""
        with contextlib.suppress(Exception):
            found = self.repo.index_differences() or []
            return [p for p in found if p.startswith(MANAGED)]
        return []

    def repair_index(self) -> list[str]:
        """Set the index entries of the manifests that differ from HEAD to HEAD's; what you
        staged yourself elsewhere in the library is left as it is."""
        stale = self.index_behind()
        if not stale:
            return []
        try:
            stale = self.repo.repair_index(MANAGED)
        except GitError:
            return []  # git holds the index right now: the next open tries again
        shown = ", ".join(stale[:3]) + (f" and {len(stale) - 3} more" if len(stale) > 3 else "")
        return [f"{INDEX_REPAIRED} ({len(stale)} path(s) were stale: {shown})"]

    def stale_git_locks(self, *, objects: bool = True) -> list[Path]:
        """git lock and temp files left by a killed process, provably: see ``is_stale``
        (``objects``: the temp objects in the fan-out folders too)."""
        candidates = list(self.repo.stale_locks(objects=objects))
        if not candidates:
            return []
        started = _interrupted_write_start(self.root / INTENT)
        users: list[int] | None = []
        asked = False
        stale = []
        for path in candidates:
            verdict = lock_verdict(path, started)
            if verdict == "ours":
                stale.append(path)
            elif verdict == "candidate":
                if not asked:
                    users, asked = self.repo.git_users(), True
                if users == []:
                    stale.append(path)
        return stale

    def _leftover_temp_files(self) -> Iterator[Path]:
        """Temp files of writes that never finished: their writer is no longer running.

        Every folder bourdon writes into with ``atomic_write``: the manifests, and all of
        ``.bourdon/`` (cache, history, watermarks, sync state...) but ``recovered/`` and
        ``imported/``, which hold other programs' files as they were.
        """
        patterns = [f"{AGENTS}/.*.tmp", f"{STAGING}/**/.*.tmp", f"{LOCAL}/.*.tmp"]
        with contextlib.suppress(OSError):
            for sub in os.scandir(self.root / LOCAL):
                if sub.is_dir(follow_symlinks=False) and sub.name not in _NOT_OURS:
                    patterns.append(f"{LOCAL}/{sub.name}/**/.*.tmp")
        for pattern in patterns:
            for tmp in self.root.glob(pattern):
                pid = _temp_pid(tmp.name)
                if pid is not None and not pid_alive(pid):
                    yield tmp

    def _restore(self, path: str, head: str | None) -> list[str]:
        if "/" not in path or path.startswith(("/", ".")) or ".." in path.split("/"):
            return []
        target = self.root / path
        committed = self.manifests.blob(path, head) if head else None
        on_disk = target.read_bytes() if target.exists() else None
        want = committed[1] if committed else None
        if on_disk == want:
            return []
        if on_disk is not None:
            put_aside(target, self.root / LOCAL / "recovered", path.replace("/", "--"))
        if want is not None:
            atomic_write(target, want)
        return [f"restored {path} from HEAD (the uncommitted file is in {LOCAL}/recovered/)"]


def lock_verdict(path: Path, interrupted_since: float | None, now: float | None = None) -> str:
    """``ours`` (a temp object of a dead bourdon writer: stale), ``candidate`` (stale if no
    live git process uses the repository), or ``young`` (left alone for now).

    A candidate is a lock older than ``STALE_AFTER`` seconds, or one made during a write of
    bourdon whose writer is dead (``interrupted_since``: when its intent was recorded), since
    bourdon itself takes the branch's and the index's locks in-process.
    """
    name = path.name
    if name.startswith("tmp_obj_bourdon_"):
        pid = name.split("_")[3] if name.count("_") >= 4 else ""
        return "young" if pid_alive(int(pid) if pid.isdigit() else None) else "ours"
    try:
        made = path.stat().st_mtime
    except OSError:
        return "young"  # gone already
    now = time.time() if now is None else now
    if now - made >= STALE_AFTER or (interrupted_since is not None and made >= interrupted_since):
        return "candidate"
    return "young"


def _interrupted_write_start(intent: Path) -> float | None:
    """When the write an intent records began, if its writer is dead; else ``None``."""
    try:
        pid = json.loads(intent.read_text(encoding="utf-8")).get("pid")
        return None if pid_alive(pid) else intent.stat().st_mtime - 1.0
    except (OSError, ValueError, AttributeError):
        return None


def put_aside(source: Path, folder: Path, name: str) -> Path:
    """Move ``source`` into ``folder`` as ``<unix time>-<name>``, never over another file.

    Two recoveries in the same second get ``<time>-<name>`` and ``<time>.2-<name>``: the
    name is claimed with a hard link, which fails if it exists, so nothing is overwritten.
    """
    folder.mkdir(parents=True, exist_ok=True)
    stamp = int(time.time())
    for n in range(1, 10_000):
        aside = folder / (f"{stamp}-{name}" if n == 1 else f"{stamp}.{n}-{name}")
        try:
            os.link(source, aside)
        except FileExistsError:
            continue
        except OSError:  # no hard links here (some shared folders): under the library lock,
            if aside.exists():  # checking first is enough
                continue
            os.replace(source, aside)
        else:
            source.unlink()
        fsync_dir(folder)
        fsync_dir(source.parent)
        return aside
    raise LibraryError(f"{folder} holds too many recovered files named {name}; clear it")


def _temp_pid(name: str) -> int | None:
    """The writer's process id in a temp name ``.<target>.<pid>.<thread>.tmp``."""
    parts = name.split(".")
    try:
        return int(parts[-3])
    except (IndexError, ValueError):
        return None
