"""The library's own health: one plain, JSON-ready report of what is there and what is wrong.

Two steps. ``collect`` (for ``bourdon status`` and ``bourdon doctor``) or ``LiveStatus`` (for the
MCP server's ``memory_status``) gathers the ``Facts``: agents and their row counts, readers,
staged writes, peers, remotes, members, the index, leftovers of interrupted writes. Then
``compose`` shapes them into the report for one ``Audience`` (what a caller may see) and adds the
problems ``bourdon.doctor`` finds in it.

``LiveStatus`` keeps the parts that cost a git process or a walk of many files, keyed on what
changes them (HEAD, the remote refs and git config, the state files' modification times), so a
call costs a few hundred microseconds when nothing moved; it never touches the network: peers
are reported as the federation last saw them.

Absent is reported as absent: ``None`` (JSON ``null``) where nothing is known (no export ever
ran, a peer not checked, a remote never synced, no member registry), never a zero or a ``false``
that would read as a measurement.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bourdon.access.trust import QUARANTINED, TRUSTED, MemberRegistry
from bourdon.digest import digest8
from bourdon.errors import BourdonError
from bourdon.federation.client import PeerList
from bourdon.formats.reading import ReadProblem, new_problems, read_manifest
from bourdon.model import (
    AGENTS_DIR,
    LOCAL_DIR,
    ROW_SECTIONS,
    SUFFIX,
    Manifest,
    Visibility,
    row_visibility,
)
from bourdon.replicate.state import remote_states, safe_url
from bourdon.status import doctor
from bourdon.status.readers import failure_logs, reader_report
from bourdon.store.git.process import run_git
from bourdon.store.recovery import pid_alive

if TYPE_CHECKING:
    from bourdon.access.trust import Member
    from bourdon.federation.client import Federation, Peer
    from bourdon.query.index import Index
    from bourdon.readers import Broken
    from bourdon.readers.base import Reader, ReaderContext
    from bourdon.replicate.state import RemoteState
    from bourdon.store.git.repo import GitRepo
    from bourdon.store.library import Library
    from bourdon.store.staging import StagedWrite

STALE_STAGING_DAYS: Final = 7  # a staged write waiting longer than this is flagged stale
STALE_STAGING_SECONDS: Final = STALE_STAGING_DAYS * 86_400
STALE_LOCK_SECONDS: Final = 2.0  # as recovery.STALE_AFTER: a younger git lock may be in use
READERS_TTL: Final = 5.0  # a reader's store can appear without any file of ours moving
LEFTOVERS_TTL: Final = 5.0  # a lock deep in .git/refs or .git/objects moves no folder we stat
LEVELS: Final = ("public", "team", "private")

Readers = tuple[Mapping[str, "Reader"], Iterable["Broken"]]


@dataclass(frozen=True)
class Audience:
    """Who the report is for. The local operator sees everything (the default).

    ``agents``: the namespaces it may read (``None``: all); ``private``: whether private rows are
    counted; ``detail``: paths, URLs, names of members, peers and remotes, plugin errors and
    leftovers (trusted callers); ``me``: its id, so it sees its own staged writes.
    """

    agents: frozenset[str] | None = None
    private: bool = True
    detail: bool = True
    me: str | None = None

    def may_read(self, agent_id: str) -> bool:
        return self.agents is None or agent_id in self.agents


OPERATOR: Final = Audience()


@dataclass
class Facts:
    """What was found, before it is shaped for an audience. ``None`` means not looked at."""

    root: Path
    exists: bool
    head: str | None = None
    branch: str | None = None
    agents: dict[str, dict[str, Any]] | None = None  # id -> raw_agent() or {"problem": ...}
    index: dict[str, Any] | None = None
    readers: dict[str, Any] = field(default_factory=dict)  # readerstatus.reader_report
    staged: list[StagedWrite] | str | None = None  # a str is why they could not be listed
    peers: list[Peer] | str = field(default_factory=list)
    peer_outcomes: Mapping[str, Mapping[str, Any]] | None = None
    remotes: list[RemoteState] | str | None = None
    members: list[Member] | str | None = None  # None: no federation.yaml
    leftovers: list[dict[str, Any]] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    hand_edits: list[dict[str, Any]] | None = None  # manifest_problems' "disk" entries
    checks: dict[str, Any] | None = None  # doctor's slow checks


# -- gathering, for the CLI --------------------------------------------------------------


def collect(
    library: Library | None,
    root: Path,
    home: Path,
    *,
    readers: Readers,
    ctx: ReaderContext,
    peer_outcomes: Mapping[str, Mapping[str, Any]] | None = None,
    recovered: Iterable[str] = (),
) -> Facts:
    """Everything ``bourdon status`` reports, read once (agents at HEAD, no index loaded).

    ``library`` is ``None`` when ``root`` is not a library; ``peer_outcomes`` holds a probe's
    results by peer name, ``None`` when peers were not checked.
    """
    facts = Facts(root=root, exists=library is not None, peer_outcomes=peer_outcomes)
    facts.readers = reader_report(readers[0], readers[1], ctx, root, failure_logs(root, home))
    facts.peers = _peers(home)
    facts.members = _members(MemberRegistry(home))
    facts.recovered = list(recovered)
    if library is None:
        return facts
    facts.head = library.head()
    facts.branch = _branch(library.repo)
    facts.index = {"loaded": False, "head": facts.head}
    facts.agents = {}
    for agent_id in library.agent_ids():
        try:
            data = library.read(agent_id).data
            skipped = library.read_problems(agent_id)
            facts.agents[agent_id] = raw_agent(data, library.current_digest(agent_id), skipped)
        except BourdonError as exc:
            facts.agents[agent_id] = {"problem": exc.message}
    facts.staged = _staged(library)
    facts.remotes = _remotes(library.root, library.repo)
    facts.leftovers = leftovers(library.root, library.repo)
    facts.hand_edits = hand_edit_problems(library)
    return facts


def raw_agent(
    data: Mapping[str, Any],
    manifest_digest: str | None,
    skipped: Iterable[ReadProblem] = (),
) -> dict[str, Any]:
    """One manifest's facts: type, versions, row counts by section and visibility (of the rows
    served), and the rows left out (``reading.read_manifest``)."""
    agent = data.get("agent")
    agent = agent if isinstance(agent, Mapping) else {}
    policy = data.get("visibility_policy")
    policy = policy if isinstance(policy, Mapping) else {}
    skipped = tuple(skipped)
    left_out = {(p.section, p.row) for p in skipped}
    counts = {section: dict.fromkeys(LEVELS, 0) for section in ROW_SECTIONS}
    for section in ROW_SECTIONS:
        rows = data.get(section)
        for i, row in enumerate(rows if isinstance(rows, list) else []):
            if isinstance(row, Mapping) and (section, i) not in left_out:
                counts[section][str(row_visibility(row, policy))] += 1
    return {
        "skipped": skipped,
        "type": agent.get("type"),
        "spec_version": data.get("spec_version"),
        "last_updated": data.get("last_updated"),
        "digest8": digest8(manifest_digest) if manifest_digest else None,
        # Shaped once for both audiences: with private rows counted, and without.
        "seen": {private: _seen(counts, private) for private in (True, False)},
    }


def _seen(counts: Mapping[str, Mapping[str, int]], private: bool) -> dict[str, Any]:
    levels = LEVELS if private else LEVELS[:2]
    rows = {section: sum(counts[section][lv] for lv in levels) for section in ROW_SECTIONS}
    by_level = {lv: sum(counts[section][lv] for section in ROW_SECTIONS) for lv in levels}
    return {"rows": rows, "total": sum(rows.values()), "by_visibility": by_level}


def _staged(library: Library) -> list[StagedWrite] | str:
    try:
        return library.staged()
    except BourdonError as exc:
        return exc.message


def _peers(home: Path) -> list[Peer] | str:
    try:
        return PeerList(home).peers()
    except BourdonError as exc:
        return exc.message


def _members(registry: MemberRegistry) -> list[Member] | str | None:
    if not registry.path.exists():
        return None
    try:
        return registry.members()
    except BourdonError as exc:
        return exc.message


def _remotes(root: Path, repo: GitRepo) -> list[RemoteState] | str:
    try:
        return remote_states(root, repo)
    except BourdonError as exc:
        return exc.message


def _branch(repo: GitRepo) -> str:
    return repo.branch.removeprefix("refs/heads/")


def leftovers(root: Path, repo: GitRepo, now: float | None = None) -> list[dict[str, Any]]:
    """What interrupted writes left behind: an intent or a pid file of a process that is gone,
    git lock files older than a live git would hold them. Looks only; opening the library
    with ``Library.open`` (any bourdon command) is what repairs."""
    now = time.time() if now is None else now
    local = root / LOCAL_DIR
    found: list[dict[str, Any]] = []
    intent = _json(local / "intent.json")
    if intent is not None:
        pid = intent.get("pid") if isinstance(intent, dict) else None
        if not pid_alive(pid):
            paths = intent.get("paths") if isinstance(intent, dict) else None
            found.append(
                {
                    "kind": "intent",
                    "path": f"{LOCAL_DIR}/intent.json",
                    "pid": pid,
                    "paths": paths if isinstance(paths, list) else [],
                }
            )
    with contextlib.suppress(OSError, ValueError):
        pid = int((local / "write.pid").read_text(encoding="ascii"))
        if not pid_alive(pid):
            found.append({"kind": "write_pid", "path": f"{LOCAL_DIR}/write.pid", "pid": pid})
    with contextlib.suppress(OSError):
        for lock in repo.stale_locks():
            age = now - lock.stat().st_mtime
            if age >= STALE_LOCK_SECONDS:
                found.append({"kind": "git_lock", "path": lock.relative_to(root).as_posix()})
    return found


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}  # there, but unreadable: still a leftover


# -- doctor's slow checks ----------------------------------------------------------------


def deep_checks(library: Library, env: Mapping[str, str]) -> dict[str, Any]:
    """``git fsck``, the git identity hand commits would use, and every manifest validated at
    HEAD and on disk. Slow (git processes, every file parsed): ``bourdon doctor`` only."""
    clean, said = library.fsck()
    return {
        "fsck": {"clean": clean, "output": "" if clean else said[-2000:]},
        "git_identity": git_identity(library.root, env),
        "manifests": manifest_problems(library),
    }


_IDENTITY_VARS: Final = (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
)


def git_identity(root: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """Who ``git commit`` in the library would record, or that git would refuse to commit.

    bourdon's own commits name their author themselves and never need it; a commit made by
    hand in the library does. ``env`` is the user's environment (git reads GIT_AUTHOR_* too).
    """
    if all(env.get(name) for name in _IDENTITY_VARS):
        return {"ok": True, "ident": f"{env['GIT_COMMITTER_NAME']} <{env['GIT_COMMITTER_EMAIL']}>"}
    # The user's own git configuration, where the identity lives; it fails as `git commit` would.
    said = run_git(root, "var", "GIT_COMMITTER_IDENT", check=False, user_config=True)
    ident = said.decode("utf-8", "replace").strip().rsplit(" ", 2)[0]
    return {"ok": bool(ident), "ident": ident or None}


def manifest_problems(library: Library) -> list[dict[str, Any]]:
    """Manifests of ``agents/`` that fail validation at HEAD, or on disk (hand edits)."""
    found: list[dict[str, Any]] = []
    for agent_id in library.agent_ids():
        try:
            library.read(agent_id)
        except BourdonError as exc:
            found.append(
                {
                    "agent": agent_id,
                    "path": f"{AGENTS_DIR}/{agent_id}{SUFFIX}",
                    "where": "head",
                    "problem": exc.message,
                    "last_valid": _last_valid(library, agent_id),
                }
            )
    return found + hand_edit_problems(library)


def hand_edit_problems(library: Library) -> list[dict[str, Any]]:
    """Files of ``agents/`` that differ from HEAD and that a write would refuse to adopt.

    The server serves the files on disk, so ``bourdon status`` looks at them too: one read and
    one hash per file, and a parse only of the files that differ from HEAD."""
    found: list[dict[str, Any]] = []
    head = library.head()
    with contextlib.suppress(OSError):
        for path in sorted((library.root / AGENTS_DIR).glob(f"*{SUFFIX}")):
            rel = f"{AGENTS_DIR}/{path.name}"
            raw = path.read_bytes()
            committed = library.repo.object_id(head, rel) if head else None
            if committed == library.repo.blob_id(raw):
                continue  # the same bytes as HEAD: checked above
            before = _committed_data(library, path.name[: -len(SUFFIX)]) if committed else None
            problem = _invalid(raw, rel, path.name[: -len(SUFFIX)], before)
            if problem:
                found.append(
                    {
                        "agent": path.name[: -len(SUFFIX)],
                        "path": rel,
                        "where": "disk",
                        "problem": problem,
                        "committed": committed is not None,
                    }
                )
    return found


def _invalid(raw: bytes, what: str, agent_id: str, before: Mapping[str, Any] | None) -> str | None:
    """Why a write would refuse to adopt this hand edit (``Library``): a broken top level, or
    a bad row the edit brings (a bad row already committed is only left out, never refused)."""
    try:
        reading = read_manifest(raw, what=what)
        named = Manifest(reading.data).agent_id
    except BourdonError as exc:
        return exc.message
    if named != agent_id:
        return f"{what} holds agent {named!r}; rename the file"
    brought = new_problems(reading, before)
    return brought[0].message(what) if brought else None


def _committed_data(library: Library, agent_id: str) -> Mapping[str, Any] | None:
    try:
        return library.read(agent_id).data
    except BourdonError:
        return None


def _last_valid(library: Library, agent_id: str) -> str | None:
    """The newest earlier version of the agent that still validates, if any."""
    with contextlib.suppress(BourdonError):
        for version in library.history(agent_id, limit=50)[1:]:
            with contextlib.suppress(BourdonError):
                library.read(agent_id, version.version_id)
                return version.version_id
    return None


# -- the server's live report ------------------------------------------------------------


class LiveStatus:
    """``memory_status``'s facts, kept between calls: only what changed is gathered again.

    The agents come from the server's index (the manifests it serves), each counted once per
    loaded manifest; staged writes once per HEAD; remotes when HEAD, the git config or the
    remote refs and state files move; readers when a watermark or hook log moves, and at least
    every ``READERS_TTL`` seconds. Peers are the federation's last outcome of each, never a
    new call.
    """

    def __init__(
        self,
        library: Library,
        home: Path,
        *,
        index: Index,
        registry: MemberRegistry,
        federation: Federation | None,
        readers: Callable[[], Readers],
        ctx: Callable[[], ReaderContext],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.library = library
        self.root = library.root
        self.home = home
        self.index = index
        self.registry = registry
        self.federation = federation
        self._readers = readers
        self._ctx = ctx
        self.clock = clock
        self._agents: dict[str, tuple[object, dict[str, Any]]] = {}
        self._staged: tuple[str | None, list[StagedWrite] | str] | None = None
        self._remotes: tuple[tuple[object, ...], list[RemoteState] | str] | None = None
        self._reader_report: tuple[tuple[object, ...], float, dict[str, Any]] | None = None
        self._leftovers: tuple[tuple[object, ...], float, list[dict[str, Any]]] | None = None
        self._loaded: tuple[Readers, ReaderContext] | None = None

    def report(self, audience: Audience = OPERATOR) -> dict[str, Any]:
        return compose(self.facts(), audience, self.clock())

    def facts(self) -> Facts:
        repo = self.library.repo
        head = repo.head()
        facts = Facts(root=self.root, exists=True, head=head, branch=_branch(repo))
        facts.agents = self._agent_facts()
        facts.index = {
            "loaded": True,
            "head": self.index.head,
            "generation": self.index.generation,
            "agents": len(self.index.agents),
            "skipped": dict(self.index.problems),
        }
        if self._staged is None or self._staged[0] != head:
            self._staged = (head, _staged(self.library))
        facts.staged = self._staged[1]
        facts.readers = self._reader_facts()
        if self.federation is not None:
            facts.peers = list(self.federation.peers)
            facts.peer_outcomes = dict(self.federation.last)
        key = _remotes_key(self.root, repo, head)
        if self._remotes is None or self._remotes[0] != key:
            self._remotes = (key, _remotes(self.root, repo))
        facts.remotes = self._remotes[1]
        facts.members = _members(self.registry)
        facts.leftovers = self._leftover_facts(repo)
        return facts

    def _agent_facts(self) -> dict[str, dict[str, Any]]:
        views = dict(self.index.agents)
        for gone in set(self._agents) - set(views):
            del self._agents[gone]
        for agent_id, view in views.items():
            cached = self._agents.get(agent_id)
            if cached is None or cached[0] is not view:  # a reload makes a new view
                self._agents[agent_id] = (view, raw_agent(view.data, view.digest, view.skipped))
        return {agent_id: facts for agent_id, (_, facts) in self._agents.items()}

    def _leftover_facts(self, repo: GitRepo) -> list[dict[str, Any]]:
        # An intent, a pid file or a lock at the top of .git changes a folder's stamp at once;
        # the walk of .git/refs, .git/logs and .git/objects is only worth doing now and then.
        key = (_stamp(self.root / LOCAL_DIR), _stamp(repo.git_dir))
        now = time.monotonic()
        cached = self._leftovers
        if cached is None or cached[0] != key or now - cached[1] > LEFTOVERS_TTL:
            cached = (key, now, leftovers(self.root, repo))
            self._leftovers = cached
        return cached[2]

    def _reader_facts(self) -> dict[str, Any]:
        logs = failure_logs(self.root, self.home)
        key = (_tree_stamp(self.root / LOCAL_DIR / "watermarks"), *(_stamp(p) for p in logs))
        now = time.monotonic()
        cached = self._reader_report
        if cached is None or cached[0] != key or now - cached[1] > READERS_TTL:
            if self._loaded is None:  # the reader plugins are imported on the first call only
                self._loaded = (self._readers(), self._ctx())
            (found, broken), ctx = self._loaded
            cached = (key, now, reader_report(found, broken, ctx, self.root, logs))
            self._reader_report = cached
        return cached[2]


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)  # noqa: PTH116 - on every call: the cheapest way
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _tree_stamp(folder: Path) -> tuple[object, ...]:
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
                        found.append((entry.path, _stamp(Path(entry.path))))
        except OSError:
            continue
    return tuple(sorted(found, key=str))


def _remotes_key(root: Path, repo: GitRepo, head: str | None) -> tuple[object, ...]:
    """What moves when a remote's report can change: HEAD, the git config (remotes and their
    settings), the remote refs, and the sync state files."""
    git_dir = repo.git_dir
    return (
        head,
        _stamp(git_dir / "config"),
        _stamp(git_dir / "packed-refs"),
        _tree_stamp(git_dir / "refs" / "bourdon"),
        _tree_stamp(root / LOCAL_DIR / "sync"),
    )


# -- the report --------------------------------------------------------------------------


def compose(
    facts: Facts, audience: Audience = OPERATOR, now: float | None = None
) -> dict[str, Any]:
    """The report of ``facts`` as ``audience`` may see it, with doctor's problems."""
    now = time.time() if now is None else now
    report: dict[str, Any] = {"scope": "full" if audience.detail else "filtered"}
    if audience.detail:
        report["library"] = str(facts.root)
    report.update(
        exists=facts.exists,
        generated_at=_iso(now),
        head=facts.head,
        branch=facts.branch,
        agents=_agents(facts.agents, audience),
        schema_versions=_schema_versions(facts.agents, audience),
        **_readers(facts.readers, audience),
        staging=_staging(facts.staged, audience, now),
        peers=_peer_report(facts.peers, facts.peer_outcomes, audience),
        remotes=_remote_report(facts.remotes, audience),
        members=_member_counts(facts.members),
        index=_index(facts.index, facts.head, audience),
    )
    if audience.detail:
        report["leftovers"] = facts.leftovers
        report["recovered"] = facts.recovered
        if facts.hand_edits is not None:
            report["hand_edits"] = facts.hand_edits
        if facts.checks is not None:
            report["checks"] = facts.checks
    report["problems"] = doctor.diagnose(report)
    return report


