"""Every state of one agent's manifest, oldest first, for reads that follow a row through time.

``StateCache`` keeps, for the branch tip it was last brought up to date with, each manifest
path's versions with the blob id the file had after each commit, and the latest blobs' bytes
(``RAW_BUDGET`` in all). A commit never changes, nor does a blob, so after a new commit one
``git log --raw`` names the files the commits since changed, and only those files' new commits
are asked of git (``History``'s log, their blob ids); a tip that is no descendant of the last
(a purge rewrote history) drops everything kept. Reading the tip is
a file read, so a trace on an unchanged library asks git nothing. Parsing is the caller's
choice (``Library.parse``): a row that did not change needs no parse.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Final, NamedTuple

from bourdon.errors import GitError, InputError
from bourdon.model import check_agent_id
from bourdon.store.history import History, Version
from bourdon.store.manifests import Manifests

RAW_BUDGET: Final = 64 * 1024 * 1024  # bytes of blobs kept in memory, the latest used


class State(NamedTuple):
    """One version of the file: its blob id and bytes, ``None`` where the file was absent."""

    version: Version
    blob_id: str | None
    raw: bytes | None


class _Path(NamedTuple):
    head: str  # the tip these versions are complete up to
    versions: list[tuple[Version, str | None]]  # oldest first, with the file's blob id


class StateCache:
    """The versions of manifest paths and the bytes of their blobs, for one library object.

    ``generation`` changes whenever a rewritten history dropped what was kept, so a cache
    built on top (by blob id) can drop its own.
    """

    def __init__(self, history: History, manifests: Manifests) -> None:
        self.history = history
        self.repo = manifests.repo
        self.generation = 0
        self._lock = threading.Lock()
        self._head: str | None = None  # the tip last seen
        self._paths: dict[str, _Path] = {}
        self._blob_of: dict[str, dict[str, str | None]] = {}  # path -> commit -> blob id
        self._raw: OrderedDict[str, bytes] = OrderedDict()
        self._raw_size = 0

    def head(self) -> str | None:
        """The branch tip, read from its ref file; drops everything kept if history was
        rewritten under it."""
        head = self.repo.head()
        with self._lock:
            seen, self._head = self._head, head
        if seen is None or head == seen:
            return head
        if head is not None and self.repo.is_ancestor(seen, head):
            # Paths no commit since touched keep their versions: one git call, not two each.
            changed = self.repo.changed_files(seen, head)
            with self._lock:
                for path, known in list(self._paths.items()):
                    if known.head == seen and path not in changed:
                        self._paths[path] = known._replace(head=head)
            return head
        with self._lock:
            self._paths.clear()
            self._blob_of.clear()
            self._raw.clear()
            self._raw_size = 0
            self.generation += 1
        return head

    def versions(self, path: str) -> list[tuple[Version, str | None]]:
        """``path``'s versions, oldest first, each with the file's blob id (``None``: the
        commit removed it)."""
        head = self.head()
        if head is None:
            return []
        with self._lock:
            known = self._paths.get(path)
        if known is not None and known.head == head:
            return known.versions
        entries = list(reversed(self.history.log(path)))
        with self._lock:
            ids = dict(self._blob_of.get(path, {}))
        if any(e.commit not in ids for e in entries):
            ids.update(self._file_ids(path, known.head if known else None))
        kept = {v.version_id: v for v, _ in known.versions} if known else {}
        versions = []
        for entry in entries:
            if entry.commit not in ids:  # git left it out of the raw log: ask its tree
                ids[entry.commit] = self.repo.object_id(entry.commit, path)
            version = kept.get(entry.commit) or self.history.version(entry, path)
            versions.append((version, ids[entry.commit]))
        with self._lock:
            self._blob_of[path] = {e.commit: ids[e.commit] for e in entries}
            self._paths[path] = _Path(head, versions)
        return versions

    def raw(self, blob_id: str) -> bytes | None:
        """A blob's bytes (``None`` if the repository has no such blob)."""
        with self._lock:
            found = self._raw.get(blob_id)
            if found is not None:
                self._raw.move_to_end(blob_id)
                return found
        got = self.repo.read(blob_id)
        if got is None or got[1] != "blob":
            return None
        with self._lock:
            if blob_id not in self._raw:
                self._raw[blob_id] = got[2]
                self._raw_size += len(got[2])
            while self._raw_size > RAW_BUDGET and len(self._raw) > 1:
                self._raw_size -= len(self._raw.popitem(last=False)[1])
        return got[2]

    def _file_ids(self, path: str, since: str | None) -> dict[str, str | None]:
        if since is not None:
            try:
                return self.repo.file_ids(path, since=since)
            except GitError:  # ``since`` is gone (a rewritten history, pruned)
                pass
        return self.repo.file_ids(path)


def agents_named(history: History, folder: str, live: list[str]) -> list[str]:
    """Agents with a manifest now (``live``) or named by any commit in ``folder``'s history."""
    named = {
        line.partition(": ")[2].strip()
        for entry in history.log(folder)
        for line in entry.message.splitlines()
        if line.startswith("Bourdon-Agent: ")
    }
    return sorted(set(live) | {n for n in named if _valid(n)})


def _valid(agent_id: str) -> bool:
    try:
        check_agent_id(agent_id)
    except InputError:
        return False
    return True
