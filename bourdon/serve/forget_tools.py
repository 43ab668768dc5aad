"""The ``forget`` tool: an entity out of the live manifests, as one commit per agent.

Trusted callers write live; a quarantined caller may forget only in its own agent id, and that
forget is staged for the operator's review (policy ``own``, like ``commit_to_federation``).
Only rows the caller can see are touched or counted. There is no MCP purge: rewriting history
is the local operator's command (``bourdon purge``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from bourdon.access.callers import QUARANTINED
from bourdon.serve.caller import provenance_of, seen_level
from bourdon.serve.hints import WRITE, tool
from bourdon.serve.httpgate import current_caller
from bourdon.serve.params import SessionId

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.access import policy
    from bourdon.access.callers import Caller
    from bourdon.serve.guard import Guard


def register_forget_tools(server: MCPServer, guard: Guard) -> None:
    @tool(server, WRITE)
    async def forget(
        name: Annotated[str, Field(description="The entity's name or one of its aliases.")],
        agent_id: Annotated[
            str | None,
            Field(description="Forget only in this agent's manifest (default: every agent)."),
        ] = None,
        session_id: SessionId = None,
    ) -> dict[str, Any]:
        """Remove an entity and its mentions from live memory, one commit per agent.

        Rows of known_entities whose name or alias is `name` (ignoring case) go, and so do its
        mentions in workstreams' and notes' related_entities and sessions' project_focus. A
        tombstone keeps a later export from bringing it back; history keeps the old versions.
        Returns {name, staged, agents: [{agent_id, removed: {section: count}, version,
        digest}]}. An unknown name is a 404. Quarantined members forget only in their own
        agent id, and their forget waits in staging for review.
        """

        def work(caller: Caller, decision: policy.Decision) -> dict[str, Any]:
            target = agent_id
            if decision.staged and target is None:
                target = caller.id
            done = guard.library.forget(
                name,
                agent_id=target,
                provenance=provenance_of(caller, session_id, None),
                level=seen_level(caller),
                staged_by=caller.id if decision.staged else None,
            )
            return {
                "name": name,
                "staged": decision.staged,
                "agents": [
                    {
                        "agent_id": d.agent_id,
                        "removed": d.counts,
                        "version": d.result.version,
                        "digest": d.result.digest,
                    }
                    for d in done
                ],
            }

        # A quarantined member that names no agent forgets in its own namespace only.
        caller = current_caller()
        namespace = agent_id
        if namespace is None and caller.tier == QUARANTINED:
            namespace = caller.id
        return await guard.run("forget", namespace, work, writes=True)
