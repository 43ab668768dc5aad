"""The library page: every agent the caller may see, with its rows counted at the page's
level (by kind and by visibility), a sparkline of its sessions, and the health problems
``memory_status`` reports to this caller."""

from __future__ import annotations

from collections import Counter
from typing import Any, Final

from starlette.responses import Response

from bourdon.access.visibility import Access, resolve
from bourdon.model import Visibility
from bourdon.query import reads
from bourdon.query.index import Index
from bourdon.serve.caller import scope_of
from bourdon.serve.web import agentrows
from bourdon.serve.web.app import Page
from bourdon.serve.web.chart import Series, sparkline
from bourdon.serve.web.links import href, segment
from bourdon.serve.web.view import View

SPARK_WEEKS: Final = 12  # the sparkline's last weeks of sessions


async def library(view: View) -> Response:
    index = view.server.bourdon_index  # type: ignore[attr-defined]
    level = view.level

    def work(caller, decision):  # type: ignore[no-untyped-def]
        access = resolve(level, level == "private", scope=scope_of(caller))
        return _agents(index, access, level)

    agents = await view.read("list_agents", None, work)
    status = await view.call("memory_status")
    # A private column only when the page reads private rows: a member or a team-level view
    # has none at all, not even an empty one.
    levels = [str(v) for v in Visibility if v <= Visibility.parse(level)]
    return view.render(
        "library.html",
        active="library",
        agents=agents,
        levels=levels,
        problems=status.get("problems") or [],
    )


def _agents(index: Index, access: Access, level: str) -> list[dict[str, Any]]:
    out = []
    for details in reads.agent_details(index, access):
        agent_id = details["id"]
        if not access.allows_agent(agent_id):
            continue
        rows = agentrows.visible(index.agents[agent_id], access)
        by_level = Counter(str(Visibility(r.visibility)) for kept in rows.values() for r in kept)
        weekly = agentrows.sessions_per_week(rows["sessions"])[-SPARK_WEEKS:]
        series = Series(
            f"spark-{agent_id}", f"Sessions per week of {agent_id}", ("session", "sessions"), weekly
        )
        out.append(
            {
                **details,
                "href": href("/agents/" + segment(agent_id), level),
                "by_visibility": by_level,
                "sparkline": sparkline(series) if weekly else None,
            }
        )
    return out


PAGES: Final = [Page("/", library)]
