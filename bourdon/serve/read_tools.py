"""The read tools over the library: entities, summaries, recent work, workstreams, notes,
agents and the local export. Each parses its input, calls one function of
``bourdon.query.reads`` through the guard, and, where the reference federates it, names how
the peers are asked (``AskPeers``).

Names, parameters and defaults follow the Bourdon tool reference exactly; extra keys (``meta``,
match kinds) and extra optional parameters are additive.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from bourdon.federation.answers import (
    merge_agents,
    merge_found,
    merge_recent_work,
    merge_summary,
)
from bourdon.query import reads
from bourdon.serve.caller import scope_of
from bourdon.serve.guard import AskPeers
from bourdon.serve.hints import READ_ONLY, tool
from bourdon.serve.params import (
    AccessLevel,
    AgentFilter,
    Cursor,
    FederationHop,
    IncludePrivate,
    Limit,
    Since,
    WorkstreamStatus,
)

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.serve.guard import Guard

MERGE_FOUND = functools.partial(merge_found, limit=reads.MAX_MATCHES)


def first_page(cursor: str | None, ask: AskPeers) -> AskPeers | None:
    """Peers join the first page only; later pages walk the local cursor."""
    return None if cursor else ask


def register_read_tools(server: MCPServer, guard: Guard) -> None:
    read = tool(server, READ_ONLY)
    index = guard.index

    @read
    async def find_entity(
        name: Annotated[
            str, Field(description="The entity's name or alias: a project, person, library...")
        ],
        access_level: AccessLevel = "public",
        include_private: IncludePrivate = False,
        federation_hop: FederationHop = 0,
    ) -> dict[str, Any]:
        """Find an entity by name across all agents.

        Exact and case-insensitive names and aliases first; when none matches, close
        misspellings. Each match says how it matched (exact, alias, fuzzy) and with what
        score. include_private defaults to False: private rows need access_level='private'
        and include_private=True, and are only ever shown to the local operator.
        federation_hop is the depth-1 guard peers pass; end clients leave it at 0.
        """
        return await guard.run(
            "find_entity",
            None,
            lambda c, d: reads.find_entity(
                index, name, access_level, include_private, scope=scope_of(c)
            ),
            peers=AskPeers({"name": name}, MERGE_FOUND, federation_hop),
        )

    @read
    async def query_agent_memory(
        agent: Annotated[str, Field(description="The agent whose memory to search, by agent id.")],
        topic: Annotated[str, Field(description="A name, alias or near miss to look for.")],
        access_level: AccessLevel = "public",
        include_private: IncludePrivate = False,
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

    @read
    async def get_cross_agent_summary(
        project: Annotated[str, Field(description="The project's name or one of its aliases.")],
        access_level: AccessLevel = "public",
        include_private: IncludePrivate = False,
        federation_hop: FederationHop = 0,
        limit: Limit = None,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """Aggregate everything the federation knows about a project.

        Returns the agents that touched it, recent sessions whose project_focus names it or
        one of its aliases (paginated: limit default 20, max 100, next_cursor/has_more), the
        entity matches, and related workstreams and notes.
        """
        ask = AskPeers({"project": project, "limit": limit}, merge_summary, federation_hop)
        return await guard.run(
            "get_cross_agent_summary",
            None,
            lambda c, d: reads.get_cross_agent_summary(
                index, project, access_level, include_private, limit, cursor, scope=scope_of(c)
            ),
            peers=first_page(cursor, ask),
        )

    @read
    async def list_recent_work(
        since: Since = None,
        agent: AgentFilter = None,
        access_level: AccessLevel = "public",
        include_private: IncludePrivate = False,
        limit: Limit = None,
        cursor: Cursor = None,
        summary: Annotated[
            bool, Field(description="Leave out each session's key_actions and files_touched.")
        ] = False,
        federation_hop: FederationHop = 0,
    ) -> dict[str, Any]:
        """Return a page of sessions across agents (or a single agent), newest first.

        since: ISO date or date-time; when both since and cursor are omitted a 14-day window
        applies. limit: page size, default 20, capped at 100. cursor: pass the previous
        page's next_cursor until has_more is false. summary: omit key_actions and
        files_touched.
        """
        ask = AskPeers(
            {"since": since, "agent": agent, "limit": limit, "summary": summary},
            merge_recent_work,
            federation_hop,
        )
        return await guard.run(
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
            peers=first_page(cursor, ask),
        )

    @read
    async def list_workstreams(
        status: WorkstreamStatus = None,
        agent: AgentFilter = None,
        access_level: AccessLevel = "public",
        include_private: IncludePrivate = False,
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

    @read
    async def list_notes(
        since: Since = None,
        agent: AgentFilter = None,
        access_level: AccessLevel = "public",
        include_private: IncludePrivate = False,
        limit: Limit = None,
        cursor: Cursor = None,
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

    @read
    async def list_agents(federation_hop: FederationHop = 0) -> dict[str, Any]:
        """List agent IDs known to this L6 server."""
        return await guard.run(
            "list_agents",
            None,
            lambda c, d: reads.list_agents(index, federation_hop, scope=scope_of(c)),
            peers=AskPeers({}, merge_agents, federation_hop),
        )

    @read
    async def export_agents() -> dict[str, Any]:
        """Export THIS server's LOCAL agents only, as the bourdon.agents/v1 envelope.

        Each agent is tagged source=<this machine>, source_kind="local"; private sessions are
        left out. This tool never asks peers: the federated export is assembled by the caller.
        """
        return await guard.run(
            "export_agents", None, lambda c, d: reads.export_agents(index, scope=scope_of(c))
        )
