"""``trace_entity``: an entity's timeline across every agent, read from git history.

It reads the library's history, not the index, so it runs in a worker thread and skips the
index refresh, as the history tools do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from bourdon.query.trace import trace_entity as trace
from bourdon.serve.caller import scope_of
from bourdon.serve.hints import READ_ONLY, tool
from bourdon.serve.params import AccessLevel, IncludePrivate

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.serve.guard import Guard


def register_trace_tools(server: MCPServer, guard: Guard) -> None:
    @tool(server, READ_ONLY)
    async def trace_entity(
        entity: Annotated[str, Field(description="The entity's name or one of its aliases.")],
        access_level: AccessLevel = "team",
        include_private: IncludePrivate = False,
        agent: Annotated[
            str | None, Field(description="Only this agent's history (default: every agent).")
        ] = None,
        limit: Annotated[
            int | None, Field(description="Keep the newest N events (default 200, at most 1000).")
        ] = None,
    ) -> dict[str, Any]:
        """Trace an entity's memory provenance and evolution across all agents.

        Returns the reference's entity trace (schema_version bourdon.entity-trace/v1: name,
        matched, types, tags, aliases, known_by, first_seen, last_touched, attributions,
        timeline) read from git history: each timeline event names its commit, op, caller (by),
        session and transcript, and the fields it changed ({field: {from, to}}). Kinds:
        entity_origin, changed, aliases_gained, renamed, visibility_changed, removed,
        restored. Versions the caller may not see are left out entirely. An unknown entity
        answers matched: false.
        """
        return await guard.run(
            "trace_entity",
            None,
            lambda c, d: trace(
                guard.library,
                entity,
                access_level,
                include_private,
                agent=agent,
                limit=limit,
                scope=scope_of(c),
            ),
            thread=True,
            uses_index=False,
        )
