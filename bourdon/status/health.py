"""The library's own health: one plain, JSON-ready report of what is there and what is wrong.

Two steps. ``collect`` (for ``bourdon status`` and ``bourdon doctor``) or ``LiveStatus`` (for the
MCP server's ``memory_status``) gathers the ``Facts``: agents and their row counts, readers,
staged writes, peers, remotes, members, the index, the object store (loose objects, packs),
leftovers of interrupted writes. Then
``compose`` shapes them into the report for one ``Audience`` (what a caller may see) and adds the
problems ``bourdon.status.doctor`` finds in it.

Where each fact is read from is ``sources``; doctor's slow checks are ``checks``; the stamps
that tell ``LiveStatus`` what moved are ``stamps``; each section of the report is ``sections``.

``LiveStatus`` keeps the parts that cost a git process or a walk of many files, keyed on what
changes them (HEAD, the remote refs and git config, the state files' modification times), so a
call costs a few hundred microseconds when nothing moved; it never touches the network: peers
are reported as the federation last saw them.

Absent is reported as absent: ``None`` (JSON ``null``) where nothing is known (no export ever
ran, a peer not checked, a remote never synced, no member registry), never a zero or a ``false``
that would read as a measurement.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bourdon.access.trust import MemberRegistry
from bourdon.errors import BourdonError
from bourdon.model import LOCAL_DIR
from bourdon.status import checks, doctor, sections, sources, stamps
from bourdon.status.readers import failure_logs, reader_report

if TYPE_CHECKING:
    from bourdon.access.registryfile import Member
    from bourdon.federation.client import Federation
    from bourdon.federation.peers import Peer
    from bourdon.query.index import Index
    from bourdon.readers import Broken
    from bourdon.readers.base import Reader, ReaderContext
    from bourdon.replicate.state import RemoteState
    from bourdon.store.git.repo import GitRepo
    from bourdon.store.library import Library
    from bourdon.store.staging import StagedWrite

READERS_TTL: Final = 5.0  # a reader's store can appear without any file of ours moving
LEFTOVERS_TTL: Final = 5.0  # a lock deep in .git/refs or .git/objects moves no folder we stat

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
    agents: dict[str, dict[str, Any]] | None = None  # id -> sources.raw_agent() or {"problem": ...}
    index: dict[str, Any] | None = None
    readers: dict[str, Any] = field(default_factory=dict)  # status.readers.reader_report
    staged: list[StagedWrite] | str | None = None  # a str is why they could not be listed
    peers: list[Peer] | str = field(default_factory=list)
    peer_outcomes: Mapping[str, Mapping[str, Any]] | None = None
    # Each backed-off peer's state (``PeerBackoff.report``) in a server; None outside one.
    peer_backoff: Mapping[str, Mapping[str, Any] | None] | None = None
    remotes: list[RemoteState] | str | None = None
    members: list[Member] | str | None = None  # None: no federation.yaml
    leftovers: list[dict[str, Any]] = field(default_factory=list)
    objects: dict[str, Any] | str | None = None  # sources.object_store
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
    facts.peers = sources.peers(home)
    facts.members = sources.members(MemberRegistry(home))
    facts.recovered = list(recovered)
    if library is None:
        return facts
    facts.head = library.head()
    facts.branch = sources.branch(library.repo)
    facts.index = {"loaded": False, "head": facts.head}
    facts.agents = {}
    for agent_id in library.agent_ids():
        try:
            data = library.read(agent_id).data
            skipped = library.read_problems(agent_id)
            facts.agents[agent_id] = sources.raw_agent(
                data, library.current_digest(agent_id), skipped
            )
        except BourdonError as exc:
            facts.agents[agent_id] = {"problem": exc.message}
    facts.staged = sources.staged(library)
    facts.remotes = sources.remotes(library.root, library.repo)
    facts.leftovers = sources.leftovers(library.root, library.repo)
    facts.objects = sources.object_store(library.repo)
    facts.hand_edits = checks.hand_edit_problems(library)
    return facts


# -- doctor's slow checks ----------------------------------------------------------------


def deep_checks(library: Library, env: Mapping[str, str]) -> dict[str, Any]:
    """``git fsck``, the git identity hand commits would use, and every manifest validated at
    HEAD and on disk. Slow (git processes, every file parsed): ``bourdon doctor`` only."""
    clean, said = library.fsck()
    return {
        "fsck": {"clean": clean, "output": "" if clean else said[-2000:]},
        "git_identity": checks.git_identity(library.root, env),
        "git_index": checks.git_index(library),
        "push_guard": checks.push_guard(library),
        "manifests": checks.manifest_problems(library),
    }


# -- the server's live report ------------------------------------------------------------


class LiveStatus:
    """``memory_status``'s facts, kept between calls: only what changed is gathered again.

    The agents come from the server's index (the manifests it serves), each counted once per
    loaded manifest; staged writes once per HEAD; remotes when HEAD, the git config or the
    remote refs and state files move; readers when a watermark or hook log moves, and at least
    every ``READERS_TTL`` seconds. Peers are the federation's last outcome of each and its
    back-off state, from memory, never a new call.
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
        facts = Facts(root=self.root, exists=True, head=head, branch=sources.branch(repo))
        facts.agents = self._agent_facts()
        facts.index = {
            "loaded": True,
            "head": self.index.head,
            "generation": self.index.generation,
            "agents": len(self.index.agents),
            "skipped": dict(self.index.problems),
        }
        if self._staged is None or self._staged[0] != head:
            self._staged = (head, sources.staged(self.library))
        facts.staged = self._staged[1]
        facts.readers = self._reader_facts()
        if self.federation is not None:
            facts.peers = list(self.federation.peers)
            facts.peer_outcomes = dict(self.federation.last)
            backoff = self.federation.backoff
            facts.peer_backoff = {p.name: backoff.report(p.name) for p in facts.peers}
        key = stamps.remotes_key(self.root, repo, head)
        if self._remotes is None or self._remotes[0] != key:
            self._remotes = (key, sources.remotes(self.root, repo))
        facts.remotes = self._remotes[1]
        facts.members = sources.members(self.registry)
        facts.leftovers = self._leftover_facts(repo)
        facts.objects = sources.object_store(repo)  # a few stats: gathered on every call
        return facts

    def _agent_facts(self) -> dict[str, dict[str, Any]]:
        views = dict(self.index.agents)
        for gone in set(self._agents) - set(views):
            del self._agents[gone]
        for agent_id, view in views.items():
            cached = self._agents.get(agent_id)
            if cached is None or cached[0] is not view:  # a reload makes a new view
                self._agents[agent_id] = (
                    view,
                    sources.raw_agent(view.data, view.digest, view.skipped),
                )
        return {agent_id: facts for agent_id, (_, facts) in self._agents.items()}

    def _leftover_facts(self, repo: GitRepo) -> list[dict[str, Any]]:
        # An intent, a pid file or a lock at the top of .git changes a folder's stamp at once;
        # the walk of .git/refs, .git/logs and .git/objects is only worth doing now and then.
        key = (stamps.stamp(self.root / LOCAL_DIR), stamps.stamp(repo.git_dir))
        now = time.monotonic()
        cached = self._leftovers
        if cached is None or cached[0] != key or now - cached[1] > LEFTOVERS_TTL:
            cached = (key, now, sources.leftovers(self.root, repo))
            self._leftovers = cached
        return cached[2]

    def _reader_facts(self) -> dict[str, Any]:
        logs = failure_logs(self.root, self.home)
        key = (
            stamps.tree_stamp(self.root / LOCAL_DIR / "watermarks"),
            *(stamps.stamp(p) for p in logs),
        )
        now = time.monotonic()
        cached = self._reader_report
        if cached is None or cached[0] != key or now - cached[1] > READERS_TTL:
            if self._loaded is None:  # the reader plugins are imported on the first call only
                self._loaded = (self._readers(), self._ctx())
            (found, broken), ctx = self._loaded
            cached = (key, now, reader_report(found, broken, ctx, self.root, logs))
            self._reader_report = cached
        return cached[2]


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
        generated_at=sections.iso(now),
        head=facts.head,
        branch=facts.branch,
        agents=sections.agents(facts.agents, audience),
        schema_versions=sections.schema_versions(facts.agents, audience),
        **sections.readers(facts.readers, audience),
        staging=sections.staging(facts.staged, audience, now),
        peers=sections.peers(facts.peers, facts.peer_outcomes, audience, facts.peer_backoff),
        remotes=sections.remotes(facts.remotes, audience),
        members=sections.members(facts.members),
        index=sections.index(facts.index, facts.head, audience),
    )
    if audience.detail:
        report["leftovers"] = facts.leftovers
        report["objects"] = sections.objects(facts.objects)
        report["recovered"] = facts.recovered
        if facts.hand_edits is not None:
            report["hand_edits"] = facts.hand_edits
        if facts.checks is not None:
            report["checks"] = facts.checks
    report["problems"] = doctor.diagnose(report)
    return report
