"""The L6 MCP server: ``create_server(library_path)`` -> an ``MCPServer`` over one library.

This module only wires: it reads the configuration (home, peers and their tokens, machine
name), opens the library and its index, builds the ``Guard`` every tool and resource goes
through, and registers the tools (``read_tools``, ``history_tools``, ``turn_tools``,
``walk_tools``, ``caller``, ``write_tools``, ``status_tool``) and ``resources``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server import MCPServer

from bourdon import __version__
from bourdon.access.audit import AuditLog
from bourdon.access.trust import MemberRegistry
from bourdon.federation.client import DEFAULT_DEADLINE, RECOGNITION_DEADLINE
from bourdon.model import Visibility
from bourdon.query.index import Index
from bourdon.serve.caller import register_caller_tool
from bourdon.serve.config import bourdon_home, build_federation, machine_name, reader_context
from bourdon.serve.forget_tools import register_forget_tools
from bourdon.serve.guard import Guard
from bourdon.serve.history_tools import register_history_tools
from bourdon.serve.read_tools import register_read_tools
from bourdon.serve.resources import register_resources
from bourdon.serve.search_tools import register_search_tools
from bourdon.serve.status_tool import register_status_tool
from bourdon.serve.trace_tools import register_trace_tools
from bourdon.serve.turn_tools import register_turn_tools
from bourdon.serve.walk_tools import register_walk_tools
from bourdon.serve.warmup import IdleWarmup
from bourdon.serve.watch import watch_agents
from bourdon.serve.write_tools import register_write_tools
from bourdon.store.library import Library
from bourdon.store.manifestcache import ManifestCache

if TYPE_CHECKING:
    from bourdon.federation.backoff import Backoff
    from bourdon.federation.peers import Peer
    from bourdon.readers.base import ReaderContext
    from bourdon.status import health

INSTRUCTIONS = (
    "bourdon is the shared memory of the user's AI coding agents. Use find_entity to learn "
    "what any agent knows about a project, person, library or decision; list_recent_work for "
    "what was done lately; get_cross_agent_summary for everything about one project; "
    "commit_to_federation to share something worth remembering."
)


def create_server(
    library: str | Path,
    *,
    index: Index | None = None,
    watch: bool = True,
    home: Path | None = None,
    peers: list[Peer] | None = None,
    peers_file: bool = True,
    deadlines: tuple[float, float] = (RECOGNITION_DEADLINE, DEFAULT_DEADLINE),
    peer_backoff: Backoff | None = None,
    readers: health.Readers | None = None,
    reader_ctx: ReaderContext | None = None,
) -> MCPServer:
    """An MCP server answering from the library at ``library``.

    ``home`` holds the members and the audit log (default ``$BOURDON_HOME``, else
    ``~/.bourdon``); the peers are ``peers`` and, unless ``peers_file`` is false, those of
    ``home``'s ``peers.yaml``; a peer that fails is skipped as ``peer_backoff`` says, by its
    clock (default ``Backoff()``: 1 s, doubled up to 60 s). ``index`` may be shared with the
    caller (tests, benchmarks); ``watch`` starts a file watcher for the server's lifetime.
    ``memory_status`` reports the registered readers (``readers``: ``(readers by name, broken
    plugins)`` instead) as seen from this user's home and environment (``reader_ctx``
    instead).
    """
    root = Path(library).expanduser().absolute()
    home = home or bourdon_home()
    # A cold start writes the cache entries of what it parsed once it is idle (see warmup).
    idx = index or Index(root, ManifestCache(root / ".bourdon" / "cache", deferred=True))
    idx.refresh()
    registry = MemberRegistry(home)
    federation = build_federation(home, peers or [], peers_file=peers_file, backoff=peer_backoff)
    opened = Library.open(root, machine=machine_name())
    guard = Guard(idx, opened, registry, AuditLog(home), federation, deadlines)

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        stop = watch_agents(idx) if watch else (lambda: None)
        if federation is not None:
            federation.warm()  # build the HTTP client (and its TLS context) before any deadline
        # Build turn-start recognition for the default level and the typo indexes once the
        # opening calls are answered, so the first prompt of the session does not pay for
        # them (see warmup).
        warmup.start()
        try:
            yield {"index": idx}
        finally:
            stop()
            idx.cache.flush()  # whatever the warm-up had no time to write
            if federation is not None:
                await federation.aclose()

    def warm_up() -> None:
        idx.cache.flush()
        idx.warm(int(Visibility.TEAM))

    warmup = IdleWarmup(warm_up)
    with _sdk_logging_setup_skipped():
        server: MCPServer = MCPServer(
            "bourdon",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level="WARNING",
            lifespan=lifespan,
            middleware=[warmup],
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

    # Registered in the order the tools are listed to clients.
    register_read_tools(server, guard)
    register_history_tools(server, guard)
    register_trace_tools(server, guard)
    register_search_tools(server, guard)
    register_turn_tools(server, guard)
    register_walk_tools(server, guard)
    register_caller_tool(server, guard)
    register_write_tools(server, guard)
    register_forget_tools(server, guard)
    register_status_tool(server, guard, live_status)
    register_resources(server, guard)
    server.bourdon_index = idx  # type: ignore[attr-defined]  # for the startup line and tests
    server.bourdon_guard = guard  # type: ignore[attr-defined]
    return server


@contextlib.contextmanager
def _sdk_logging_setup_skipped() -> Iterator[None]:
    """Build an ``MCPServer`` without its logging set-up, which imports ``rich`` (a tenth of a
    second of every start) to install a handler on the root logger. The CLI sets up logging
    itself (to stderr, which stdio leaves free); an embedding program keeps its own."""
    from mcp.server.mcpserver import server as sdk

    setup = getattr(sdk, "configure_logging", None)
    if setup is None:  # another SDK version: nothing to skip
        yield
        return
    setattr(sdk, "configure_logging", lambda *_args, **_kwargs: None)  # noqa: B010
    try:
        yield
    finally:
        setattr(sdk, "configure_logging", setup)  # noqa: B010


def _load_readers() -> health.Readers:
    from bourdon.readers import load_readers

    return load_readers()
