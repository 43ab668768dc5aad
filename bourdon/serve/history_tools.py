"""The history read tools: an agent's versions (the undo history) and which write made a state.

They read git history, not the index, so they run in a worker thread and skip the index
refresh.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from bourdon.serve.caller import seen_level
from bourdon.serve.hints import READ_ONLY, tool
from bourdon.serve.params import AgentId
from bourdon.serve.writes import history

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.serve.guard import Guard
    from bourdon.store.library import Library


def register_history_tools(server: MCPServer, guard: Guard) -> None:
    read = tool(server, READ_ONLY)

    async def from_history(
        op: str, agent_id: str, read: Callable[[Library, str, Any, int], dict[str, Any]], arg: Any
    ) -> dict[str, Any]:
        """``read(library, agent_id, arg, level)`` at the caller's level, off the event loop."""
        return await guard.run(
            op,
            agent_id,
            lambda c, d: read(guard.library, agent_id, arg, seen_level(c)),
            thread=True,
            uses_index=False,
        )

    @read
    async def list_memory_versions(
        agent_id: AgentId,
        limit: Annotated[
            int | None, Field(description="Versions to list: default 20, at most 100.")
        ] = None,
    ) -> dict[str, Any]:
        """States of one agent's memory, newest first: the undo history.

        Each row carries an opaque version_id to pass to rollback_agent_memory and a digest8
        that joins to explain_memory_change. The first row is the state served now (marked
        current: true); to undo the last write, roll back to the next one. limit: default 20,
        at most 100.
        """
        return await from_history(
            "list_memory_versions", agent_id, history.list_memory_versions, limit
        )

    @read
    async def explain_memory_change(
        agent_id: AgentId,
        digest: Annotated[
            str, Field(description="A manifest digest (sha256:...) or a version's digest8.")
        ],
    ) -> dict[str, Any]:
        """Which write produced a given state of an agent's memory, and what it changed.

        Pass a manifest digest or a version's digest8. session_id and transcript_ref are
        caller-asserted and unverified; the recorded caller identity is not.
        """
        return await from_history(
            "explain_memory_change", agent_id, history.explain_memory_change, digest
        )
