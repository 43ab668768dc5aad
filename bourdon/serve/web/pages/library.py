"""The library page: every agent the caller may see, with its rows counted at the page's
level, and the health problems ``memory_status`` reports."""

from __future__ import annotations

from typing import Final

from starlette.responses import Response

from bourdon.access.visibility import resolve
from bourdon.query import reads
from bourdon.serve.caller import scope_of
from bourdon.serve.web.app import Page
from bourdon.serve.web.view import View


async def library(view: View) -> Response:
    index = view.server.bourdon_index  # type: ignore[attr-defined]
    level = view.level

    def work(caller, decision):  # type: ignore[no-untyped-def]
        scope = scope_of(caller)
        access = resolve(level, level == "private", scope=scope)
        return [a for a in reads.agent_details(index, access) if access.allows_agent(a["id"])]

    agents = await view.read("list_agents", None, work)
    return view.render("library.html", active="library", agents=agents)


PAGES: Final = [Page("/", library)]
