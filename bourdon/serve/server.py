"""The L6 MCP server: ``create_server(library_path)`` -> an ``MCPServer`` over one library.

Every tool and resource goes through one ``Guard``: it learns who is calling (the local
operator on stdio, a member authenticated by ``httpgate`` over HTTP), asks ``policy`` whether
that caller may do this, appends one line to the audit log either way, and only then runs the
matching function of ``bourdon.reads`` or ``bourdon.writes``. A ``BourdonError`` becomes an MCP
tool error whose structured content is ``{"error": {"code", "status", "message",
"retryable"}}``; anything unexpected becomes the same with status 500 and is logged, never
raised through to the client.

Names, parameters and defaults follow the Bourdon tool reference exactly; extra keys (``meta``,
match kinds) and extra optional parameters are additive.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from bourdon import __version__
from bourdon.access import policy
from bourdon.access.audit import AuditLog
from bourdon.access.trust import Caller, MemberRegistry
from bourdon.access.visibility import Scope
from bourdon.errors import BourdonError, ConflictError, ForbiddenError, InputError
from bourdon.federation.client import (
    DEFAULT_DEADLINE,
    RECOGNITION_DEADLINE,
    UNLEVELED,
    Federation,
    Peer,
    PeerAnswer,
    merge_matches,
    merge_sessions,
    peer_agent_names,
    peer_meta,
)
from bourdon.model import Visibility
from bourdon.query import context, reads
from bourdon.query.index import Index
from bourdon.serve import writes
from bourdon.serve.config import bourdon_home, build_federation, machine_name, reader_context
from bourdon.serve.httpgate import current_caller
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance

if TYPE_CHECKING:
    from bourdon.readers.base import ReaderContext
    from bourdon.status import health

log = logging.getLogger("bourdon.server")

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
INSTRUCTIONS = (
    "bourdon is the shared memory of the user's AI coding agents. Use find_entity to learn "
    "what any agent knows about a project, person, library or decision; list_recent_work for "
    "what was done lately; get_cross_agent_summary for everything about one project; "
    "commit_to_federation to share something worth remembering."
)


# A stale write is an answer, not an error, in the reference: clients written for it read these
# keys at the top level, so a conflict carries them there too, next to bourdon's error object.
STALE_WRITE_KEYS = ("agent_id", "mode", "expected_digest", "current_digest")


def error_result(exc: BourdonError) -> CallToolResult:
    body: dict[str, Any] = exc.to_dict()
    if isinstance(exc, ConflictError):
        lifted = {k: exc.details[k] for k in STALE_WRITE_KEYS if k in exc.details}
        body = {**lifted, "detail": exc.message, **body}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


class _Internal(BourdonError):
    """Stands for an unexpected failure in an answer: status 500, no details leaked."""


class Guard:
    """Authorize, audit, answer: what every tool and resource does around its own work."""

    def __init__(
        self,
        index: Index,
        library: Library,
        registry: MemberRegistry,
        audit: AuditLog | None,
        federation: Federation | None = None,
        deadlines: tuple[float, float] = (RECOGNITION_DEADLINE, DEFAULT_DEADLINE),
    ) -> None:
        self.index = index
        self.library = library
        self.registry = registry
        self.audit = audit
        self.federation = federation
        self.recognition_deadline, self.deadline = deadlines

    async def run(
        self,
        op: str,
        namespace: str | None,
        work: Callable[[Caller, policy.Decision], Any],
        *,
        thread: bool = False,
        turn_start: bool = False,
        uses_index: bool = True,
    ) -> dict[str, Any]:
        caller = current_caller()
        decision = policy.decide(caller, op, namespace)
        outcome: Any
        try:
            if not decision.allowed:
                denied = ForbiddenError if decision.status == 403 else InputError
                raise denied(decision.reason)
            if turn_start:
                self.index.refresh_if_due()  # no file I/O on most turn-start calls
            elif uses_index:
                self.index.refresh()
            if thread:
                outcome = await anyio.to_thread.run_sync(lambda: work(caller, decision))
            else:
                outcome = work(caller, decision)
            status, detail = 200, decision.reason
        except BourdonError as exc:
            outcome, status, detail = error_result(exc), exc.status, exc.message
        except Exception:
            log.exception("unexpected failure while answering %s", op)
            outcome = error_result(_Internal("bourdon failed to answer; the server log says why"))
            status, detail = 500, "internal error"
        # "deny" is the policy saying no; a refused argument or a missing agent is an allowed
        # call that failed, and its status says how.
        self.record(caller, op, namespace, decision.allowed, status, detail)
        # A tool error is a CallToolResult, which the SDK passes through unchanged although
        # the tools are typed as returning their answer dict (that type drives outputSchema).
        return cast(dict[str, Any], outcome)

    def record(
        self,
        caller: Caller,
        op: str,
        namespace: str | None,
        allowed: bool,
        status: int,
        detail: str,
    ) -> None:
        if self.audit is None:
            return
        try:
            self.audit.append(
                caller=caller.id,
                tier=caller.tier,
                transport=caller.transport,
                op=op,
                namespace=namespace,
                decision="allow" if allowed else "deny",
                status=status,
                detail=detail,
            )
        except OSError:
            log.exception("could not append to the audit log")

    async def federated(
        self,
        tool: str,
        args: dict[str, Any],
        local: dict[str, Any],
        hop: int,
        merge: Callable[[dict[str, Any], list[PeerAnswer], Visibility], None],
        *,
        recognition: bool = False,
    ) -> dict[str, Any]:
        """Add what the peers know to a local answer (depth 1, under the deadline).

        Local only when the call itself comes from a peer (its member is marked peer, or it
        passes federation_hop >= 1), when there are no peers, or when the answer is an error.
        Peers are never asked for private rows.
        """
        caller = current_caller()
        peers = self.federation.peers if self.federation else []
        if not isinstance(local, dict) or not peers or hop >= 1 or caller.peer:
            return local
        assert self.federation is not None
        applied = Visibility.parse(local.get("meta", {}).get("access_level", "public"))
        level = min(applied, Visibility.TEAM)
        # Only arguments the peer's tool declares: the reference refuses any other, even None.
        ask = {k: v for k, v in args.items() if v is not None} | {"federation_hop": 1}
        if tool not in UNLEVELED:
            ask |= {"access_level": str(level), "include_private": False}
        deadline = self.recognition_deadline if recognition else self.deadline
        answers = await self.federation.ask(tool, ask, deadline)
        snapshot = json.loads(json.dumps(local))
        try:
            merge(local, answers, level)
        except Exception:  # a peer answered in a shape no merge expected: keep the local one
            log.exception("could not merge the peers' answers to %s", tool)
            local = snapshot
            for answer in answers:
                if answer.payload is not None:
                    answer.error, answer.payload = "answered in an unexpected shape", None
        local.update(peer_meta(answers))
        return local


def seen_level(caller: Caller) -> int:
    """The widest visibility a caller is ever shown (``Caller.ceiling``)."""
    return int(caller.ceiling)


def scope_of(caller: Caller) -> Scope:
    return Scope(caller.readable(), caller.transport == "stdio", caller.ceiling)


def provenance_of(caller: Caller, session_id: str | None, transcript_ref: str | None) -> Provenance:
    return Provenance(caller=caller.id, session=session_id, transcript=transcript_ref)


def _watch(index: Index) -> Callable[[], None]:
    """Watch ``agents/`` so edits that are not commits are seen too; returns a stopper."""
    try:
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer
    except ImportError:  # pragma: no cover - watchdog is a dependency; stay useful without it
        return lambda: None

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            index.mark_dirty()

    if not index.agents_dir.is_dir():
        return lambda: None
    observer = Observer()
    observer.schedule(Handler(), str(index.agents_dir), recursive=False)
    observer.daemon = True
    observer.start()

    def stop() -> None:
        observer.stop()
        observer.join(timeout=2)

    return stop


def create_server(
    library: str | Path,
    *,
    index: Index | None = None,
    watch: bool = True,
    home: Path | None = None,
    peers: list[Peer] | None = None,
    peers_file: bool = True,
    deadlines: tuple[float, float] = (RECOGNITION_DEADLINE, DEFAULT_DEADLINE),
    readers: health.Readers | None = None,
    reader_ctx: ReaderContext | None = None,
) -> MCPServer:
    """An MCP server answering from the library at ``library``.

    ``home`` holds the members and the audit log (default ``$BOURDON_HOME``, else
    ``~/.bourdon``); the peers are ``peers`` and, unless ``peers_file`` is false, those of
    ``home``'s ``peers.yaml``. ``index`` may be shared with the caller (tests, benchmarks);
    ``watch`` starts a file watcher for the server's lifetime. ``memory_status`` reports the
    registered readers (``readers``: ``(readers by name, broken plugins)`` instead) as seen
    from this user's home and environment (``reader_ctx`` instead).
    """
    root = Path(library).expanduser().absolute()
    home = home or bourdon_home()
    idx = index or Index(root)
    idx.refresh()
    registry = MemberRegistry(home)
    federation = build_federation(home, peers or [], peers_file=peers_file)
    opened = Library.open(root, machine=machine_name())
    guard = Guard(idx, opened, registry, AuditLog(home), federation, deadlines)

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        stop = _watch(idx) if watch else (lambda: None)
        if federation is not None:
            federation.warm()  # build the HTTP client (and its TLS context) before any deadline
        # Build turn-start recognition for the default level while the server waits for its
        # first calls, so the first prompt of the session does not pay for it.
        threading.Thread(
            target=idx.recognizer_for, args=(int(Visibility.TEAM), None), daemon=True
        ).start()
        try:
            yield {"index": idx}
        finally:
            stop()
            if federation is not None:
                await federation.aclose()

    server: MCPServer = MCPServer(
        "bourdon",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        lifespan=lifespan,
    )

    def live_status() -> health.LiveStatus:
        # Made on the first memory_status call: the health machinery (and the reader plugins
        # it reports on) stays out of the server's start-up.
        from bourdon.status.health import LiveStatus

        return LiveStatus(
            guard.library,
            home,
            index=idx,
            registry=registry,
            federation=federation,
            readers=lambda: readers if readers is not None else _load_readers(),
            ctx=lambda: reader_ctx or reader_context(),
        )

    register_read_tools(server, guard)
    register_write_tools(server, guard)
    register_status_tool(server, guard, live_status)
    register_resources(server, guard)
    server.bourdon_index = idx  # type: ignore[attr-defined]  # for the startup line and tests
    server.bourdon_guard = guard  # type: ignore[attr-defined]
    return server


def register_read_tools(server: MCPServer, guard: Guard) -> None:
    tool = server.tool(annotations=READ_ONLY)
    index = guard.index

    @tool
    async def find_entity(
        name: str,
        access_level: str = "public",
        include_private: bool = False,
        federation_hop: int = 0,
    ) -> dict[str, Any]:
        """Find an entity by name across all agents.

        Exact and case-insensitive names and aliases first; when none matches, close
        misspellings. Each match says how it matched (exact, alias, fuzzy) and with what
        score. include_private defaults to False: private rows need access_level='private'
        and include_private=True, and are only ever shown to the local operator.
        federation_hop is the depth-1 guard peers pass; end clients leave it at 0.
        """
        local = await guard.run(
            "find_entity",
            None,
            lambda c, d: reads.find_entity(
                index, name, access_level, include_private, scope=scope_of(c)
            ),
        )
        return await guard.federated(
            "find_entity",
            {"name": name},
            local,
            federation_hop,
            merge_found,
        )

    @tool
    async def query_agent_memory(
        agent: str,
        topic: str,
        access_level: str = "public",
        include_private: bool = False,
    ) -> dict[str, Any]:
        """Find entries in one agent's L5 that match a topic (name, alias or near miss).

        Returns {"agent", "matches"}; an unknown agent is a 404 error.
        """
        return await guard.run(
            "query_agent_memory",
            agent,
            lambda c, d: reads.query_agent_memory(
                index, agent, topic, access_level, include_private, scope=scope_of(c)
            ),
        )

    @tool
    async def get_cross_agent_summary(
        project: str,
        access_level: str = "public",
        include_private: bool = False,
        federation_hop: int = 0,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """Aggregate everything the federation knows about a project.

        Returns the agents that touched it, recent sessions whose project_focus names it or
        one of its aliases (paginated: limit default 20, max 100, next_cursor/has_more), the
        entity matches, and related workstreams and notes.
        """
        local = await guard.run(
            "get_cross_agent_summary",
            None,
            lambda c, d: reads.get_cross_agent_summary(
                index, project, access_level, include_private, limit, cursor, scope=scope_of(c)
            ),
        )
        if cursor:  # peers join the first page only; later pages walk the local cursor
            return local
        return await guard.federated(
            "get_cross_agent_summary",
            {"project": project, "limit": limit},
            local,
            federation_hop,
            merge_summary,
        )

    @tool
    async def list_recent_work(
        since: str | None = None,
        agent: str | None = None,
        access_level: str = "public",
        include_private: bool = False,
        limit: int | None = None,
        cursor: str | None = None,
        summary: bool = False,
        federation_hop: int = 0,
    ) -> dict[str, Any]:
        """Return a page of sessions across agents (or a single agent), newest first.

        since: ISO date or date-time; when both since and cursor are omitted a 14-day window
        applies. limit: page size, default 20, capped at 100. cursor: pass the previous
        page's next_cursor until has_more is false. summary: omit key_actions and
        files_touched.
        """
        local = await guard.run(
            "list_recent_work",
            agent or None,
            lambda c, d: reads.list_recent_work(
                index,
                since,
                agent,
                access_level,
                include_private,
                limit,
                cursor,
                summary,
                scope=scope_of(c),
            ),
        )
        if cursor:  # peers join the first page only; later pages walk the local cursor
            return local
        return await guard.federated(
            "list_recent_work",
            {"since": since, "agent": agent, "limit": limit, "summary": summary},
            local,
            federation_hop,
            merge_recent_work,
        )

    @tool
    async def list_workstreams(
        status: str | None = None,
        agent: str | None = None,
        access_level: str = "public",
        include_private: bool = False,
    ) -> dict[str, Any]:
        """List workstreams, ongoing multi-session initiatives, deduplicated by name.

        status: active / paused / done / archived, or omit for all. Not paginated: the set
        is small and bounded (at most 200 per agent). Local store only.
        """
        return await guard.run(
            "list_workstreams",
            agent or None,
            lambda c, d: reads.list_workstreams(
                index, status, agent, access_level, include_private, scope=scope_of(c)
            ),
        )

    @tool
    async def list_notes(
        since: str | None = None,
        agent: str | None = None,
        access_level: str = "public",
        include_private: bool = False,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """Return a page of freestanding notes across agents (or a single agent).

        Pagination and the default 14-day window mirror list_recent_work. Local store only.
        """
        return await guard.run(
            "list_notes",
            agent or None,
            lambda c, d: reads.list_notes(
                index, since, agent, access_level, include_private, limit, cursor, scope=scope_of(c)
            ),
        )

    @tool
    async def list_agents(federation_hop: int = 0) -> dict[str, Any]:
        """List agent IDs known to this L6 server."""
        local = await guard.run(
            "list_agents",
            None,
            lambda c, d: reads.list_agents(index, federation_hop, scope=scope_of(c)),
        )
        # Peer agents are listed by name, untagged (the reference: provenance lives in the
        # detailed tools).
        return await guard.federated(
            "list_agents",
            {},
            local,
            federation_hop,
            lambda a, answers, level: a.update(
                agents=sorted(set(a["agents"]) | peer_agent_names(answers))
            ),
        )

    @tool
    async def export_agents() -> dict[str, Any]:
        """Export THIS server's LOCAL agents only, as the bourdon.agents/v1 envelope.

        Each agent is tagged source=<this machine>, source_kind="local"; private sessions are
        left out. This tool never asks peers: the federated export is assembled by the caller.
        """
        return await guard.run(
            "export_agents", None, lambda c, d: reads.export_agents(index, scope=scope_of(c))
        )

    @tool
    async def list_memory_versions(agent_id: str, limit: int | None = None) -> dict[str, Any]:
        """States of one agent's memory, newest first: the undo history.

        Each row carries an opaque version_id to pass to rollback_agent_memory and a digest8
        that joins to explain_memory_change. The first row is the state served now (marked
        current: true); to undo the last write, roll back to the next one. limit: default 20,
        at most 100.
        """
        return await guard.run(
            "list_memory_versions",
            agent_id,
            lambda c, d: writes.list_memory_versions(guard.library, agent_id, limit, seen_level(c)),
            thread=True,
            uses_index=False,
        )

    @tool
    async def explain_memory_change(agent_id: str, digest: str) -> dict[str, Any]:
        """Which write produced a given state of an agent's memory, and what it changed.

        Pass a manifest digest or a version's digest8. session_id and transcript_ref are
        caller-asserted and unverified; the recorded caller identity is not.
        """
        return await guard.run(
            "explain_memory_change",
            agent_id,
            lambda c, d: writes.explain_memory_change(
                guard.library, agent_id, digest, seen_level(c)
            ),
            thread=True,
            uses_index=False,
        )

    @tool
    async def prepare_recognition_context(
        prompt: str,
        access_level: str = "team",
        include_private: bool = False,
        federation_hop: int = 0,
    ) -> dict[str, Any]:
        """Return immediate recognition and a bounded prompt-context fragment.

        Call it at turn start and prepend prompt_context (at most 1,200 characters and 12
        lines, each marked as bourdon's and naming its agents) to the model prompt. It reads
        only the in-memory index and never waits on retrieval. drifting_surfaces is present
        only when a reader's store stopped yielding. federation_hop: see find_entity.
        """
        start = time.perf_counter()
        local = await guard.run(
            "prepare_recognition_context",
            None,
            lambda c, d: context.prepare_recognition_context(
                index, prompt, access_level, include_private, scope=scope_of(c)
            ),
            turn_start=True,
        )
        answer = await guard.federated(
            "prepare_recognition_context",
            {"prompt": prompt},
            local,
            federation_hop,
            merge_recognition,
            recognition=True,
        )
        if isinstance(answer, dict) and "peers_queried" in answer:
            answer["recognition_latency_us"] = round((time.perf_counter() - start) * 1e6, 1)
        return answer

    @tool
    async def get_deeper_context(
        prompt: str,
        access_level: str = "team",
        include_private: bool = False,
    ) -> dict[str, Any]:
        """Return post-recognition deeper context for the prompt.

        Separate from prepare_recognition_context so recognition never waits on it.
        Assembled from the local library without any model call: related sessions,
        workstreams and notes, with source, entities, doors (which retrieval door matched),
        truncated, and reason when empty.
        """
        return await guard.run(
            "get_deeper_context",
            None,
            lambda c, d: context.get_deeper_context(
                index, prompt, access_level, include_private, scope=scope_of(c)
            ),
        )

    @tool
    async def compile_codex_turn(
        prompt: str,
        cwd: str | None = None,
        access_level: str = "team",
        max_items: int = 6,
        max_chars: int = 1800,
    ) -> dict[str, Any]:
        """Compile a turn-scoped Codex recognition brief.

        Ranks what the prompt names, the working folder's project and earlier Codex work in
        that folder into a compact prompt fragment within max_items and max_chars.
        """
        return await guard.run(
            "compile_codex_turn",
            None,
            lambda c, d: context.compile_codex_turn(
                index, prompt, cwd, access_level, max_items, max_chars, scope=scope_of(c)
            ),
            turn_start=True,
        )

    @tool
    async def describe_caller() -> dict[str, Any]:
        """Describe the calling member: identity, tier, grants and what its writes do."""
        return await guard.run("describe_caller", None, lambda c, d: describe(c))


def merge_found(answer: dict[str, Any], answers: list[PeerAnswer], level: Visibility) -> None:
    merged = merge_matches(answer["matches"], answers, "matches", level)
    answer["matches"] = merged[: reads.MAX_MATCHES]
    answer["meta"].update(total_matches=len(merged), truncated=len(merged) > reads.MAX_MATCHES)


def merge_recent_work(answer: dict[str, Any], answers: list[PeerAnswer], level: Visibility) -> None:
    # Peer sessions join the first page on top of the local ones: cutting the page back to
    # `limit` would drop local sessions that next_cursor has already moved past.
    before = len(answer["sessions"])
    answer["sessions"] = merge_sessions(answer["sessions"], answers, "sessions", level)
    answer["meta"]["peer_sessions"] = len(answer["sessions"]) - before


def merge_summary(answer: dict[str, Any], answers: list[PeerAnswer], level: Visibility) -> None:
    answer["entities"] = merge_matches(answer["entities"], answers, "entities", level)
    answer["recent_sessions"] = merge_sessions(
        answer["recent_sessions"], answers, "recent_sessions", level
    )
    tagged = {a for e in answer["entities"] for a in e.get("agents", [])}
    tagged |= {s["agent"] for s in answer["recent_sessions"]}
    answer["agents"] = sorted(set(answer["agents"]) | tagged)


def merge_recognition(answer: dict[str, Any], answers: list[PeerAnswer], level: Visibility) -> None:
    known = {m["name"].casefold() for m in answer["matched_entities"]}
    answer["matched_entities"] = merge_matches(
        answer["matched_entities"], answers, "matched_entities", level
    )
    extra = [m for m in answer["matched_entities"] if m["name"].casefold() not in known]
    lines = answer["prompt_context"].split("\n") if answer["prompt_context"] else []
    limits = answer["meta"]
    for match in extra:
        line = (
            f"[bourdon:{', '.join(match['agents'][:2])}] {context.one_line(match['name'], 80)}"
            f" ({context.one_line(match.get('type') or 'topic', 30)})"
        )
        if not lines:
            lines.append(context.HEADER)
        if (
            len(lines) >= limits["max_lines"]
            or len("\n".join([*lines, line])) > limits["max_chars"]
        ):
            limits["truncated"] = True
            break
        lines.append(line)
    answer["prompt_context"] = "\n".join(lines) if len(lines) > 1 else ""


def describe(caller: Caller) -> dict[str, Any]:
    readable = caller.readable()
    anonymous = caller.is_anonymous
    return {
        "version": 1,  # the reference's descriptor version
        "member_id": caller.id,
        "tier": caller.tier,
        "transport": caller.transport,
        "authenticated": caller.transport != "stdio" and not anonymous,
        "grants": sorted(caller.grants),
        "readable_namespaces": "all" if readable is None else sorted(readable),
        "writes": "refused" if anonymous else "live" if caller.trusted else "staged for review",
        "writable_namespaces": [] if anonymous else "all" if caller.trusted else [caller.id],
        "can_rollback": caller.trusted,
        "private_rows": "visible on request" if caller.transport == "stdio" else "never",
    }


def register_write_tools(server: MCPServer, guard: Guard) -> None:
    @server.tool(annotations=WRITE)
    async def commit_to_federation(
        agent_id: str,
        agent_type: str | None = None,
        instance: str | None = None,
        role_narrative: str | None = None,
        entities: list[dict[str, Any]] | None = None,
        sessions: list[dict[str, Any]] | None = None,
        workstreams: list[dict[str, Any]] | None = None,
        notes: list[dict[str, Any]] | None = None,
        mode: str = "merge",
        session_id: str | None = None,
        transcript_ref: str | None = None,
        expected_digest: str | None = None,
    ) -> dict[str, Any]:
        """Write a contribution to the federation under agent_id, as one git commit.

        mode "merge" (default) unions rows with the manifest (entities by name ignoring case,
        sessions by date + cwd + session id, workstreams by name, notes by date + text; list
        fields unioned, other fields overwritten); "replace" writes only what is given and is
        destructive. agent_type is needed for a new agent. A result identical to the current
        manifest writes nothing and answers no_op with the unchanged digest. expected_digest
        guards against lost updates (a stale one is a 409 carrying the current digest).
        session_id and transcript_ref are recorded as provenance. Quarantined members may
        write only their own agent id, and their writes wait in staging until the operator
        promotes them.
        """

        def work(caller: Caller, decision: policy.Decision) -> dict[str, Any]:
            change = writes.build_change(
                agent_type, instance, role_narrative, entities, sessions, workstreams, notes
            )
            return writes.commit_to_federation(
                guard.library,
                agent_id,
                change,
                mode=mode,
                expected_digest=expected_digest,
                provenance=provenance_of(caller, session_id, transcript_ref),
                staged=decision.staged,
                level=seen_level(caller),
                local=caller.transport == "stdio",
            )

        return await guard.run(
            "commit_to_federation", agent_id, work, thread=True, uses_index=False
        )

    @server.tool(annotations=WRITE)
    async def rollback_agent_memory(
        agent_id: str,
        version_id: str,
        expected_digest: str | None = None,
        session_id: str | None = None,
        confirm: bool | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Restore an archived version of an agent's memory. TRUSTED ONLY.

        Discards every contribution made after the chosen version, as a new version, so the
        rollback itself can be undone. Pass expected_digest so a write made meanwhile is
        refused (409) rather than erased. dry_run=true (or confirm=false) only previews what
        would change and the current digest to pass back; nothing is written.
        """
        return await guard.run(
            "rollback_agent_memory",
            agent_id,
            lambda c, d: writes.rollback_agent_memory(
                guard.library,
                agent_id,
                version_id,
                expected_digest=expected_digest,
                dry_run=dry_run,
                confirm=confirm,
                provenance=provenance_of(c, session_id, None),
                level=seen_level(c),
            ),
            thread=True,
            uses_index=False,
        )


def _load_readers() -> health.Readers:
    from bourdon.readers import load_readers

    return load_readers()


def audience_of(caller: Caller) -> health.Audience:
    """What a caller may see of the library's health: its namespaces; private rows counted for
    the local operator only; paths, URLs and names of members, peers and remotes for trusted
    callers only (quarantined ones get counts)."""
    from bourdon.status.health import Audience

    return Audience(
        agents=caller.readable(),
        private=caller.transport == "stdio",
        detail=caller.trusted,
        me=caller.id,
    )


def register_status_tool(
    server: MCPServer, guard: Guard, make_status: Callable[[], health.LiveStatus]
) -> None:
    made: list[health.LiveStatus] = []

    def report(caller: Caller) -> dict[str, Any]:
        if not made:
            made.append(make_status())
        return made[0].report(audience_of(caller))

    @server.tool(annotations=READ_ONLY)
    async def memory_status() -> dict[str, Any]:
        """The library's health, as far as the caller may see it.

        Agents with row counts by section and visibility, schema versions, readers (last
        export, drift, erosion, hook failures), staged writes and their age, peers as the
        server last reached them (it never asks them for this), remotes, member counts, index
        freshness, and problems, each with the command that fixes it.
        """
        return await guard.run("memory_status", None, lambda c, d: report(c))


def register_resources(server: MCPServer, guard: Guard) -> None:
    index = guard.index

    async def as_json(op: str, namespace: str | None, read: Callable[[Caller], Any]) -> str:
        outcome: Any = await guard.run(op, namespace, lambda c, d: read(c))
        if isinstance(outcome, CallToolResult):
            outcome = outcome.structured_content
        return json.dumps(outcome, ensure_ascii=False)

    @server.resource("agent-library://agents", mime_type="application/json")
    async def list_agents_resource() -> str:
        """List of all agent IDs known to the federation."""
        return await as_json(
            "resource:agents", None, lambda c: reads.list_agents(index, scope=scope_of(c))["agents"]
        )

    @server.resource("agent-library://agents/{agent_id}/memory", mime_type="application/json")
    async def get_agent_memory_resource(agent_id: str) -> str:
        """Full visibility-filtered (public) L5 manifest of one agent; {"error"} if unknown."""
        return await as_json(
            "resource:agent_memory",
            agent_id,
            lambda c: reads.agent_memory(index, agent_id, Visibility.PUBLIC, scope=scope_of(c)),
        )

    @server.resource("agent-library://entities/{name}", mime_type="application/json")
    async def get_entity_resource(name: str) -> str:
        """Cross-agent view of one entity by name (public rows)."""
        return await as_json(
            "resource:entity",
            None,
            lambda c: reads.entity_view(index, name, Visibility.PUBLIC, scope=scope_of(c)),
        )