def _agents(raw: Mapping[str, dict[str, Any]] | None, audience: Audience) -> dict[str, Any] | None:
    if raw is None:
        return None
    agents: dict[str, Any] = {}
    totals = dict.fromkeys(ROW_SECTIONS, 0)
    by_level = dict.fromkeys(LEVELS if audience.private else LEVELS[:2], 0)
    for agent_id in sorted(raw):
        if not audience.may_read(agent_id):
            continue
        facts = raw[agent_id]
        if "problem" in facts:
            agents[agent_id] = {"valid": False, "problem": facts["problem"]}
            continue
        seen = facts["seen"][audience.private]
        path = f"{AGENTS_DIR}/{agent_id}{SUFFIX}"
        agents[agent_id] = {
            "valid": True,
            # Rows kept in the file but not served, each naming its row and field; a private
            # row's problem only for an audience that sees private rows.
            "skipped_rows": [
                {
                    "path": path,
                    "section": p.section,
                    "row": p.row,
                    "name": p.name,
                    "field": p.field,
                    "problem": p.reason,
                    "message": p.message(path),
                }
                for p in facts["skipped"]
                if audience.private or p.level < Visibility.PRIVATE
            ],
            "type": facts["type"],
            "spec_version": facts["spec_version"],
            "last_updated": facts["last_updated"],
            "digest8": facts["digest8"],
            "rows": dict(seen["rows"]),  # copies: the cached counts outlive this report
            "total": seen["total"],
            "by_visibility": dict(seen["by_visibility"]),
        }
        for section, n in seen["rows"].items():
            totals[section] += n
        for level, n in seen["by_visibility"].items():
            by_level[level] += n
    return {
        "count": len(agents),
        "agents": agents,
        "totals": {"rows": totals, "total": sum(totals.values()), "by_visibility": by_level},
    }


