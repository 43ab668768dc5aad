"""The MCP resources: agent ids, one agent's public manifest, one entity across agents.

They go through the guard like the tools (authorized, audited) and answer JSON text; an error
is its structured content, as a resource has no error flag.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp.types import CallToolResult

from bourdon.model import Visibility
from bourdon.query import reads
from bourdon.serve.caller import scope_of

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.access.callers import Caller
    from bourdon.serve.guard import Guard


def register_resources(server: MCPServer, guard: Guard) -> None:
    index = guard.index

    async def as_json(op: str, namespace: str | None, read: Callable[[Caller], Any]) -> str:
        outcome: Any = await guard.run(op, namespace, lambda c, d: read(c))
        if isinstance(outcome, CallToolResult):
            outcome = outcome.structured_content
        return json.dumps(outcome, ensure_ascii=False)

    async def public_view(
        op: str, namespace: str | None, view: Callable[..., Any], key: str
    ) -> str:
        """``view(index, key)`` at public visibility, as the caller may see it."""
        return await as_json(
            op, namespace, lambda c: view(index, key, Visibility.PUBLIC, scope=scope_of(c))
        )

    @server.resource("agent-library://agents", mime_type="application/json")
    async def list_agents_resource() -> str:
        """List of all agent IDs known to the federation."""
        return await as_json(
            "resource:agents", None, lambda c: reads.list_agents(index, scope=scope_of(c))["agents"]
        )

    @server.resource("agent-library://agents/{agent_id}/memory", mime_type="application/json")
    async def get_agent_memory_resource(agent_id: str) -> str:
        """Full visibility-filtered (public) L5 manifest of one agent; {"error"} if unknown."""
        return await public_view("resource:agent_memory", agent_id, reads.agent_memory, agent_id)

    @server.resource("agent-library://entities/{name}", mime_type="application/json")
    async def get_entity_resource(name: str) -> str:
        """Cross-agent view of one entity by name (public rows)."""
        return await public_view("resource:entity", None, reads.entity_view, name)
