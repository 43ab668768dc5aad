"""The library: a git repository of manifests, and the only code that writes into it.

Layout (DESIGN section 4)::

    <library>/
      agents/<agent_id>.l5.yaml              live manifests
      staging/<caller>/<agent_id>.l5.yaml    quarantined writes, never served until promoted
      .bourdon/                              local and git-ignored: lock, caches, recovered files

Every write follows one protocol: take the library lock (cross-process) -> read the current
manifest at HEAD -> check ``expected_digest`` -> compute the new manifest -> answer ``no_op``
if its digest is unchanged -> validate -> record the intent -> write the file atomically ->
commit with provenance trailers (the branch moves by compare-and-swap) -> clear the intent.
A write is acknowledged only once its commit exists. Opening the library after a crash
reconciles: stale locks and temp files go, and a file whose write was never committed is moved
to ``.bourdon/recovered/`` and restored from HEAD, so nothing is lost and the working files equal
HEAD again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import socket
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import filelock

from bourdon.digest import RowCache, digest, digest8, parse_digest
from bourdon.errors import (
    BusyError,
    ConflictError,
    InputError,
    LibraryError,
    ManifestError,
    NotFoundError,
    SchemaError,
)
from bourdon.formats import reading, schema, yamlio
from bourdon.merge.threeway import merge3
from bourdon.merge.twoway import MergeStats, RowChanges, compare, merge, regenerate
from bourdon.model import (
    AGENT_TYPES,
    AGENTS_DIR,
    LOCAL_DIR,
    ROW_SECTIONS,
    STAGING_DIR,
    SUFFIX,
    Manifest,
    check_agent_id,
)
from bourdon.store import adopt
from bourdon.store.durable import atomic_write, move
from bourdon.store.git.fastimport import ImportedCommit
from bourdon.store.git.repo import GitRepo, LogEntry
from bourdon.store.manifestcache import ManifestCache, content_id, remember_parsed

AGENTS: Final = AGENTS_DIR
STAGING: Final = STAGING_DIR
LOCAL: Final = LOCAL_DIR
OPERATOR: Final = "operator"

TRAILERS: Final = (
    "Op",
    "Agent",
    "Caller",
    "Session",
    "Transcript",
    "Digest",
    "Stager",
    "Restores",
    "Remote",
    "Theirs",
    "Ours-Digest",
    "Theirs-Digest",
    "Machine",
    "Reference-Digest",
    "Reference-Version",
)
REFERENCE_STAGING_NOTES: Final = "staging"
ADOPTING: Final = f"{LOCAL_DIR}/adopting.json"  # an adoption of a reference library under way
_VERSION = re.compile(r"[0-9a-f]{4,64}")
_CACHE_SIZE: Final = 256


@dataclass(frozen=True)
class Provenance:
    """Who asks for a write, recorded in the commit's trailers."""

    caller: str = OPERATOR
    session: str | None = None
    transcript: str | None = None
    machine: str = ""  # empty: the machine of the library that records the write

    def source(self) -> dict[str, str]:
        """The ``source`` stamped on the rows this caller commits."""
        return {"kind": "commit", "name": self.caller, "machine": self.machine}


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
            **({"reference_digest": self.reference_digest} if self.reference_digest else {}),
        }


@dataclass(frozen=True)
class StagedWrite:
    """A quarantined write waiting in ``staging/<caller>/<agent>.l5.yaml``."""

    caller: str
    agent_id: str
    path: str
    rows: int
    staged_at: str | None
    digest: str


@dataclass(frozen=True)
class Explanation:
    """Which write produced a digest, and what it changed."""

    version: Version
    changes: RowChanges
    again_in: list[str] = field(default_factory=list)  # later versions with the same digest