def _schema_versions(
    raw: Mapping[str, dict[str, Any]] | None, audience: Audience
) -> dict[str, int] | None:
    if raw is None:
        return None
    seen = Counter(
        str(facts["spec_version"])
        for agent_id, facts in raw.items()
        if audience.may_read(agent_id) and "problem" not in facts
    )
    return dict(sorted(seen.items()))


def _readers(found: Mapping[str, Any], audience: Audience) -> dict[str, Any]:
    entries = [e for e in found.get("readers", []) if audience.may_read(e["reader"])]
    return {
        "readers": entries,
        # Plugin errors and failures of hooks for other agents may name anything.
        "broken_readers": list(found.get("broken", [])) if audience.detail else [],
        "other_hook_failures": list(found.get("other_hook_failures", []))
        if audience.detail
        else [],
    }


def _staging(
    staged: list[StagedWrite] | str | None, audience: Audience, now: float
) -> dict[str, Any] | None:
    if staged is None:
        return None
    if isinstance(staged, str):
        return {"error": staged, "waiting": None, "stale": None, "writes": []}
    writes = []
    for s in staged:
        if not audience.detail and s.caller != audience.me:
            continue  # other members' ids are not a quarantined member's business
        when = _epoch(s.staged_at)
        age = now - when if when is not None else None
        writes.append(
            {
                "caller": s.caller,
                "agent_id": s.agent_id,
                "path": s.path,
                "rows": s.rows,
                "staged_at": s.staged_at,
                "age_seconds": round(age) if age is not None else None,
                "stale": age > STALE_STAGING_SECONDS if age is not None else None,
                "digest8": digest8(s.digest),
            }
        )
    return {
        "waiting": len(writes),
        "stale": sum(1 for w in writes if w["stale"]),
        "stale_after_days": STALE_STAGING_DAYS,
        "writes": writes,
    }


