"""The ``memory_status`` tool: the library's health, as far as the caller may see it.

The health machinery is made on the first call (``make_status``), so neither it nor the reader
plugins it reports on weigh on the server's start-up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bourdon.serve.caller import audience_of
from bourdon.serve.hints import READ_ONLY, tool

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from bourdon.access.callers import Caller
    from bourdon.serve.guard import Guard
    from bourdon.status import health


def register_status_tool(
    server: MCPServer, guard: Guard, make_status: Callable[[], health.LiveStatus]
) -> None:
    made: list[health.LiveStatus] = []

    def report(caller: Caller) -> dict[str, Any]:
        if not made:
            made.append(make_status())
        return made[0].report(audience_of(caller))

    @tool(server, READ_ONLY)
    async def memory_status() -> dict[str, Any]:
        """The library's health, as far as the caller may see it.

        Agents with row counts by section and visibility, schema versions, readers (last
        export, drift, erosion, hook failures), staged writes and their age, peers as the
        server last reached them (it never asks them for this), remotes, member counts, index
        freshness, and problems, each with the command that fixes it.
        """
        return await guard.run("memory_status", None, lambda c, d: report(c))
