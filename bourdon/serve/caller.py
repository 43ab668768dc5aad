"""The caller, as the tools need it: what it may see, what its writes record, what it is told
about itself (``describe_caller``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bourdon.access.callers import Caller
from bourdon.access.visibility import Scope
from bourdon.serve.hints import READ_ONLY, tool
from bourdon.store.provenance import Provenance

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.serve.guard import Guard
    from bourdon.status import health


def seen_level(caller: Caller) -> int:
    """The widest visibility a caller is ever shown (``Caller.ceiling``)."""
    return int(caller.ceiling)


def scope_of(caller: Caller) -> Scope:
    return Scope(caller.readable(), caller.transport == "stdio", caller.ceiling, caller.keep_home)


def provenance_of(caller: Caller, session_id: str | None, transcript_ref: str | None) -> Provenance:
    return Provenance(caller=caller.id, session=session_id, transcript=transcript_ref)


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


def register_caller_tool(server: MCPServer, guard: Guard) -> None:
    @tool(server, READ_ONLY)
    async def describe_caller() -> dict[str, Any]:
        """Describe the calling member: identity, tier, grants and what its writes do."""
        return await guard.run("describe_caller", None, lambda c, d: describe(c))