class Library:
    """A library directory. Open one with ``Library.open(path)`` or create it with ``init``."""

    def __init__(
        self, root: Path, repo: GitRepo, lock_timeout: float = 30.0, machine: str | None = None
    ) -> None:
        self.root = root
        self.repo = repo
        self.lock_timeout = lock_timeout
        # How rows' ``source`` and commits name this machine (the host name unless told).
        self.machine = machine or socket.gethostname()
        self._local = root / LOCAL
        self._lock = filelock.FileLock(str(self._local / "write.lock"), thread_local=False)
        self._thread_lock = threading.RLock()
        # Parsed manifests by blob id, with their digests: a write reads the current manifest,
        # and re-parsing 1,000 rows of YAML each time would cost more than the write.
        self._parsed: OrderedDict[str, tuple[dict[str, Any], str]] = OrderedDict()
        self._sizes: dict[tuple[str, str], int | None] = {}  # (commit, path) -> bytes
        # Blobs of ``_parsed`` holding rows that are not served (schema.read_manifest): a write
        # of such a manifest must not hand the index its parsed form as if every row were good.
        self._unserved: set[str] = set()
        # What crash recovery did since this object was opened, for the surfaces to report.
        self.recovered: list[str] = []
        self._row_text: yamlio.RowCache = {}
        self._row_json: RowCache = {}
        self._disk_cache = ManifestCache(self._local / "cache")
        # git's own index only serves people who run 'git status' in the library. Refreshing
        # it costs a git process, so it happens once when this object is closed or collected
        # (or the process exits), not after every write.
        self._index = _IndexRefresh(repo)
        weakref.finalize(self, self._index.run)

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
            _resume_adoption(root)
        if (root / ".git").exists() and (root / AGENTS).is_dir():
            return cls.open(root, machine=machine)
        reference = None
        if adopt.is_reference_library(root):
            reference = adoption if adoption is not None else adopt.plan(root)
        if reference is None and root.exists() and any(p.name != LOCAL for p in root.iterdir()):
            raise LibraryError(
                f"{root} is not empty and is not a library; pick an empty or new folder"
            )
        if reference is not None:
            # Until the branch holds the whole history, an interrupted adoption starts again.
            atomic_write(root / ADOPTING, json.dumps({"state": "replaying"}).encode("utf-8"))
        for folder in (root / AGENTS, root / STAGING, root / LOCAL):
            folder.mkdir(parents=True, exist_ok=True)
        repo = GitRepo.init(root)
        library = cls(root, repo, machine=machine)
        files = {
            ".gitignore": b"# This machine's lock, caches and recovered files.\n.bourdon/\n",
            f"{AGENTS}/.gitkeep": b"",
            f"{STAGING}/.gitkeep": b"",
        }
        with library._locked():
            for name, data in files.items():
                atomic_write(root / name, data)
            repo.commit_files(
                files,
                _message("init", "library", "create the library", Provenance(), None),
                parent=None,
                author=_identity(OPERATOR),
                committer=_identity("bourdon"),
                # An adopted history starts when the reference's did, so git log reads in order.
                when=int(reference.states[0].when) if reference and reference.states else None,
            )
            if reference is not None:
                library._adopt(reference, progress or (lambda _: None))
            repo.sync_index()
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
        root = Path(path).expanduser().absolute()
        if (root / ADOPTING).exists() or adopt.is_reference_library(root):
            raise LibraryError(
                f"{root} is a library of the reference Bourdon (no git history yet); adopt it "
                f"with 'bourdon init {root}' (add --dry-run to see what it would do first)"
            )
        if not (root / AGENTS).is_dir() or not (root / ".git").exists():
            raise LibraryError(
                f"{root} is not a bourdon library; create one with 'bourdon init {root}'"
            )
        (root / LOCAL).mkdir(exist_ok=True)
        library = cls(root, GitRepo(root), lock_timeout, machine)
        if library._needs_reconcile():
            library.recovered += library.reconcile()
        return library

    def close(self) -> None:
        self._index.run()
        self.repo.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _adopt(self, plan: adopt.Adoption, progress: Callable[[str], None]) -> None:
        """Replay a reference library's states as commits in one import, then move its own
        files under ``.bourdon/imported/`` (called by ``init``, under the library lock)."""
        total = len(plan.states)

        def commits() -> Iterator[ImportedCommit]:
            for done, state in enumerate(plan.states, start=1):
                who = Provenance(state.caller, state.session, state.transcript, self.machine)
                extra = {"Reference-Digest": state.reference_digest}
                if state.reference_version:
                    extra["Reference-Version"] = state.reference_version
                subject = f"{state.op} {state.agent_id}: adopted from {state.source}"
                message = _message(state.op, state.agent_id, subject, who, state.digest, extra)
                yield ImportedCommit(
                    {agent_path(state.agent_id): state.raw},
                    message,
                    _identity(state.caller),
                    _identity("bourdon"),
                    int(state.when),
                )
                if done % 100 == 0 or done == total:
                    progress(f"replayed {done}/{total} versions")
            # What the reference left live but our history would not: staged writes, each
            # at its file's time, and agents whose live manifest is gone.
            for name in plan.staged:
                caller = name.split("/")[1]
                who = Provenance(caller, machine=self.machine)
                message = _message(
                    "stage",
                    name.split("/")[2][: -len(SUFFIX)],
                    f"adopt staged write {name}",
                    who,
                    None,
                )
                when = int((self.root / name).stat().st_mtime)
                raw = (self.root / name).read_bytes()
                yield ImportedCommit(
                    {name: raw}, message, _identity(caller), _identity("bourdon"), when
                )
            gone = {
                agent_path(a): None
                for a in plan.agents()
                if not (self.root / agent_path(a)).exists()
            }
            if gone:
                message = _message(
                    "import",
                    "library",
                    "agents without a live manifest",
                    Provenance(machine=self.machine),
                    None,
                )
                yield ImportedCommit(
                    gone, message, _identity(OPERATOR), _identity("bourdon"), int(time.time())
                )

        self.repo.import_commits(commits(), parent=self.head())
        record = {"state": "moving", "moved": plan.moved}
        atomic_write(self.root / ADOPTING, json.dumps(record).encode("utf-8"))
        _move_imported(self.root, plan.moved)
        if plan.moved:
            progress(f"moved {len(plan.moved)} reference files under {adopt.IMPORTED}/")

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
        return Manifest(self._read_data(agent_path(agent_id), version, agent_id))

    def read_bytes(self, agent_id: str, version: str | None = None) -> bytes:
        """The exact bytes of the agent's manifest at HEAD or at ``version``."""
        path = agent_path(agent_id)
        raw = self._blob(path, self._resolve(version) if version else self.head())
        if raw is None:
            raise self._missing(agent_id, version)
        return raw[1]

    def sizes(self, agent_id: str, versions: list[str]) -> list[int | None]:
        """The manifest's size in bytes at each version (``None`` where it had none).

        A commit never changes, so each size is asked of git once per library object.
        """
        path = agent_path(agent_id)
        wanted = [v for v in dict.fromkeys(versions) if (v, path) not in self._sizes]
        for version, size in zip(
            wanted, self.repo.sizes([f"{v}:{path}" for v in wanted]), strict=True
        ):
            self._sizes[(version, path)] = size
        return [self._sizes[(v, path)] for v in versions]

    def read_problems(
        self, agent_id: str, version: str | None = None
    ) -> tuple[reading.ReadProblem, ...]:
        """The rows of the agent's manifest that are kept in the file but not served."""
        path = agent_path(agent_id)
        found = self._blob(path, self._resolve(version) if version else self.head())
        if found is None:
            raise self._missing(agent_id, version)
        return self._disk_cache.read(found[1], what=path).problems

    def current_digest(self, agent_id: str) -> str | None:
        """The digest of the live manifest, ``None`` when the agent has none yet (remembered
        with the parsed blob, so asking again costs no canonical JSON of 1,000 rows)."""
        return self.digest_at(self.head(), agent_id)

    def history(self, agent_id: str, limit: int | None = 50) -> list[Version]:
        """Every state of the agent's memory, newest first."""
        path = agent_path(agent_id)
        entries = self._log(path)
        if limit is not None:
            entries = entries[: max(0, limit)]
        if not entries and agent_id not in self.agent_ids():
            raise NotFoundError(f"no agent {agent_id!r} in this library; see 'bourdon agents'")
        return [self._version(entry, path) for entry in entries]

    def explain(self, agent_id: str, wanted: str, level: int | None = None) -> Explanation:
        """Find the write that produced the digest (full or at least 8 hex) and what it changed."""
        hexpart = parse_digest(wanted)
        path = agent_path(agent_id)
        candidates = self.repo.log(path, None, grep=f"Bourdon-Digest: sha256:{hexpart}")
        found = [v for v in (self._version(e, path) for e in candidates) if _has(v, hexpart)]
        if not found:  # a state adopted from the reference, named by its digest of the bytes
            candidates = self.repo.log(path, None, grep=f"Bourdon-Reference-Digest: {hexpart}")
            found = [
                v
                for v in (self._version(e, path) for e in candidates)
                if (v.reference_digest or "").startswith(hexpart)
            ]
        if not found:  # commits made outside bourdon carry no trailer: look at the content
            found = [v for v in self.history(agent_id, limit=500) if _has(v, hexpart)]
        # The same state can be produced again (a rollback restores it): the first write
        # that produced it is the one that explains it; the later ones are listed too.
        match = found[-1] if found else None
        if match is None:
            raise NotFoundError(
                f"no version of {agent_id!r} has digest {wanted}; see 'bourdon history {agent_id}'"
            )
        after = self._read_data(path, match.version_id, agent_id)
        before = self._parent_data(path, match.version_id)
        return Explanation(match, compare(before, after, level), [v.version_id for v in found[:-1]])

    def diff(
        self, agent_id: str, old: str, new: str | None = None, level: int | None = None
    ) -> RowChanges:
        """Rows added, removed and changed between two versions (``new``: HEAD).

        With ``level``, rows above that visibility are left out.
        """
        path = agent_path(agent_id)
        before = self._read_data(path, old, agent_id)
        after = self._read_data(path, new, agent_id)
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
    ) -> WriteResult:
        """Merge (or replace) ``change`` into the agent's live manifest, as one commit.

        ``change`` has the manifest's shape; ``agent.type`` is needed when the agent is new.
        Raises ``ConflictError`` when ``expected_digest`` is given and is no longer current.
        """
        check_agent_id(agent_id)
        if mode not in ("merge", "replace"):
            raise InputError(f"mode {mode!r} is not one of merge, replace")
        _check_change(agent_id, change)
        who = self._who(provenance)

        def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
            if current is None:
                _require_type(agent_id, change)
            return merge(current, _with_id(change, agent_id), mode=mode, source=who.source())

        return self._write(
            agent_path(agent_id), agent_id, op or mode, who, compute, expected_digest
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
        _check_change(agent_id, fresh)
        who = self._who(provenance, f"reader:{reader}")
        source = {"kind": "reader", "name": reader, "machine": who.machine}

        def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
            if current is None:
                _require_type(agent_id, fresh)
            return regenerate(current, _with_id(fresh, agent_id), source)

        return self._write(agent_path(agent_id), agent_id, "export", who, compute, None)

    def import_manifest(
        self, raw: bytes, *, what: str = "manifest", provenance: Provenance | None = None
    ) -> WriteResult:
        """Take a whole manifest file into the library (its agent id names the target).

        Read as the index reads: whatever the Bourdon L5 schema accepts is taken as written, and
        a row that does not validate is kept in the file, unserved and reported."""
        data = reading.read_manifest(raw, what=what).data
        agent_id = Manifest(data).agent_id
        check_agent_id(agent_id)
        _check_change(agent_id, data)
        who = self._who(provenance)

        def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
            return merge(current, data, mode="replace", source=who.source())

        return self._write(
            agent_path(agent_id), agent_id, "import", who, compute, None, vetted=data
        )

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
        commit = self._resolve(version)
        found = self._blob(path, commit)
        if found is None:
            raise NotFoundError(f"{agent_id!r} had no manifest at version {version}")
        restored = self._parse(found[0], found[1], path)

        def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
            return restored, _stats(compare(current, restored))

        return self._write(
            path,
            agent_id,
            "rollback",
            self._who(provenance),
            compute,
            expected_digest,
            raw=found[1],
            extra={"Restores": commit},
        )

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
    ) -> WriteResult:
        """Integrate a remote's version of an agent into the live manifest, as one commit.

        Three-way against ``base`` (the state both sides last agreed on; ``syncmerge``), so
        rows changed on either side survive. The commit's second parent is the remote's
        commit: history keeps both originals. Op ``sync``; trailers name both digests.
        """
        check_agent_id(agent_id)
        extra = {
            "Remote": remote,
            "Theirs": theirs_commit,
            "Theirs-Digest": digest(theirs, self._row_json),
        }

        def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
            if current is None:
                return dict(theirs), _stats(compare(None, theirs))
            extra["Ours-Digest"] = digest(current, self._row_json)
            merged = merge3(base, current, theirs)
            return merged, _stats(compare(current, merged))

        return self._write(
            agent_path(agent_id),
            agent_id,
            "sync",
            provenance,
            compute,
            None,
            extra=extra,
            merged=theirs_commit,
            vetted=theirs,  # validated when it was read from the remote's commit
        )

    def manifest_at(self, commit: str | None, agent_id: str) -> dict[str, Any] | None:
        """The agent's manifest in any commit of this repository (a fetched one too).

        Parsed and validated; raises ``ManifestError`` when it is not a valid manifest.
        """
        found = self._manifest_at(agent_path(agent_id), commit)
        return found[1] if found else None

    def digest_at(self, commit: str | None, agent_id: str) -> str | None:
        """The digest of the agent's manifest in ``commit`` (``None`` if it had none)."""
        found = self._manifest_at(agent_path(agent_id), commit)
        return self._parsed[found[0]][1] if found else None

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
        who = Provenance(caller=f"sync:{machine}", machine=machine)
        message = _message("publish", "library", subject, who, None, {"Machine": machine})
        commit, _ = self.repo.write_commit(
            changes,
            message,
            parent=parent,
            author=_identity(who.caller),
            committer=_identity("bourdon"),
            merged=merged,
        )
        return commit

    # -- staging -------------------------------------------------------------------------

    def stage(
        self, caller: str, agent_id: str, change: Mapping[str, Any], provenance: Provenance
    ) -> WriteResult:
        """Record a quarantined caller's write under ``staging/<caller>/``; it is not served."""
        check_agent_id(caller, "caller id")
        check_agent_id(agent_id)
        _check_change(agent_id, change)
        provenance = dataclasses.replace(self._who(provenance), caller=caller)
        live_type = None
        with contextlib.suppress(NotFoundError):
            live_type = self.read(agent_id).agent_type

        def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
            proposed = _with_id(change, agent_id)
            if current is None and live_type and not _given_type(change):
                proposed["agent"] = {**proposed["agent"], "type": live_type}
            elif current is None:
                _require_type(agent_id, change)
            return merge(current, proposed, source=provenance.source())

        result = self._write(
            staging_path(caller, agent_id), agent_id, "stage", provenance, compute, None
        )
        return dataclasses.replace(result, staged=True)

    def staged(self) -> list[StagedWrite]:
        """Every write waiting in staging, oldest first."""
        head = self.head()
        if head is None:
            return []
        out = []
        for path in self.repo.list_files(head, STAGING):
            parts = path.split("/")
            if len(parts) != 3 or not parts[2].endswith(SUFFIX):
                continue
            found = self._blob(path, head)
            if found is None:
                continue
            data = self._parse(found[0], found[1], path)
            last = self.repo.log(path, 1)
            out.append(
                StagedWrite(
                    caller=parts[1],
                    agent_id=parts[2][: -len(SUFFIX)],
                    path=path,
                    rows=sum(len(data.get(s) or []) for s in ROW_SECTIONS),
                    staged_at=_iso(last[0].time) if last else None,
                    digest=digest(data),
                )
            )
        return sorted(out, key=lambda s: (s.staged_at or "", s.path))

    def read_staged(self, caller: str, agent_id: str) -> Manifest:
        path = staging_path(caller, agent_id)
        return Manifest(self._read_data(path, None, f"{caller}/{agent_id} in staging"))

    def promote(
        self, caller: str, agent_id: str, provenance: Provenance | None = None
    ) -> WriteResult:
        """Merge a staged write into the live manifest and clear it, in one commit."""
        staged_path = staging_path(caller, agent_id)
        staged = self._read_data(staged_path, None, f"{caller}/{agent_id} in staging")
        # A write the reference staged carries its review notes (taint) under 'staging:';
        # like the reference, promotion leaves them out of the live manifest.
        staged = {k: v for k, v in staged.items() if k != REFERENCE_STAGING_NOTES}
        who = self._who(provenance)

        def compute(current: dict[str, Any] | None) -> tuple[dict[str, Any], MergeStats]:
            return merge(current, staged, mode="merge")

        return self._write(
            agent_path(agent_id),
            agent_id,
            "promote",
            who,
            compute,
            None,
            also={staged_path: None},
            extra={"Stager": caller},
            force=True,
        )

    def reject(self, caller: str, agent_id: str, provenance: Provenance | None = None) -> str:
        """Drop a staged write (kept in history); return the commit."""
        path = staging_path(caller, agent_id)
        self._read_data(path, None, f"{caller}/{agent_id} in staging")
        who = self._who(provenance)
        with self._locked():
            head = self.head()
            message = _message(
                "reject",
                agent_id,
                f"reject staged write of {caller}",
                who,
                None,
                {"Stager": caller},
            )
            self._intent({path: None}, head)
            with contextlib.suppress(FileNotFoundError):
                (self.root / path).unlink()
            commit = self._commit({path: None}, message, head, who)
            return commit

    # -- crash recovery ------------------------------------------------------------------

    def reconcile(self) -> list[str]:
        """Bring the library back to a clean state after a crash; return what was done."""
        done: list[str] = []
        with self._locked(reconciling=True):
            for stale in self._stale_git_locks(wait=True):
                with contextlib.suppress(FileNotFoundError):
                    stale.unlink()
                    done.append(f"removed stale {stale.relative_to(self.root)}")
            for tmp in self._leftover_temp_files():
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
                    done.append(f"removed temp file {tmp.relative_to(self.root)}")
            intent = self._local / "intent.json"
            if intent.exists():
                try:
                    paths = json.loads(intent.read_text(encoding="utf-8"))["paths"]
                except (ValueError, KeyError, TypeError):
                    paths = []
                head = self.head()
                for path in paths:
                    done += self._restore(path, head)
                intent.unlink()
                self.repo.sync_index()
        return done

    def fsck(self) -> tuple[bool, str]:
        return self.repo.fsck()

    # -- internals -----------------------------------------------------------------------

    def _who(self, provenance: Provenance | None, caller: str = OPERATOR) -> Provenance:
        """The writer, named on this library's machine unless it names its own."""
        who = provenance or Provenance(caller=caller)
        return who if who.machine else dataclasses.replace(who, machine=self.machine)

    def _log(self, path: str) -> list[LogEntry]:
        """Every commit that touched ``path``, newest first, from a local cache kept in step.

        ``git log -- path`` walks the whole history to find a file's versions (90 ms for 50
        versions among 2,000 commits); the cache under ``.bourdon/history/`` only asks git for
        the commits made since it was last brought up to date, by any process.
        """
        head = self.head()
        if head is None:
            return []
        cache = self._local / "history" / (path.replace("/", "--") + ".json")
        known: list[LogEntry] = []
        since = None
        try:
            data = json.loads(cache.read_text(encoding="utf-8"))
            if data.get("head") == head:
                return [LogEntry(c, tuple(p), t, m) for c, p, t, m in data["entries"]]
            if self.repo.is_ancestor(data["head"], head):
                since = data["head"]
                known = [LogEntry(c, tuple(p), t, m) for c, p, t, m in data["entries"]]
        except (OSError, ValueError, KeyError, TypeError):
            pass
        entries = self.repo.log(path, None, since=since) + known
        record = {
            "head": head,
            "entries": [[e.commit, list(e.parents), e.time, e.message] for e in entries],
        }
        with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
            atomic_write(cache, json.dumps(record).encode("utf-8"), sync=False)
        return entries

    def _needs_reconcile(self) -> bool:
        if (self._local / "intent.json").exists():
            return True
        return any(True for _ in self.repo.stale_locks()) or any(
            True for _ in self._leftover_temp_files()
        )

    def _stale_git_locks(self, wait: bool) -> list[Path]:
        """git lock files left by a killed process.

        Only bourdon's own git commands run under the library lock, so a person's ``git
        status`` may hold ``index.lock`` for a moment: a lock younger than STALE_AFTER seconds
        is given that long to go away before it counts as stale.
        """
        locks = list(self.repo.stale_locks())
        if locks and wait:
            youngest = max(_age(p) for p in locks)
            if youngest < STALE_AFTER:
                time.sleep(STALE_AFTER - youngest)
            locks = [p for p in locks if p.exists()]
        return locks

    def _leftover_temp_files(self) -> Iterator[Path]:
        """Temp files of writes that never finished: their writer is no longer running."""
        for pattern in (
            f"{AGENTS}/.*.tmp",
            f"{STAGING}/**/.*.tmp",
            f"{LOCAL}/.*.tmp",
            f"{LOCAL}/cache/**/.*.tmp",
            f"{LOCAL}/history/.*.tmp",
        ):
            for tmp in self.root.glob(pattern):
                if not pid_alive(_temp_pid(tmp.name)):
                    yield tmp

    def _restore(self, path: str, head: str | None) -> list[str]:
        if "/" not in path or path.startswith(("/", ".")) or ".." in path.split("/"):
            return []
        target = self.root / path
        committed = self._blob(path, head) if head else None
        on_disk = target.read_bytes() if target.exists() else None
        want = committed[1] if committed else None
        if on_disk == want:
            return []
        if on_disk is not None:
            aside = self._local / "recovered" / f"{int(time.time())}-{path.replace('/', '--')}"
            move(target, aside)
        if want is not None:
            atomic_write(target, want)
        return [f"restored {path} from HEAD (the uncommitted file is in {LOCAL}/recovered/)"]

    @contextlib.contextmanager
    def _locked(self, reconciling: bool = False) -> Iterator[None]:
        with self._thread_lock:
            try:
                # Poll often: filelock retries a busy lock on an interval, and a long one lets
                # a writer that just released the lock take it straight back.
                self._lock.acquire(timeout=self.lock_timeout, poll_interval=0.002)
            except filelock.Timeout:
                holder = _read_pid(self._local / "write.pid")
                raise BusyError(
                    f"the library is busy: another bourdon process{holder} has held the write "
                    f"lock for over {self.lock_timeout:g} s; try again"
                ) from None
            try:
                (self._local / "write.pid").write_text(str(os.getpid()), encoding="ascii")
                if not reconciling and self._needs_reconcile():
                    self.recovered += self.reconcile()
                yield
            finally:
                with contextlib.suppress(OSError):
                    (self._local / "write.pid").unlink()
                self._lock.release()

    def _write(
        self,
        path: str,
        agent_id: str,
        op: str,
        who: Provenance,
        compute: Callable[[dict[str, Any] | None], tuple[dict[str, Any], MergeStats]],
        expected_digest: str | None,
        *,
        raw: bytes | None = None,
        also: Mapping[str, bytes | None] | None = None,
        extra: Mapping[str, str] | None = None,
        force: bool = False,
        merged: str | None = None,
        vetted: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        expected = parse_digest(expected_digest, "expected_digest") if expected_digest else None
        with self._locked():
            head = self.head()
            self._adopt_hand_edit(path, head, who)
            head = self.head()
            found = self._manifest_at(path, head)
            current = found[1] if found else None
            before = self._parsed[found[0]][1] if found else None
            if expected is not None and (
                before is None or not before.removeprefix("sha256:").startswith(expected)
            ):
                raise ConflictError(
                    f"{agent_id!r} changed since you read it: expected_digest {expected_digest} "
                    f"is stale; the current digest is {before}. Re-read and retry",
                    current_digest=before,
                )
            data, stats = compute(current)
            if len(self._row_text) > 200_000:
                self._row_text.clear()
                self._row_json.clear()
            after = digest(data, self._row_json)
            if current is not None and after == before and not force:
                return WriteResult(
                    agent_id,
                    op,
                    path,
                    after,
                    before,
                    None,
                    current.get("last_updated"),
                    stats,
                    _totals(current),
                )
            unchanged = self._blob(path, head) if current is not None and after == before else None
            if raw is None and unchanged is not None and current is not None:
                # A forced write that changes nothing (a promote of rows already live) keeps
                # the file's bytes: it must not make a new version of the agent.
                raw, data = unchanged[1], current
            if raw is None:
                data = {**data, "last_updated": _now()}
                schema.validate(data, trusted=current, also=vetted)
                raw = yamlio.dump(data, cache=self._row_text)
            # Rows kept unserved on disk stay in what is written (and a manifest from elsewhere,
            # ``vetted``, may hold some): then the index must read the bytes again.
            blob = self.repo.blob_id(raw)
            unserved = (
                vetted is not None
                or (found is not None and found[0] in self._unserved)
                or blob in self._unserved
            )
            changes = {path: raw, **(also or {})}
            message = _message(op, agent_id, _summary(op, agent_id, stats), who, after, extra)
            self._intent(changes, head)
            for name, content in changes.items():
                if content is None:
                    with contextlib.suppress(FileNotFoundError):
                        (self.root / name).unlink()
                else:
                    atomic_write(self.root / name, content)
            commit = self._commit(changes, message, head, who, merged)
            self._remember(blob, data, after)
            if unserved:
                self._unserved.add(blob)
            else:
                # The server's index reloads this file next: hand it the parsed form in memory,
                # so it does not parse and validate again what was just validated.
                remember_parsed(content_id(raw), data)
            return WriteResult(
                agent_id,
                op,
                path,
                after,
                before,
                commit,
                data.get("last_updated"),
                stats,
                _totals(data),
                created=current is None,
                previous_version=head,
            )

    def _commit(
        self,
        changes: Mapping[str, bytes | None],
        message: str,
        head: str | None,
        who: Provenance,
        merged: str | None = None,
    ) -> str:
        commit = self.repo.commit_files(
            changes,
            message,
            parent=head,
            author=_identity(who.caller),
            committer=_identity("bourdon"),
            merged=merged,
        )
        (self._local / "intent.json").unlink()
        self._index.stale = True
        return commit

    def _intent(self, changes: Mapping[str, bytes | None], head: str | None) -> None:
        record = json.dumps({"paths": sorted(changes), "head": head, "pid": os.getpid()})
        atomic_write(self._local / "intent.json", record.encode("utf-8"))

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
            data = self._parse(blob, on_disk, path)
            committed = self._manifest_at(path, head)
            brought = reading.new_problems(
                self._disk_cache.read(on_disk, what=path), committed[1] if committed else None
            )
            if brought:
                raise SchemaError(brought[0].message(path))
        except ManifestError as exc:
            raise LibraryError(
                f"{path} was edited by hand and does not validate ({exc.message}); fix it, or "
                f"run 'git -C {self.root} checkout -- {path}' to drop the edit"
            ) from None
        adopter = Provenance(caller="filesystem", machine=who.machine)
        message = _message(
            "adopt",
            data["agent"]["id"],
            f"adopt hand edit of {path}",
            adopter,
            digest(data),
        )
        self._intent({path: on_disk}, head)
        self._commit({path: on_disk}, message, head, adopter)

    def _manifest_at(self, path: str, commit: str | None) -> tuple[str, dict[str, Any]] | None:
        """(blob id, parsed manifest) of ``path`` at ``commit``; reads the blob only if new."""
        if commit is None:
            return None
        blob_id = self.repo.object_id(commit, path)
        if blob_id is None:
            return None
        cached = self._parsed.get(blob_id)
        if cached is not None:
            self._parsed.move_to_end(blob_id)
            return blob_id, cached[0]
        found = self._blob(path, commit)
        return (found[0], self._parse(found[0], found[1], path)) if found else None

    def _blob(self, path: str, commit: str | None) -> tuple[str, bytes] | None:
        if commit is None:
            return None
        found = self.repo.read(f"{commit}:{path}")
        if not found or found[1] != "blob":
            return None
        return found[0], found[2]

    def _parse(self, blob_id: str, raw: bytes, path: str) -> dict[str, Any]:
        """Parse and validate a manifest blob once; later reads of the same blob are free."""
        cached = self._parsed.get(blob_id)
        if cached is not None:
            self._parsed.move_to_end(blob_id)
            return cached[0]
        reading = self._disk_cache.read(raw, what=path)
        data = reading.data
        self._remember(blob_id, data, digest(data, self._row_json))
        if reading.problems:
            self._unserved.add(blob_id)
        return data

    def _remember(self, blob_id: str, data: dict[str, Any], data_digest: str) -> None:
        self._parsed[blob_id] = (data, data_digest)
        self._parsed.move_to_end(blob_id)
        while len(self._parsed) > _CACHE_SIZE:
            self._unserved.discard(self._parsed.popitem(last=False)[0])

    def _read_data(self, path: str, version: str | None, what: str) -> dict[str, Any]:
        commit = self._resolve(version) if version else self.head()
        found = self._manifest_at(path, commit)
        if found is None:
            raise self._missing(what, version)
        return found[1]

    def _parent_data(self, path: str, commit: str) -> dict[str, Any] | None:
        found = self._blob(path, f"{commit}~1") if self.repo.read(f"{commit}~1") else None
        return self._parse(found[0], found[1], path) if found else None

    def _resolve(self, version: str) -> str:
        wanted = version.strip().lower()
        if not _VERSION.fullmatch(wanted):
            raise InputError(
                f"version {version!r} is not a version id; pass a commit id from 'bourdon history'"
            )
        found = self.repo.read(f"{wanted}^{{commit}}")
        if not found:
            raise NotFoundError(f"no version {version} in this library")
        return found[0]

    def _missing(self, what: str, version: str | None) -> NotFoundError:
        if version:
            return NotFoundError(f"{what!r} had no manifest at version {version}")
        return NotFoundError(f"no agent {what!r} in this library; see 'bourdon agents'")

    def _version(self, entry: LogEntry, path: str) -> Version:
        trailers = _trailers(entry.message)
        found_digest = trailers.get("Digest")
        if not found_digest:
            blob = self._blob(path, entry.commit)
            with contextlib.suppress(ManifestError):
                found_digest = digest(self._parse(blob[0], blob[1], path)) if blob else None
        return Version(
            version_id=entry.commit,
            digest=found_digest,
            op=trailers.get("Op", "external"),
            caller=trailers.get("Caller"),
            session=trailers.get("Session"),
            transcript=trailers.get("Transcript"),
            time=_iso(entry.time),
            subject=entry.message.splitlines()[0] if entry.message else "",
            stager=trailers.get("Stager"),
            restores=trailers.get("Restores"),
            remote=trailers.get("Remote"),
            theirs=trailers.get("Theirs"),
            ours_digest=trailers.get("Ours-Digest"),
            theirs_digest=trailers.get("Theirs-Digest"),
            reference_digest=trailers.get("Reference-Digest"),
        )


class _IndexRefresh:
    """Brings git's index in line with HEAD once, when writes have left it behind."""

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo
        self.stale = False

    def run(self) -> None:
        if self.stale:
            self.stale = False
            with contextlib.suppress(Exception):  # only 'git status' would notice
                self.repo.sync_index()
        self.repo.close()


STALE_AFTER: Final = 2.0


def _has(version: Version, hexpart: str) -> bool:
    return bool(version.digest) and str(version.digest).removeprefix("sha256:").startswith(hexpart)


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return STALE_AFTER


def _temp_pid(name: str) -> int | None:
    """The writer's process id in a temp name ``.<target>.<pid>.<thread>.tmp``."""
    parts = name.split(".")
    try:
        return int(parts[-3])
    except (IndexError, ValueError):
        return None


def pid_alive(pid: object) -> bool:
    """Is a process with this id running (ours included)? Anything but a positive int: no."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# -- helpers -----------------------------------------------------------------------------


def agent_path(agent_id: str) -> str:
    """Where an agent's live manifest lives, relative to the library."""
    return f"{AGENTS}/{check_agent_id(agent_id)}{SUFFIX}"


def staging_path(caller: str, agent_id: str) -> str:
    return f"{STAGING}/{check_agent_id(caller, 'caller id')}/{check_agent_id(agent_id)}{SUFFIX}"


def _check_change(agent_id: str, change: Mapping[str, Any]) -> None:
    if not isinstance(change, Mapping):
        raise InputError("a change must be a mapping in the manifest's shape")
    agent = change.get("agent")
    if agent is not None and not isinstance(agent, Mapping):
        raise InputError("'agent' must be a mapping with id and type")
    named = agent.get("id") if isinstance(agent, Mapping) else None
    if named is not None and named != agent_id:
        raise InputError(
            f"the change names agent {named!r} but is being committed to {agent_id!r}; "
            "commit it to its own agent or remove agent.id"
        )


def _given_type(change: Mapping[str, Any]) -> bool:
    agent = change.get("agent")
    return isinstance(agent, Mapping) and bool(agent.get("type"))


def _require_type(agent_id: str, change: Mapping[str, Any]) -> None:
    if not _given_type(change):
        raise InputError(
            f"{agent_id!r} is a new agent: give agent.type, one of {', '.join(AGENT_TYPES)}"
        )


def _with_id(change: Mapping[str, Any], agent_id: str) -> dict[str, Any]:
    agent = change.get("agent")
    return {**change, "agent": {**(agent if isinstance(agent, Mapping) else {}), "id": agent_id}}


def _totals(data: Mapping[str, Any]) -> dict[str, int]:
    counts = {s: len(data.get(s) or []) for s in ROW_SECTIONS}
    return {**counts, "total": sum(counts.values())}


def _stats(changes: RowChanges) -> MergeStats:
    stats = MergeStats()
    for section in ROW_SECTIONS:
        stats.added[section] = len(changes.added[section])
        stats.updated[section] = len(changes.changed[section])
        stats.removed[section] = len(changes.removed[section])
    return stats


def _summary(op: str, agent_id: str, stats: MergeStats) -> str:
    return (
        f"{op} {agent_id}: +{stats.total_added} ~{stats.total_updated} -{stats.total_removed} rows"
    )


def _message(
    op: str,
    agent_id: str,
    subject: str,
    who: Provenance,
    new_digest: str | None,
    extra: Mapping[str, str] | None = None,
) -> str:
    values = {
        "Op": op,
        "Agent": agent_id,
        "Caller": who.caller,
        "Session": who.session,
        "Transcript": who.transcript,
        "Digest": new_digest,
        **(extra or {}),
    }
    lines = [f"Bourdon-{k}: {_one_line(v)}" for k, v in values.items() if v]
    return f"{subject}\n\n" + "\n".join(lines) + "\n"


def _one_line(value: str) -> str:
    return " ".join(str(value).split())[:256]


def _trailers(message: str) -> dict[str, str]:
    found = {}
    for line in message.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key.startswith("Bourdon-") and key[8:] in TRAILERS:
            found[key[8:]] = value.strip()
    return found


def _identity(name: str) -> str:
    clean = re.sub(r"[<>\n\r]", "", name) or "bourdon"
    host = re.sub(r"[^A-Za-z0-9.-]", "", socket.gethostname()) or "localhost"
    return f"{clean} <{clean}@{host}>"


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _move_imported(root: Path, names: list[str]) -> None:
    """Move the reference's own files under ``.bourdon/imported/``, keeping their paths.

    Idempotent: a move an interrupted adoption already made is not made again.
    """
    for name in names:
        source, target = root / name, root / adopt.IMPORTED / name
        if source.exists() or source.is_symlink():
            # Not synced one by one: adopting.json lists them, and a resumed adoption redoes it.
            move(source, target, sync=False)


def _resume_adoption(root: Path) -> None:
    """Finish, or undo so it can start again, an adoption a crash interrupted."""
    try:
        record = json.loads((root / ADOPTING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    if isinstance(record, dict) and record.get("state") == "moving":
        _move_imported(root, [str(n) for n in record.get("moved") or []])
    else:
        # The history was never complete: the repository is this adoption's own, made
        # moments ago, and every reference file is still where it was.
        shutil.rmtree(root / ".git", ignore_errors=True)
        for name in (".gitignore", f"{AGENTS}/.gitkeep", f"{STAGING}/.gitkeep"):
            with contextlib.suppress(FileNotFoundError):
                (root / name).unlink()
    (root / ADOPTING).unlink()


def _read_pid(path: Path) -> str:
    try:
        return f" (pid {int(path.read_text(encoding='ascii'))})"
    except (OSError, ValueError):
        return ""
