"""The library: a git repository of manifests, and the only code that writes into it.

``Library`` is a facade over the modules of ``bourdon.store``, one job each: ``manifests``
(reading, parsed once), ``history``, ``writes`` (the write protocol), ``changes`` (what each
write computes), ``writelock`` and ``recovery`` (one writer; undoing what a crash left),
``staging``, ``create`` (new or adopted libraries), ``provenance`` (commit trailers), ``layout``
and ``git``. Opening a library after a crash reconciles first, so its files equal HEAD again.

Size: one short method per operation of the library, each delegating to the module that does
the work; splitting the facade would split the one API every surface uses.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from bourdon.errors import InputError, NotFoundError
from bourdon.formats import reading
from bourdon.merge.threeway import Conflict
from bourdon.merge.twoway import RowChanges, compare
from bourdon.model import SUFFIX, Manifest, check_agent_id
from bourdon.store import adopt, changes, create, forgetting, pushguard
from bourdon.store.forgetting import FORGOTTEN
from bourdon.store.git.packing import StoreState
from bourdon.store.git.repo import GitRepo
from bourdon.store.history import Explanation, History, Version
from bourdon.store.layout import ADOPTING, AGENTS, LOCAL, agent_path, staging_path
from bourdon.store.manifests import Manifests
from bourdon.store.provenance import Provenance, writer
from bourdon.store.recovery import Recovery
from bourdon.store.staging import Clean, StagedWrite, list_staged
from bourdon.store.states import State, StateCache, agents_named
from bourdon.store.writelock import WriteLock
from bourdon.store.writes import Writer, WriteResult


@dataclasses.dataclass(frozen=True)
class Forgotten:
    """What ``Library.forget`` removed from one agent: counts by kind, and the write."""

    agent_id: str
    counts: dict[str, int]
    result: WriteResult


class Library:
    """A library directory. Open one with ``Library.open(path)`` or create it with ``init``."""

    def __init__(
        self, root: Path, repo: GitRepo, lock_timeout: float = 30.0, machine: str | None = None
    ) -> None:
        self.root = root
        self.repo = repo
        # How rows' ``source`` and commits name this machine (the host name unless told).
        self.machine = machine or socket.gethostname()
        local = root / LOCAL
        self._manifests = Manifests(repo, local / "cache")
        self._history = History(repo, self._manifests, local / "history")
        self._states = StateCache(self._history, self._manifests)
        self._agents_ever: tuple[str, list[str], dict[str, int]] | None = None  # per tip
        self._lock = WriteLock(local, lock_timeout, Recovery(root, repo, self._manifests))
        self._writer = Writer(root, repo, self._manifests, self._lock)
        pushguard.ensure(repo.git_dir)  # a hand-typed git push never sends this branch
        weakref.finalize(self, _finish, self._writer)  # an index a write could not keep

    @property
    def lock_timeout(self) -> float:
        return self._lock.timeout

    @property
    def recovered(self) -> list[str]:
        """What crash recovery did since this object was opened, for the surfaces to report."""
        return self._lock.recovered

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def init(
        cls,
        path: str | os.PathLike[str],
        *,
        machine: str | None = None,
        progress: Callable[[str], None] | None = None,
        adoption: adopt.Adoption | None = None,
    ) -> Library:
        """Create a library at ``path`` (an empty or missing folder), or open an existing one.

        A library the reference Bourdon wrote (``agents/``, ``versions/``, no git) is adopted
        in place: its history becomes commits (``adopt``), its own files move under
        ``.bourdon/imported/``. ``adoption`` is its plan when the caller has just read it.
        """
        root = Path(path).expanduser().absolute()
        if (root / ADOPTING).exists():
            create.resume_adoption(root)
        if (root / ".git").exists() and (root / AGENTS).is_dir():
            return cls.open(root, machine=machine)
        reference = create.prepare(root, adoption)
        library = cls(root, GitRepo.init(root), machine=machine)
        with library._lock.held():
            create.first_commit(root, library.repo, reference)
            if reference is not None:
                report = progress or (lambda _: None)
                create.replay(root, library.repo, reference, library.machine, report)
            library.repo.sync_index()
        if reference is not None:
            (root / ADOPTING).unlink()
        return library

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        lock_timeout: float = 30.0,
        machine: str | None = None,
    ) -> Library:
        """Open the library at ``path``, reconciling first if a write was interrupted."""
        root = create.check_library(Path(path).expanduser().absolute())
        library = cls(root, GitRepo(root), lock_timeout, machine)
        recovery = library._lock.recovery  # git's index is checked here; writes keep it
        if recovery.needed() or recovery.index_behind():
            library._lock.recovered += library.reconcile()
        return library

    def close(self) -> None:
        _finish(self._writer)

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading -------------------------------------------------------------------------

    def head(self) -> str | None:
        return self.repo.head()

    def agent_ids(self) -> list[str]:
        """Agents with a live manifest, sorted."""
        head = self.head()
        if head is None:
            return []
        names = (p.rsplit("/", 1)[1] for p in self.repo.list_files(head, AGENTS))
        return sorted(n[: -len(SUFFIX)] for n in names if n.endswith(SUFFIX))

    def read(self, agent_id: str, version: str | None = None) -> Manifest:
        """The agent's manifest at HEAD, or at ``version`` (a commit id)."""
        return Manifest(self._manifests.data(agent_path(agent_id), version, agent_id))

    def live_manifest(self, agent_id: str) -> tuple[str, dict[str, Any]] | None:
        """(blob id, manifest) of the agent's manifest at HEAD, as ``read`` gives it; ``None``
        when it has none. The id names the bytes, for caches of what they hold."""
        return self._manifests.at(agent_path(agent_id), self.head())

    def read_bytes(self, agent_id: str, version: str | None = None) -> bytes:
        """The exact bytes of the agent's manifest at HEAD or at ``version``."""
        return self._manifests.raw(agent_path(agent_id), version, agent_id)

    def sizes(self, agent_id: str, versions: list[str]) -> list[int | None]:
        """The manifest's size in bytes at each version (``None`` where it had none).

        A commit never changes, so each size is asked of git once per library object.
        """
        return self._manifests.sizes(agent_path(agent_id), versions)

    def read_problems(
        self, agent_id: str, version: str | None = None
    ) -> tuple[reading.ReadProblem, ...]:
        """The rows of the agent's manifest that are kept in the file but not served."""
        return self._manifests.problems(agent_path(agent_id), version, agent_id)

    def current_digest(self, agent_id: str) -> str | None:
        """The digest of the live manifest, ``None`` when the agent has none yet (remembered
        with the parsed blob, so asking again costs no canonical JSON of 1,000 rows)."""
        return self.digest_at(self.head(), agent_id)

    def history(self, agent_id: str, limit: int | None = 50) -> list[Version]:
        """Every state of the agent's memory, newest first."""
        versions = self._history.versions(agent_path(agent_id), limit)
        if not versions and agent_id not in self.agent_ids():
            raise NotFoundError(f"no agent {agent_id!r} in this library; see 'bourdon agents'")
        return versions

    def states(self, agent_id: str) -> Iterator[State]:
        """Every version of the agent's manifest, oldest first, as bytes (``store.states``)."""
        for version, blob_id in self.version_blobs(agent_id):
            yield State(version, blob_id, self.blob(blob_id) if blob_id else None)

    def version_blobs(self, agent_id: str) -> list[tuple[Version, str | None]]:
        """Every version of the agent's manifest, oldest first, with the file's blob id then
        (``None``: absent); kept while the branch tip stays, so asking again asks git nothing."""
        return self._states.versions(agent_path(agent_id))

    def blob(self, blob_id: str) -> bytes | None:
        """A blob's bytes, the latest read kept in memory (``store.states``)."""
        return self._states.raw(blob_id)

    def history_generation(self) -> int:
        """Changes when the history was found rewritten (a purge): what was kept by blob id
        for it is to be dropped."""
        self._states.head()
        return self._states.generation

    def parsed_cheaply(self, raw: bytes) -> bool:
        """Whether ``parse`` would only load these bytes' parsed form, not parse YAML."""
        return self._manifests.disk_cache.has(raw)

    def parse(self, raw: bytes, agent_id: str, *, blob_id: str | None = None) -> dict[str, Any]:
        """A manifest's bytes parsed and validated (through the on-disk cache, no digest), as
        served: without the rows that do not validate. With their ``blob_id``, a manifest
        parsed lately (one ``read``) is not loaded again."""
        kept = self._manifests.served(blob_id) if blob_id else None
        if kept is not None:
            return kept
        found = self._manifests.disk_cache.read(raw, what=agent_path(agent_id))
        left_out = {(p.section, p.row) for p in found.problems if p.row is not None}
        if not left_out:
            return found.data
        served = dict(found.data)
        for section in {s for s, _ in left_out if s is not None}:
            rows = served.get(section)
            if isinstance(rows, list):
                served[section] = [r for i, r in enumerate(rows) if (section, i) not in left_out]
        return served

    def agents_ever(self) -> tuple[list[str], dict[str, int]]:
        """Agents with a manifest now or at any time, and each commit's place among the
        commits that touched agents' manifests (0: the oldest)."""
        head = self._states.head()
        known = self._agents_ever
        if known is not None and known[0] == head:
            return known[1], known[2]
        entries = self._history.log(AGENTS)
        order = {e.commit: i for i, e in enumerate(reversed(entries))}
        agents = agents_named(self._history, AGENTS, self.agent_ids())
        if head is not None:
            self._agents_ever = (head, agents, order)
        return agents, order

    def explain(self, agent_id: str, wanted: str, level: int | None = None) -> Explanation:
        """Find the write that produced the digest (full or at least 8 hex) and what it changed."""
        path, every = agent_path(agent_id), lambda: self.history(agent_id, limit=500)
        return self._history.explain(path, agent_id, wanted, level, every)

    def diff(
        self, agent_id: str, old: str, new: str | None = None, level: int | None = None
    ) -> RowChanges:
        """Rows added, removed and changed between two versions (``new``: HEAD).

        With ``level``, rows above that visibility are left out.
        """
        path = agent_path(agent_id)
        before = self._manifests.data(path, old, agent_id)
        after = self._manifests.data(path, new, agent_id)
        return compare(before, after, level)

    # -- writing -------------------------------------------------------------------------

    def commit(
        self,
        agent_id: str,
        change: Mapping[str, Any],
        *,
        mode: str = "merge",
        expected_digest: str | None = None,
        provenance: Provenance | None = None,
        op: str | None = None,
        allow_lower_visibility: bool = False,
    ) -> WriteResult:
        """Merge (or replace) ``change`` into the agent's live manifest, as one commit.

        ``change`` has the manifest's shape; ``agent.type`` is needed when the agent is new.
        Raises ``ConflictError`` when ``expected_digest`` is given and is no longer current.
        No row's visibility goes down unless ``allow_lower_visibility`` (the operator's
        explicit choice, named in the commit's ``Bourdon-Lowered`` trailers).
        """
        check_agent_id(agent_id)
        if mode not in ("merge", "replace"):
            raise InputError(f"mode {mode!r} is not one of merge, replace")
        changes.check(agent_id, change)
        who, extra = writer(provenance, self.machine), dict[str, str]()
        lower = allow_lower_visibility
        compute = changes.merging(agent_id, change, mode, who.source(), lower, extra)
        path = agent_path(agent_id)
        return self._writer.write(
            path, agent_id, op or mode, who, compute, expected_digest, extra=extra
        )

    def regenerate(
        self,
        agent_id: str,
        fresh: Mapping[str, Any],
        *,
        reader: str,
        provenance: Provenance | None = None,
        force: bool = False,
    ) -> WriteResult:
        """Write a reader's fresh view of its store: its own rows are replaced, others kept.

        Rows committed through ``commit`` (by any caller) or contributed by another machine's
        reader carry another ``source`` and survive (DESIGN section 3).
        """
        check_agent_id(agent_id)
        changes.check(agent_id, fresh)
        fresh = forgetting.drop_forgotten(fresh, self.tombstones())  # forgotten stays so
        who = writer(provenance, self.machine, f"reader:{reader}")
        source = {"kind": "reader", "name": reader, "machine": who.machine}
        compute = changes.regenerating(agent_id, fresh, source)
        return self._writer.write(agent_path(agent_id), agent_id, "export", who, compute, None)

    def import_manifest(
        self, raw: bytes, *, what: str = "manifest", provenance: Provenance | None = None
    ) -> WriteResult:
        """Take a whole manifest file into the library (its agent id names the target).

        Read as the index reads: whatever the Bourdon L5 schema accepts is taken as written, and
        a row that does not validate is kept in the file, unserved and reported."""
        data = reading.read_manifest(raw, what=what).data
        agent_id = Manifest(data).agent_id
        check_agent_id(agent_id)
        changes.check(agent_id, data)
        who = writer(provenance, self.machine)
        compute = changes.importing(data, who.source())
        path = agent_path(agent_id)
        return self._writer.write(path, agent_id, "import", who, compute, None, vetted=data)

    def rollback(
        self,
        agent_id: str,
        version: str,
        *,
        expected_digest: str | None = None,
        provenance: Provenance | None = None,
    ) -> WriteResult:
        """Restore the exact bytes of an earlier version as a new commit (itself undoable)."""
        path = agent_path(agent_id)
        commit = self._manifests.resolve(version)
        found = self._manifests.blob(path, commit)
        if found is None:
            raise NotFoundError(f"{agent_id!r} had no manifest at version {version}")
        compute = changes.restoring(self._manifests.parse(found[0], found[1], path))
        who = writer(provenance, self.machine)
        extra = {"Restores": commit}
        return self._writer.write(
            path, agent_id, "rollback", who, compute, expected_digest, raw=found[1], extra=extra
        )

    def tombstones(self) -> set[str]:
        """The keyed hashes of every entity forgotten here (``forgetting``)."""
        head = self.head()
        return forgetting.parse_tombstones(self.repo.read_blob(head, FORGOTTEN) if head else None)

    def forget(
        self,
        name: str,
        *,
        agent_id: str | None = None,
        provenance: Provenance | None = None,
        level: int | None = None,
        staged_by: str | None = None,
    ) -> list[Forgotten]:
        """Remove the entity ``name`` (or alias) and its mentions from every live manifest (or
        ``agent_id``'s), one commit per agent (op ``forget``), and tombstone it so a reader's
        export never brings it back. History keeps it (``purge`` rewrites that).

        ``level``: only rows at or below that visibility are touched (a caller's ceiling).
        ``staged_by``: a quarantined caller's forget, written to its staging file for review
        instead. Raises ``NotFoundError``, writing nothing, when no manifest has it.
        """
        if not isinstance(name, str) or not name.strip():
            raise InputError("give the name (or an alias) of the entity to forget")
        agents = [agent_id] if agent_id is not None else self.agent_ids()
        plan = {}
        for each in agents:
            check_agent_id(each)
            try:
                data = dict(self.read(each).data)
            except NotFoundError:
                continue
            names = forgetting.names_of(data, name, level)
            if sum(forgetting.forget(data, names, level)[1].values()):
                plan[each] = (names, data)
        if not plan:
            where = f"agent {agent_id!r}" if agent_id else "any live manifest"
            raise NotFoundError(f"no entity or mention named {name!r} in {where}")
        who = writer(provenance, self.machine)
        stones = forgetting.format_tombstones({*self.tombstones(), forgetting.tombstone(name)})
        done = []
        for each, (names, data) in plan.items():
            counts: dict[str, int] = {}
            if staged_by is not None:
                # The staged file holds the live manifest without the entity, for review; what
                # it removes is counted in the live manifest it was made from.
                check_agent_id(staged_by, "caller id")
                who = dataclasses.replace(who, caller=staged_by)
                compute = changes.asking_to_forget(
                    changes.forgetting(names, {}, level, start=data), name
                )
                path = staging_path(staged_by, each)
                result = self._writer.write(path, each, "stage", who, compute, None)
                result = dataclasses.replace(result, staged=True)
                counts = forgetting.forget(data, names, level)[1]
            else:
                compute = changes.forgetting(names, counts, level)
                also = {FORGOTTEN: stones}
                path = agent_path(each)
                result = self._writer.write(path, each, "forget", who, compute, None, also=also)
            done.append(Forgotten(each, dict(counts), result))
        return done

    # -- replication ---------------------------------------------------------------------

    def integrate(
        self,
        agent_id: str,
        base: Mapping[str, Any] | None,
        theirs: Mapping[str, Any],
        *,
        remote: str,
        theirs_commit: str,
        provenance: Provenance,
        conflicts: list[Conflict] | None = None,
    ) -> WriteResult:
        """Integrate a remote's version of an agent into the live manifest, as one commit.

        Three-way against ``base`` (the state both sides last agreed on; ``syncmerge``), so
        rows changed on either side survive. The commit's second parent is the remote's
        commit: history keeps both originals. Op ``sync``; trailers name both digests and
        each row both sides changed (``Bourdon-Conflict``), also put in ``conflicts``.
        """
        check_agent_id(agent_id)
        extra = {"Remote": remote, "Theirs": theirs_commit}
        found = conflicts if conflicts is not None else []
        compute = changes.integrating(base, theirs, extra, self._manifests.row_json, found)
        path = agent_path(agent_id)
        # ``vetted``: theirs was validated when it was read from the remote's commit.
        return self._writer.write(
            path,
            agent_id,
            "sync",
            provenance,
            compute,
            None,
            extra=extra,
            merged=theirs_commit,
            vetted=theirs,
        )

    def manifest_at(self, commit: str | None, agent_id: str) -> dict[str, Any] | None:
        """The agent's manifest in any commit of this repository (a fetched one too).

        Parsed and validated; raises ``ManifestError`` when it is not a valid manifest.
        """
        found = self._manifests.at(agent_path(agent_id), commit)
        return found[1] if found else None

    def digest_at(self, commit: str | None, agent_id: str) -> str | None:
        """The digest of the agent's manifest in ``commit`` (``None`` if it had none)."""
        found = self._manifests.at(agent_path(agent_id), commit)
        return self._manifests.digest_of(found[0]) if found else None

    def write_published(
        self,
        changes: Mapping[str, bytes | None],
        parent: str | None,
        subject: str,
        machine: str,
        merged: str | None = None,
    ) -> str:
        """Write (not check out, not on any branch) a commit of published manifests.

        Its tree is ``parent``'s with ``changes`` applied; it is what a remote receives.
        ``merged`` is a second parent (this library's own state before integrating).
        """
        return self._writer.publish(changes, parent, subject, machine, merged)

    # -- staging -------------------------------------------------------------------------

    def stage(
        self,
        caller: str,
        agent_id: str,
        change: Mapping[str, Any],
        provenance: Provenance,
        expected_digest: str | None = None,
    ) -> WriteResult:
        """Record a quarantined caller's write under ``staging/<caller>/``; it is not served.

        ``expected_digest`` is of the staged file, or of the live manifest while none is."""
        check_agent_id(caller, "caller id")
        check_agent_id(agent_id)
        changes.check(agent_id, change)
        who = dataclasses.replace(writer(provenance, self.machine), caller=caller)
        live_type = None
        with contextlib.suppress(NotFoundError):
            live_type = self.read(agent_id).agent_type
        expected = (expected_digest, self.current_digest(agent_id)) if expected_digest else None
        compute = changes.staging(agent_id, change, live_type, who.source(), expected)
        path = staging_path(caller, agent_id)
        result = self._writer.write(path, agent_id, "stage", who, compute, None)
        return dataclasses.replace(result, staged=True)

    def staged(self) -> list[StagedWrite]:
        """Every write waiting in staging, oldest first."""
        return list_staged(self._manifests)

    def read_staged(self, caller: str, agent_id: str) -> Manifest:
        path = staging_path(caller, agent_id)
        return Manifest(self._manifests.data(path, None, f"{caller}/{agent_id} in staging"))

    def promote(
        self, caller: str, agent_id: str, provenance: Provenance | None = None, clean: Clean = None
    ) -> WriteResult:
        """Merge a staged write (passed through ``clean``) into the live manifest, one commit."""
        staged_path = staging_path(caller, agent_id)
        staged, asked = self._staged_rows(caller, agent_id)
        also: dict[str, bytes | None] = {staged_path: None}
        if asked:  # a staged forget: tombstoned like one the operator made
            also[FORGOTTEN] = forgetting.format_tombstones(
                {*self.tombstones(), *map(forgetting.tombstone, asked)}
            )
        return self._writer.write(
            agent_path(agent_id),
            agent_id,
            "promote",
            writer(provenance, self.machine),
            changes.promoting(clean(staged) if clean else staged, forgotten=asked),
            None,
            also=also,
            extra={"Stager": caller},
            force=True,
        )

    def promotion(
        self, caller: str, agent_id: str, clean: Clean = None
    ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """The live manifest and what ``promote`` would make of it (nothing is written): the
        staged write's review shows exactly the rows promotion merges."""
        staged, asked = self._staged_rows(caller, agent_id)
        live: dict[str, Any] | None = None
        with contextlib.suppress(NotFoundError):
            live = dict(self.read(agent_id).data)
        compute = changes.promoting(clean(staged) if clean else staged, forgotten=asked)
        return live, compute(live)[0]

    def _staged_rows(self, caller: str, agent_id: str) -> tuple[dict[str, Any], list[str]]:
        """A staged write without its forget request, and the names that request asks for."""
        path = staging_path(caller, agent_id)
        staged = self._manifests.data(path, None, f"{caller}/{agent_id} in staging")
        asked = [n for n in staged.get(forgetting.FORGET_REQUEST) or [] if isinstance(n, str)]
        return {k: v for k, v in staged.items() if k != forgetting.FORGET_REQUEST}, asked

    def reject(self, caller: str, agent_id: str, provenance: Provenance | None = None) -> str:
        """Drop a staged write (kept in history); return the commit."""
        path = staging_path(caller, agent_id)
        self._manifests.data(path, None, f"{caller}/{agent_id} in staging")
        who = writer(provenance, self.machine)
        subject = f"reject staged write of {caller}"
        return self._writer.delete(path, agent_id, "reject", subject, who, {"Stager": caller})

    # -- crash recovery ------------------------------------------------------------------

    def reconcile(self) -> list[str]:
        """Bring the library back to a clean state after a crash; return what was done."""
        with self._lock.held(reconciling=True):
            return self._lock.recovery.run()

    def fsck(self) -> tuple[bool, str]:
        return self.repo.fsck()

    @contextlib.contextmanager
    def write_lock(self) -> Iterator[None]:
        """The library's write lock, for an operation over the whole repository (``purge``)."""
        with self._lock.held():
            yield

    def object_store(self) -> StoreState:
        """Loose objects (estimated), packs and when last packed (``git.packing``): a few stats."""
        return self.repo.object_store()


def _finish(writes: Writer) -> None:
    """Refresh git's index if writes left it behind, and stop the repository's git process."""
    writes.refresh_index()
    writes.repo.close()
