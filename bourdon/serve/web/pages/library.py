"""The library page: every agent the caller may see, with its rows counted at the page's
level (by kind and by visibility), a sparkline of its sessions, and the health problems
``memory_status`` reports to this caller."""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import Response

from bourdon.access.visibility import Access, resolve
from bourdon.model import Visibility
from bourdon.query.index import Index
from bourdon.query.rows import AgentView
from bourdon.serve.caller import scope_of
from bourdon.serve.web import agentrows, memo
from bourdon.serve.web.agentrows import KINDS
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
        return [
            _agent(index, agent_id, access, level)
            for agent_id in sorted(index.agents)
            if access.allows_agent(agent_id)
        ]

    agents = await view.read("list_agents", None, work)
    status = await view.call("memory_status")
    # A private column only when the page reads private rows: a member or a team-level view
    # has none at all, not even an empty one.
    levels = [v for v in Visibility if v <= Visibility.parse(level)]
    return view.render(
        "library.html",
        active="library",
        agents=agents,
        levels=[str(v) for v in levels],
        problems=status.get("problems") or [],
    )


def _agent(index: Index, agent_id: str, access: Access, level: str) -> dict[str, Any]:
    """One agent's row: what ``reads.agent_details`` gives ``bourdon agents``, from the rows
    the memo keeps while the agent's manifest is unchanged (counting every agent's rows on
    each view cost more than the page's budget on a large library)."""
    found = index.agents[agent_id]
    return memo.remember(
        found, ("library-row", memo.seen_by(access)), lambda: _summary(found, access, level)
    )


def _summary(found: AgentView, access: Access, level: str) -> dict[str, Any]:
    agent_id = found.agent_id
    counted = agentrows.counts(found, access)
    sessions = [s for s in found.sessions if access.allows(s)]
    newest = max((s.date for s in sessions if s.date), default=None)
    weekly = agentrows.sessions_per_week(sessions, SPARK_WEEKS)
    series = Series(
        f"spark-{agent_id}", f"Sessions per week of {agent_id}", ("session", "sessions"), weekly
    )
    return {
        "id": agent_id,
        "type": found.agent.get("type"),
        "href": href("/agents/" + segment(agent_id), level),
        **{kind: sum(counted[kind].values()) for kind in KINDS},
        "by_visibility": {str(v): sum(counted[kind][v] for kind in KINDS) for v in Visibility},
        "freshest_session": newest,
        "sparkline": sparkline(series) if weekly else None,
    }


PAGES: Final = [Page("/", library)]
