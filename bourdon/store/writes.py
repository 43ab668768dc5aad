"""The write protocol, the one way anything is written into a library.

Take the library lock (cross-process) -> read the current manifest at HEAD -> check
``expected_digest`` -> compute the new manifest -> answer ``no_op`` if its digest is unchanged
-> validate -> record the intent -> write the file atomically -> commit with provenance
trailers (the branch moves by compare-and-swap) -> clear the intent. A write is acknowledged
only once its commit exists; a crash anywhere in between is undone by ``recovery``.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bourdon.digest import digest, is_current, parse_digest
from bourdon.errors import ConflictError, LibraryError, ManifestError, SchemaError
from bourdon.formats import reading, schema, yamlio
from bourdon.merge.twoway import MergeStats
from bourdon.model import ROW_SECTIONS
from bourdon.store.changes import Compute
from bourdon.store.durable import atomic_write
from bourdon.store.git.repo import GitRepo
from bourdon.store.layout import INTENT
from bourdon.store.manifestcache import content_id, remember_parsed
from bourdon.store.manifests import Manifests
from bourdon.store.provenance import Provenance, identity, message
from bourdon.store.recovery import MANAGED
from bourdon.store.writelock import WriteLock


@dataclass(frozen=True)
class WriteResult:
    """What a write did. ``version`` is the new commit, ``None`` for a no-op."""

    agent_id: str
    op: str
    path: str
    digest: str
    previous_digest: str | None
    version: str | None
    last_updated: str | None
    stats: MergeStats
    totals: dict[str, int] = field(default_factory=dict)
    created: bool = False
    staged: bool = False
    previous_version: str | None = None  # HEAD before the write: the state to undo back to

    @property
    def no_op(self) -> bool:
        return self.version is None


class Writer:
    """Runs the write protocol for one library."""

    def __init__(self, root: Path, repo: GitRepo, manifests: Manifests, lock: WriteLock) -> None:
        self.root = root
        self.repo = repo
        self.manifests = manifests
        self.lock = lock
        self.row_text: yamlio.RowCache = {}  # YAML of rows, so a dump costs what changed

    def write(
        self,
        path: str,
        agent_id: str,
        op: str,
        who: Provenance,
        compute: Compute,
        expected_digest: str | None,
        *,
        raw: bytes | None = None,
        also: Mapping[str, bytes | None] | None = None,
        extra: Mapping[str, str] | None = None,
        force: bool = False,
        merged: str | None = None,
        vetted: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        """Write the manifest at ``path`` as ``compute`` makes it from the current one.

        ``raw``: the exact bytes to write (a rollback); ``also``: more paths changed in the same
        commit; ``force``: commit even when the digest is unchanged; ``merged``: a second
        parent; ``vetted``: a manifest from elsewhere whose rows already passed (a sync).
        """
        expected = parse_digest(expected_digest, "expected_digest") if expected_digest else None
        manifests = self.manifests
        with self._writing():
            head = self.repo.head()
            self._adopt_hand_edit(path, head, who)
            head = self.repo.head()
            found = manifests.at(path, head)
            current = found[1] if found else None
            before = manifests.digest_of(found[0]) if found else None
            if expected is not None and not is_current(before, expected):
                raise ConflictError(
                    f"{agent_id!r} changed since you read it: expected_digest {expected_digest} "
                    f"is stale; the current digest is {before}. Re-read and retry",
                    current_digest=before,
                )
            data, stats = compute(current)
            if len(self.row_text) > 200_000:
                self.row_text.clear()
                manifests.row_json.clear()
            after = digest(data, manifests.row_json)
            if current is not None and after == before and not force:
                last = current.get("last_updated")
                return WriteResult(
                    agent_id, op, path, after, before, None, last, stats, totals(current)
                )
            unchanged = (
                manifests.blob(path, head) if current is not None and after == before else None
            )
            if raw is None and unchanged is not None and current is not None:
                # A forced write that changes nothing (a promote of rows already live) keeps
                # the file's bytes: it must not make a new version of the agent.
                raw, data = unchanged[1], current
            if raw is None:
                data = {**data, "last_updated": now()}
                schema.validate(data, trusted=current, also=vetted)
                raw = yamlio.dump(data, cache=self.row_text)
            # Rows kept unserved on disk stay in what is written (and a manifest from elsewhere,
            # ``vetted``, may hold some): then the index must read the bytes again.
            blob = self.repo.blob_id(raw)
            unserved = (
                vetted is not None
                or (found is not None and found[0] in manifests.unserved)
                or blob in manifests.unserved
            )
            changes = {path: raw, **(also or {})}
            text = message(op, agent_id, summary(op, agent_id, stats), who, after, extra)
            # The server's index reloads this file next: the parsed form goes to it in memory,
            # and to other processes (a server, while the CLI or a hook writes) on disk, so none
            # parses and validates again what was just validated. Not for bytes holding rows
            # kept unserved: the index must read those again.
            key = None if unserved else content_id(raw)
            with self._cached_meanwhile(key, data):
                self.intent(changes, head)
                for name, content in changes.items():
                    if content is None:
                        with contextlib.suppress(FileNotFoundError):
                            (self.root / name).unlink()
                    else:
                        atomic_write(self.root / name, content)
                commit = self.commit(changes, text, head, who, merged)
            manifests.remember(blob, data, after)
            if key is None:
                manifests.unserved.add(blob)
            else:
                remember_parsed(key, data)
            return WriteResult(
                agent_id,
                op,
                path,
                after,
                before,
                commit,
                data.get("last_updated"),
                stats,
                totals(data),
                created=current is None,
                previous_version=head,
            )

    def commit(
        self,
        changes: Mapping[str, bytes | None],
        text: str,
        head: str | None,
        who: Provenance,
        merged: str | None = None,
    ) -> str:
        """Commit files already written (their intent recorded); clear the intent."""
        repo = self.repo
        commit = repo.commit_files(
            changes,
            text,
            parent=head,
            author=identity(who.caller),
            committer=identity("bourdon"),
            merged=merged,
            keep_index=repo.index_current,
        )
        if not repo.index_current:
            # An update was skipped (git held the index): the whole index is due, now if git
            # let it go, else when the library is closed or opened again.
            with contextlib.suppress(Exception):
                repo.repair_index(MANAGED)
        (self.root / INTENT).unlink()
        return commit

    def delete(
        self,
        path: str,
        agent_id: str,
        op: str,
        subject: str,
        who: Provenance,
        extra: Mapping[str, str] | None = None,
    ) -> str:
        """Delete one file in a commit of its own (under the lock, its intent recorded)."""
        with self._writing():
            head = self.repo.head()
            text = message(op, agent_id, subject, who, None, extra)
            self.intent({path: None}, head)
            with contextlib.suppress(FileNotFoundError):
                (self.root / path).unlink()
            return self.commit({path: None}, text, head, who)

    def publish(
        self,
        changes: Mapping[str, bytes | None],
        parent: str | None,
        subject: str,
        machine: str,
        merged: str | None,
    ) -> str:
        """Write a commit of published manifests on no branch (``Library.write_published``)."""
        who = Provenance(caller=f"sync:{machine}", machine=machine)
        text = message("publish", "library", subject, who, None, {"Machine": machine})
        commit, _ = self.repo.write_commit(
            changes,
            text,
            parent=parent,
            author=identity(who.caller),
            committer=identity("bourdon"),
            merged=merged,
        )
        return commit

    @contextlib.contextmanager
    def _cached_meanwhile(self, key: str | None, data: dict[str, Any]) -> Iterator[None]:
        """The parsed form of the bytes ``key`` names written to the disk cache in a thread
        while the block writes and commits them: their waits on the disk leave the interpreter
        free for it. An entry for bytes whose commit then fails is harmless: it is their
        content's. A cache that cannot be written is only slower: its errors are dropped."""
        if key is None:
            yield
            return

        def put() -> None:
            with contextlib.suppress(Exception):
                self.manifests.disk_cache.put(key, reading.Reading(data, ()))

        caching = threading.Thread(target=put, name="bourdon-cache-put")
        caching.start()
        try:
            yield
        finally:
            caching.join()

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """The library lock around a write; then, the lock released so no writer waits on it,
        a background pack of the loose objects if git would pack now (a few stats)."""
        with self.lock.held():
            yield
        self.repo.pack_if_due()

    def intent(self, changes: Mapping[str, bytes | None], head: str | None) -> None:
        """Record the paths a write is about to change, for recovery should it never commit."""
        record = json.dumps({"paths": sorted(changes), "head": head, "pid": os.getpid()})
        atomic_write(self.root / INTENT, record.encode("utf-8"))

    def refresh_index(self) -> None:
        """Bring git's index in line with HEAD, if a write could not keep it so."""
        if not self.repo.index_current:
            with contextlib.suppress(Exception):  # the next open repairs it otherwise
                self.repo.repair_index(MANAGED)

    def _adopt_hand_edit(self, path: str, head: str | None, who: Provenance) -> None:
        """Commit a manifest someone edited by hand before writing over it, so it is not lost."""
        target = self.root / path
        if head is None or not target.exists():
            return
        on_disk = target.read_bytes()
        blob = self.repo.blob_id(on_disk)
        if self.repo.object_id(head, path) == blob:
            return
        try:
            data = self.manifests.parse(blob, on_disk, path)
            committed = self.manifests.at(path, head)
            brought = reading.new_problems(
                self.manifests.disk_cache.read(on_disk, what=path),
                committed[1] if committed else None,
            )
            if brought:
                raise SchemaError(brought[0].message(path))
        except ManifestError as exc:
            raise LibraryError(
                f"{path} was edited by hand and does not validate ({exc.message}); fix it, or "
                f"run 'git -C {self.root} checkout -- {path}' to drop the edit"
            ) from None
        adopter = Provenance(caller="filesystem", machine=who.machine)
        subject = f"adopt hand edit of {path}"
        text = message("adopt", data["agent"]["id"], subject, adopter, digest(data))
        self.intent({path: on_disk}, head)
        self.commit({path: on_disk}, text, head, adopter)


def totals(data: Mapping[str, Any]) -> dict[str, int]:
    """Rows per section of a manifest, and their ``total``."""
    counts = {s: len(data.get(s) or []) for s in ROW_SECTIONS}
    return {**counts, "total": sum(counts.values())}


def summary(op: str, agent_id: str, stats: MergeStats) -> str:
    """A write's commit subject: ``commit alpha: +2 ~1 -0 rows``."""
    return (
        f"{op} {agent_id}: +{stats.total_added} ~{stats.total_updated} -{stats.total_removed} rows"
    )


def now() -> str:
    """The ``last_updated`` of a write: UTC, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
