"""Packing the objects bourdon writes loose, in the background, when ``git gc --auto`` would.

bourdon writes every commit's blob, trees and commit as loose objects (``objects``) and nothing
of git's porcelain ever runs to pack them: without this, 10,000 commits leave some 40,000 files
of at least a disk block each. After each write, once the library lock is released, ``due``
decides as git's ``gc --auto`` does, from a few stats: the loose objects are estimated from one
fan-out folder (``objects/17``) times 256, against ``gc.auto`` (the repository's own setting if
it has one, else ``LOOSE_LIMIT``; 0 or less disables packing), and the packs are counted against
``gc.autoPackLimit`` (else ``PACK_LIMIT``). When due, one ``git repack -d --geometric=2`` starts,
detached, in a session of its own; the write that noticed returns at once.

``LOOSE_LIMIT`` is 2,000, not git's 6,700: a bourdon commit writes about four small objects,
so git's figure lets some 1,700 commits (27 MB of 4 kB blocks) pile up loose before a pack;
2,000 is about 500 commits, packed in a fraction of a second, and still ten objects expected in
the one folder the estimate counts, so the estimate stays meaningful.

What runs, and why it is safe next to bourdon's writers and readers:

- ``repack --geometric=2 -d`` puts every loose object (reachable or not: an object of a commit
  still being written, or of a published commit not yet pushed, is packed too, never dropped)
  into a new pack, merged with the packs smaller than it in a geometric progression (so their
  number stays logarithmic in the history and consolidation needs no separate pass), then
  removes the packs it merged and, as ``prune-packed``, the loose files of objects now in a pack.
  It deletes no object that is not in a pack and walks no history: its cost is what it packs.
  Readers find an object that moved: git's object lookup reads the pack list again when an
  object is in neither a known pack nor a loose file, and an open pack that is removed stays
  readable until closed. bourdon's writer checks only that a loose file exists before writing
  it; an object that was packed meanwhile is written loose again, a harmless duplicate.
- Never ``pack-refs``, ``reflog expire`` nor ``prune``, which ``git gc`` would run.
  ``pack-refs`` and ``reflog expire`` take the branch's ``<ref>.lock``, which bourdon's own
  compare-and-swap takes exclusively without waiting (``refs.move_branch``), so a write would
  fail, and ``reflog expire`` rewrites the reflog bourdon appends to without a lock.
  ``prune`` deletes unreachable loose objects, and bourdon does not refresh the time of an
  object it finds already there (git does, to close exactly this race), so a write reusing an
  old unreachable object could lose it. An unreachable object is packed instead, and stays.

One run at a time per repository: ``.git/bourdon-pack.pid`` names the running ``git repack``
(a holder that is gone, a zombie or not git, or older than ``RUN_STALE`` seconds, is stale); two
runs started at the same instant by two processes would only duplicate work. A run that failed is
tried again after ``RETRY_AFTER`` seconds, not after every write. A crashed run's
temporary packs (``.tmp-<pid>-pack-*`` of a dead process, ``tmp_pack_*`` untouched for an hour)
are removed before the next run; git ignores them meanwhile. Its words go to
``.git/bourdon-pack.log``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bourdon.errors import BourdonError
from bourdon.store.git.process import pid_alive, run_git, start_detached

LOOSE_LIMIT: Final = 2000  # loose objects (estimated) before a pack; gc.auto overrides
PACK_LIMIT: Final = 50  # packs before they are merged whatever the loose count; as git's
RUN_STALE: Final = 3600.0  # seconds: a run this old is taken for dead (its pid was reused)
RETRY_AFTER: Final = 60.0  # seconds before a run that failed is tried again
LEFTOVER_AGE: Final = 3600.0  # seconds untouched before a temp pack of unknown owner is removed
SAMPLE: Final = "17"  # the fan-out folder git itself counts
REPACK: Final = ("repack", "-d", "-q", "--geometric=2", "--no-write-bitmap-index")
PID_FILE: Final = "bourdon-pack.pid"
LOG_FILE: Final = "bourdon-pack.log"


@dataclass(frozen=True)
class StoreState:
    """The object store at a glance: a few stats, cheap enough for every status call."""

    loose: int  # estimated, as git estimates it: one fan-out folder times 256
    packs: int
    last_packed: float | None  # the newest pack's time, ``None`` without packs
    packing: bool  # a run is under way
    loose_limit: int  # 0: packing is disabled by gc.auto
    pack_limit: int


@dataclass(frozen=True)
class _Limits:
    loose: int
    packs: int


# This process's runs, so each is reaped when it ends (a zombie would look alive forever).
_children: dict[Path, subprocess.Popen[bytes]] = {}
_failed: dict[Path, float] = {}  # when this process's last run failed, per repository
_children_lock = threading.Lock()


class Packer:
    """Decides when one repository's loose objects are due to be packed, and starts the run."""

    def __init__(self, root: Path, git_dir: Path, oid_hex: int) -> None:
        self.root = root
        self.git_dir = git_dir
        self.objects = git_dir / "objects"
        self._loose_name = oid_hex - 2  # a loose file's name: the id without its folder's 2 hex
        self._limits: tuple[object, _Limits] | None = None

    # -- deciding ------------------------------------------------------------------------

    def due(self) -> bool:
        """Would ``git gc --auto`` pack now? Two folder listings and a stat."""
        sample = self._sample()
        packs = self._packs()
        if sample == 0 and len(packs) <= 1:
            return False  # due under no setting at all: spare the configuration's stat
        limits = self.limits()
        if limits.loose <= 0:
            return False
        return sample > -(-limits.loose // 256) or 0 < limits.packs < len(packs)

    def limits(self) -> _Limits:
        """``gc.auto`` and ``gc.autoPackLimit`` from the repository's own configuration, read
        again only when its file changes."""
        config = self.git_dir / "config"
        try:
            info = config.stat()
            key: object = (info.st_mtime_ns, info.st_size, info.st_ino)
        except OSError:
            key = None
        if self._limits is None or self._limits[0] != key:
            self._limits = (key, self._read_limits())
        return self._limits[1]

    def _read_limits(self) -> _Limits:
        loose, packs = LOOSE_LIMIT, PACK_LIMIT
        pattern = r"^gc\.auto(packlimit)?$"
        # --local: the -c gc.auto=0 every bourdon git gets is not the repository's setting.
        out = run_git(
            self.root, "config", "--local", "--includes", "--type=int", "--get-regexp", pattern,
            check=False,
        )  # fmt: skip
        for line in out.decode("utf-8", "replace").splitlines():
            name, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                if name == "gc.auto":
                    loose = int(value)
                elif name == "gc.autopacklimit":
                    packs = int(value)
        return _Limits(loose, packs)

    def state(self) -> StoreState:
        packs = self._packs()
        times = []
        for pack in packs:
            with contextlib.suppress(OSError):
                times.append((self.objects / "pack" / pack).stat().st_mtime)
        limits = self.limits()
        return StoreState(
            loose=self._sample() * 256,
            packs=len(packs),
            last_packed=max(times) if times else None,
            packing=self.running(),
            loose_limit=max(0, limits.loose),
            pack_limit=max(0, limits.packs),
        )

    # -- running -------------------------------------------------------------------------

    def start_if_due(self) -> bool:
        """After a write: start a background run if one is due and none is under way.

        Never raises: the write it follows is already committed, and a pack is only upkeep.
        """
        try:
            if not self.due() or self.running() or self._failed_lately():
                return False
            with _children_lock:
                if self.running():
                    return False
                self._clear_leftovers()
                log = open(self.git_dir / LOG_FILE, "ab")  # noqa: SIM115 (the child keeps it)
                try:
                    child = start_detached(self.root, *REPACK, output=log)
                finally:
                    log.close()
                _children[self.git_dir] = child
                self._claim(child.pid)
            return True
        except (OSError, BourdonError):
            return False

    def pack_now(self) -> None:
        """One run in the foreground (tests, benchmarks): packs whatever is loose now."""
        with _children_lock:
            self._clear_leftovers()
        run_git(self.root, *REPACK)

    def wait(self, timeout: float) -> bool:
        """Wait for this process's background run, if any, to end; ``False`` if it still runs."""
        with _children_lock:
            child = _children.get(self.git_dir)
        if child is None:
            return True
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        self.running()  # reaps it, and notes a failure
        return True

    def running(self) -> bool:
        """Is a run under way, started by this process or another?"""
        child = _children.get(self.git_dir)
        if child is not None:
            if child.poll() is None:
                return True
            _children.pop(self.git_dir, None)  # ended (and now reaped)
            if child.returncode != 0:  # its words are in the log; do not start one every write
                _failed[self.git_dir] = time.monotonic()
        try:
            text = (self.git_dir / PID_FILE).read_text(encoding="ascii").split()
            pid, started = int(text[0]), float(text[1])
        except (OSError, ValueError, IndexError):
            return False
        return time.time() - started < RUN_STALE and is_git_running(pid)

    def _failed_lately(self) -> bool:
        failed = _failed.get(self.git_dir)
        return failed is not None and time.monotonic() - failed < RETRY_AFTER

    def _claim(self, pid: int) -> None:
        target = self.git_dir / PID_FILE
        temp = target.with_name(f"{PID_FILE}.{os.getpid()}.tmp")
        temp.write_text(f"{pid} {time.time():.3f}\n", encoding="ascii")
        os.replace(temp, target)

    # -- the folders -----------------------------------------------------------------------

    def _sample(self) -> int:
        try:
            names = [e.name for e in os.scandir(self.objects / SAMPLE)]
        except OSError:
            return 0
        hexdigits = set("0123456789abcdef")
        return sum(1 for n in names if len(n) == self._loose_name and set(n) <= hexdigits)

    def _packs(self) -> list[str]:
        """The packs a repack would count: local, without a ``.keep``."""
        try:
            names = {e.name for e in os.scandir(self.objects / "pack")}
        except OSError:
            return []
        return [
            n for n in names if n.startswith("pack-") and n.endswith(".pack")
            and n[:-5] + ".keep" not in names
        ]  # fmt: skip

    def _clear_leftovers(self) -> None:
        """Remove what a killed run left in ``objects/pack`` (under the one-run turn)."""
        folder = self.objects / "pack"
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        now = time.time()
        for entry in entries:
            name = entry.name
            stale = False
            if name.startswith(".tmp-"):  # git repack's own: .tmp-<pid>-pack-...
                pid = name[5:].partition("-")[0]
                stale = pid.isdigit() and not is_git_running(int(pid))
            elif name.startswith(("tmp_pack_", "tmp_idx_", "tmp_rev_")):  # pack-objects'
                with contextlib.suppress(OSError):
                    stale = now - entry.stat().st_mtime > LEFTOVER_AGE
            if stale:
                with contextlib.suppress(OSError):
                    Path(entry.path).unlink()


def is_git_running(pid: int) -> bool:
    """Is ``pid`` a live git process (not a zombie, not a process that reused the id)?"""
    if pid == os.getpid() or not pid_alive(pid):
        return False
    proc = Path("/proc") / str(pid)
    if not proc.is_dir():
        return True  # no /proc: alive is all that can be told
    try:
        stat = (proc / "stat").read_text(encoding="ascii", errors="replace")
        comm = (proc / "comm").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return False
    state = stat.rpartition(")")[2].split()[:1]
    return state != ["Z"] and (comm == "git" or comm.startswith("git-"))
