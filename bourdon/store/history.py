"""An agent's history: its versions (commits with their provenance) and which write explains a
digest.

``git log -- path`` walks the whole history to find a file's versions (90 ms for 50 versions
among 2,000 commits); the log kept in memory, and the cache under ``.bourdon/history/`` shared
by every process, only ask git for the commits made since they were last brought up to date.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, NamedTuple

from bourdon.digest import digest, digest8, parse_digest
from bourdon.errors import ManifestError, NotFoundError
from bourdon.merge.twoway import RowChanges, compare
from bourdon.store.durable import atomic_write
from bourdon.store.git.repo import GitRepo, LogEntry
from bourdon.store.manifests import Manifests
from bourdon.store.provenance import repeated, trailers

DISK_EVERY: Final = 50  # commits joining a log in memory before its cache file is rewritten


@dataclass(frozen=True)
class Version:
    """One state of an agent's memory: the commit that produced it and its provenance."""

    version_id: str
    digest: str | None
    op: str
    caller: str | None
    session: str | None
    transcript: str | None
    time: str
    subject: str
    stager: str | None = None
    restores: str | None = None
    remote: str | None = None  # a sync: the remote whose version was integrated
    theirs: str | None = None  # ... its commit (the second parent), and both sides' digests
    ours_digest: str | None = None
    theirs_digest: str | None = None
    reference_digest: str | None = None  # adopted from the reference: its sha256 of the bytes
    conflicts: tuple[str, ...] = ()  # a sync: each row both sides changed, and who won

    @property
    def digest8(self) -> str | None:
        return digest8(self.digest) if self.digest else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version_id": self.version_id,
            "digest": self.digest,
            "digest8": self.digest8,
            "op": self.op,
            "caller": self.caller,
            "session_id": self.session,
            "transcript_ref": self.transcript,
            "time": self.time,
            "subject": self.subject,
            **({"stager": self.stager} if self.stager else {}),
            **({"restores": self.restores} if self.restores else {}),
            **(
                {
                    "remote": self.remote,
                    "merged_version": self.theirs,
                    "ours_digest": self.ours_digest,
                    "theirs_digest": self.theirs_digest,
                }
                if self.theirs
                else {}
            ),
            **({"conflicts": list(self.conflicts)} if self.conflicts else {}),
            **({"reference_digest": self.reference_digest} if self.reference_digest else {}),
        }


class _Log(NamedTuple):
    head: str  # the commit the log is complete up to
    entries: list[LogEntry]  # newest first
    saved: int  # how many of them the cache file holds


@dataclass(frozen=True)
class Explanation:
    """Which write produced a digest, and what it changed."""

    version: Version
    changes: RowChanges
    again_in: list[str] = field(default_factory=list)  # later versions with the same digest