def _peer_report(
    peers: list[Peer] | str,
    outcomes: Mapping[str, Mapping[str, Any]] | None,
    audience: Audience,
) -> dict[str, Any]:
    if isinstance(peers, str):
        return {"configured": None, "error": peers, "peers": []}
    rows = []
    for peer in peers:
        outcome = (outcomes or {}).get(peer.name)
        rows.append(
            {
                "name": peer.name,
                "url": safe_url(peer.url),
                "checked": outcome is not None,
                # Not checked: nothing is known, so nothing is claimed.
                "reachable": outcome.get("reachable") if outcome else None,
                "latency_ms": outcome.get("latency_ms") if outcome else None,
                "agents": outcome.get("agents") if outcome else None,
                "problem": outcome.get("problem") if outcome else None,
                "checked_at": outcome.get("checked_at") if outcome else None,
            }
        )
    out: dict[str, Any] = {
        "configured": len(rows),
        "reachable": sum(1 for r in rows if r["reachable"] is True),
        "unreachable": sum(1 for r in rows if r["reachable"] is False),
        "not_checked": sum(1 for r in rows if not r["checked"]),
    }
    if audience.detail:
        out["peers"] = rows
    return out


def _remote_report(
    remotes: list[RemoteState] | str | None, audience: Audience
) -> dict[str, Any] | None:
    if remotes is None:
        return None
    if isinstance(remotes, str):
        return {"configured": None, "error": remotes, "remotes": []}
    out: dict[str, Any] = {
        "configured": len(remotes),
        "failing": sum(1 for r in remotes if r.last_error),
    }
    if audience.detail:
        out["remotes"] = [{**r.to_dict(), "url": safe_url(r.url)} for r in remotes]
    return out


