"""The L6 MCP server: ``create_server(library_path)`` -> an ``MCPServer`` over one library.

Tools are thin: refresh the index (a few microseconds when nothing changed), call the matching
function of ``bourdon.reads`` and return its dict. A ``BourdonError`` becomes an MCP tool error
whose structured content is ``{"error": {"code", "status", "message", "retryable"}}``; anything
unexpected becomes the same with status 500 and is logged, never raised through to the client.

Names, parameters and defaults follow the Bourdon tool reference exactly; extra keys (``meta``,
match kinds) and extra optional parameters are additive.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, cast

from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from bourdon import __version__, reads
from bourdon.errors import BourdonError
from bourdon.index import Index
from bourdon.model import Visibility

log = logging.getLogger("bourdon.server")

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "bourdon is the shared memory of the user's AI coding agents. Use find_entity to learn "
    "what any agent knows about a project, person, library or decision; list_recent_work for "
    "what was done lately; get_cross_agent_summary for everything about one project."
)


def error_result(exc: BourdonError) -> CallToolResult:
    body = exc.to_dict()
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


class _Internal(BourdonError):
    """Stands for an unexpected failure in an answer: status 500, no details leaked."""


async def answer(index: Index, read: Callable[[], Any]) -> dict[str, Any]:
    """Run one read against a fresh index, turning every failure into a tool error.

    A tool error is a ``CallToolResult``, which the SDK passes through unchanged although the
    tools are typed as returning their answer dict (that type drives their output schema).
    """
    try:
        index.refresh()
        return cast(dict[str, Any], read())
    except BourdonError as exc:
        failure = error_result(exc)
    except Exception:
        log.exception("unexpected failure while answering a tool call")
        failure = error_result(_Internal("bourdon failed to answer; the server log says why"))
    return cast(dict[str, Any], failure)


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
    library: str | Path, *, index: Index | None = None, watch: bool = True
) -> MCPServer:
    """An MCP server answering from the library at ``library``.

    ``index`` may be shared with the caller (tests, benchmarks); ``watch`` starts a file
    watcher for the server's lifetime.
    """
    root = Path(library).expanduser().absolute()
    idx = index or Index(root)
    idx.refresh()

    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[dict[str, Any]]:
        stop = _watch(idx) if watch else (lambda: None)
        try:
            yield {"index": idx}
        finally:
            stop()

    server: MCPServer = MCPServer(
        "bourdon",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        lifespan=lifespan,
    )
    register_read_tools(server, idx)
    register_resources(server, idx)
    server.bourdon_index = idx  # type: ignore[attr-defined]  # for the startup line and tests
    return server


def register_read_tools(server: MCPServer, index: Index) -> None:
    tool = server.tool(annotations=READ_ONLY)

    @tool
    async def find_entity(
        name: str,
        access_level: str = "public",
        include_private: bool = False,
        federation_hop: int = 0,
    ) -> dict[str, Any]:
        """Find an entity by name across all agents.

        Exact and case-insensitive names and aliases come first, then close misspellings;
        each match says how it matched (exact, alias, fuzzy) and with what score.
        include_private defaults to False: private rows need access_level='private' and
        include_private=True. federation_hop is the depth-1 guard peers pass; end clients
        leave it at 0.
        """
        return await answer(
            index, lambda: reads.find_entity(index, name, access_level, include_private)
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
        return await answer(
            index,
            lambda: reads.query_agent_memory(index, agent, topic, access_level, include_private),
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
        return await answer(
            index,
            lambda: reads.get_cross_agent_summary(
                index, project, access_level, include_private, limit, cursor
            ),
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
        return await answer(
            index,
            lambda: reads.list_recent_work(
                index, since, agent, access_level, include_private, limit, cursor, summary
            ),
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
        return await answer(
            index,
            lambda: reads.list_workstreams(index, status, agent, access_level, include_private),
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
        return await answer(
            index,
            lambda: reads.list_notes(
                index, since, agent, access_level, include_private, limit, cursor
            ),
        )

    @tool
    async def list_agents(federation_hop: int = 0) -> dict[str, Any]:
        """List agent IDs known to this L6 server."""
        return await answer(index, lambda: reads.list_agents(index, federation_hop))

    @tool
    async def export_agents() -> dict[str, Any]:
        """Export THIS server's LOCAL agents only, as the bourdon.agents/v1 envelope.

        Each agent is tagged source=<this machine>, source_kind="local"; private sessions are
        left out. This tool never asks peers: the federated export is assembled by the caller.
        """
        return await answer(index, lambda: reads.export_agents(index))


def register_resources(server: MCPServer, index: Index) -> None:
    async def as_json(read: Callable[[], Any]) -> str:
        outcome: Any = await answer(index, read)
        if isinstance(outcome, CallToolResult):
            outcome = outcome.structured_content
        return json.dumps(outcome, ensure_ascii=False)

    @server.resource("agent-library://agents", mime_type="application/json")
    async def list_agents_resource() -> str:
        """List of all agent IDs known to the federation."""
        return await as_json(lambda: sorted(index.agents))

    @server.resource("agent-library://agents/{agent_id}/memory", mime_type="application/json")
    async def get_agent_memory_resource(agent_id: str) -> str:
        """Full visibility-filtered (public) L5 manifest of one agent; {"error"} if unknown."""
        return await as_json(lambda: reads.agent_memory(index, agent_id, Visibility.PUBLIC))

    @server.resource("agent-library://entities/{name}", mime_type="application/json")
    async def get_entity_resource(name: str) -> str:
        """Cross-agent view of one entity by name (public rows)."""
        return await as_json(lambda: reads.entity_view(index, name, Visibility.PUBLIC))