class History:
    """The versions of the files of one library, newest first."""

    def __init__(self, repo: GitRepo, manifests: Manifests, cache_folder: Path) -> None:
        self.repo = repo
        self.manifests = manifests
        self.cache_folder = cache_folder
        self._memo: dict[str, _Log] = {}  # path -> the log this process read last

    def versions(self, path: str, limit: int | None) -> list[Version]:
        entries = self.log(path)
        if limit is not None:
            entries = entries[: max(0, limit)]
        return [self.version(entry, path) for entry in entries]

    def explain(
        self,
        path: str,
        agent_id: str,
        wanted: str,
        level: int | None,
        every: Callable[[], list[Version]],
    ) -> Explanation:
        """The write that produced the digest ``wanted`` (full or at least 8 hex).

        ``every`` lists the versions to search by content when no trailer names the digest.
        """
        hexpart = parse_digest(wanted)
        candidates = self.repo.log(path, None, grep=f"Bourdon-Digest: sha256:{hexpart}")
        found = [v for v in (self.version(e, path) for e in candidates) if _has(v, hexpart)]
        if not found:  # a state adopted from the reference, named by its digest of the bytes
            candidates = self.repo.log(path, None, grep=f"Bourdon-Reference-Digest: {hexpart}")
            found = [
                v
                for v in (self.version(e, path) for e in candidates)
                if (v.reference_digest or "").startswith(hexpart)
            ]
        if not found:  # commits made outside bourdon carry no trailer: look at the content
            found = [v for v in every() if _has(v, hexpart)]
        # The same state can be produced again (a rollback restores it): the first write
        # that produced it is the one that explains it; the later ones are listed too.
        match = found[-1] if found else None
        if match is None:
            raise NotFoundError(
                f"no version of {agent_id!r} has digest {wanted}; see 'bourdon history {agent_id}'"
            )
        after = self.manifests.data(path, match.version_id, agent_id)
        before = self.manifests.parent_data(path, match.version_id)
        return Explanation(match, compare(before, after, level), [v.version_id for v in found[:-1]])

    def log(self, path: str) -> list[LogEntry]:
        """Every commit that touched ``path``, newest first, from the cache kept in step.

        This process keeps the log it last read in memory, so after a write only the commits
        since are asked of git; the file under ``.bourdon/history/`` (for other processes) is
        rewritten when ``DISK_EVERY`` commits have joined it since, not on every call: a
        reader of a stale file asks git for the commits since its head, as after any write.
        """
        head = self.repo.head()
        if head is None:
            return []
        memo = self._memo.get(path)
        if memo is not None and memo.head == head:
            return memo.entries
        cache = self.cache_folder / (path.replace("/", "--") + ".json")
        since: str | None
        if memo is not None and self.repo.is_ancestor(memo.head, head):
            since, known, saved = memo.head, memo.entries, memo.saved
        else:
            since, known, saved = self._read_cache(cache, head)
        entries = self.repo.log(path, None, since=since) + known if since != head else known
        if len(entries) - saved >= DISK_EVERY or (saved == 0 and entries):
            record = {
                "head": head,
                "entries": [[e.commit, list(e.parents), e.time, e.message] for e in entries],
            }
            with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
                atomic_write(cache, json.dumps(record).encode("utf-8"), sync=False)
            saved = len(entries)
        self._memo[path] = _Log(head, entries, saved)
        return entries

    def _read_cache(self, cache: Path, head: str) -> tuple[str | None, list[LogEntry], int]:
        """What the cache file knows: (the head it is complete up to, or ``None`` when it does
        not fit this history, its entries, how many)."""
        try:
            data = json.loads(cache.read_text(encoding="utf-8"))
            if data.get("head") == head or self.repo.is_ancestor(data["head"], head):
                known = [LogEntry(c, tuple(p), t, m) for c, p, t, m in data["entries"]]
                return data["head"], known, len(known)
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return None, [], 0

    def version(self, entry: LogEntry, path: str) -> Version:
        """A commit as a version of ``path``: its trailers, else what its content says."""
        found = trailers(entry.message)
        found_digest = found.get("Digest")
        if not found_digest:
            blob = self.manifests.blob(path, entry.commit)
            with contextlib.suppress(ManifestError):
                found_digest = digest(self.manifests.parse(*blob, path)) if blob else None
        return Version(
            version_id=entry.commit,
            digest=found_digest,
            op=found.get("Op", "external"),
            caller=found.get("Caller"),
            session=found.get("Session"),
            transcript=found.get("Transcript"),
            time=iso(entry.time),
            subject=entry.message.splitlines()[0] if entry.message else "",
            stager=found.get("Stager"),
            restores=found.get("Restores"),
            remote=found.get("Remote"),
            theirs=found.get("Theirs"),
            ours_digest=found.get("Ours-Digest"),
            theirs_digest=found.get("Theirs-Digest"),
            reference_digest=found.get("Reference-Digest"),
            conflicts=tuple(repeated(entry.message, "Conflict")),
        )


def iso(epoch: int) -> str:
    """A commit time as RFC 3339 UTC, ``2026-11-30T09:15:00Z``."""
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _has(version: Version, hexpart: str) -> bool:
    return bool(version.digest) and str(version.digest).removeprefix("sha256:").startswith(hexpart)