def _member_counts(members: list[Member] | str | None) -> dict[str, Any] | None:
    if members is None:
        return None  # no federation.yaml: nobody was ever enrolled
    if isinstance(members, str):
        return {"error": members}
    active = [m for m in members if m.active]
    return {
        "active": len(active),
        TRUSTED: sum(1 for m in active if m.tier == TRUSTED),
        QUARANTINED: sum(1 for m in active if m.tier == QUARANTINED),
        "revoked": len(members) - len(active),
        "peers": sum(1 for m in active if m.peer),
    }


def _index(
    index: Mapping[str, Any] | None, head: str | None, audience: Audience
) -> dict[str, Any] | None:
    if index is None:
        return None
    if not index.get("loaded"):
        return {"loaded": False, "head": index.get("head")}
    skipped = {
        name: text
        for name, text in index.get("skipped", {}).items()
        if audience.may_read(name.removesuffix(SUFFIX))
    }
    out = {
        "loaded": True,
        "head": index.get("head"),
        "matches_head": index.get("head") == head,
        "generation": index.get("generation"),
        "skipped": [skipped[name] for name in sorted(skipped)],
    }
    if audience.detail:
        out["agents"] = index.get("agents")
    return out


def _epoch(iso: str | None) -> float | None:
    try:
        return datetime.fromisoformat(str(iso).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _iso(epoch: float) -> str:
    return (
        datetime.fromtimestamp(epoch, UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    )
