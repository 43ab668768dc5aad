"""The agent page: one agent's rows by kind, filtered, sorted and paged, with its charts.

Read under the policy rule of ``resource:agent_memory`` (``granted``), from the index's rows
with ``Access.allows`` applied before anything is counted. An agent that does not exist and
one a member was not granted answer the same 404, so the page never confirms that a namespace
exists to someone who may not read it.
"""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import Response

from bourdon.access.visibility import Access, resolve
from bourdon.model import SESSIONS, Visibility
from bourdon.query.rows import AgentView
from bourdon.serve.caller import scope_of
from bourdon.serve.web import agentrows, memo
from bourdon.serve.web.agentrows import KINDS, SORTS
from bourdon.serve.web.app import Page
from bourdon.serve.web.chart import Series, svg
from bourdon.serve.web.links import href, segment
from bourdon.serve.web.view import ToolFailed, View

MAX_FILTER: Final = 200  # characters of the filter box that are used
NOT_HERE: Final = (400, 403, 404)  # a bad id, a namespace not granted, an unknown agent
CHART_NOTE: Final = (
    "Counted by the date each row carries: sessions and notes their date, workstreams when "
    "they started, entities when they were last touched; cumulative at each week's end."
)


async def agent(view: View) -> Response:
    agent_id = view.request.path_params["agent_id"]
    asked = view.request.query_params
    kind = asked.get("kind", "") if asked.get("kind") in KINDS else "entities"
    q = asked.get("q", "")[:MAX_FILTER]
    sort = agentrows.chosen_sort(kind, asked.get("sort", ""))
    level = view.level
    index = view.server.bourdon_index  # type: ignore[attr-defined]

    def work(caller, decision):  # type: ignore[no-untyped-def]
        access = resolve(level, level == "private", scope=scope_of(caller))
        found = index.agents.get(agent_id)
        if found is None or not access.allows_agent(agent_id):
            return None
        return _facts(found, access, kind, q, sort, asked.get("page", "1"))

    try:
        facts = await view.read("resource:agent_memory", agent_id, work)
    except ToolFailed as failed:
        if failed.status not in NOT_HERE:
            raise
        facts = None
    if facts is None:
        message = f"no agent {agent_id!r} here; the library page lists the agents you may read"
        return view.web.error(view, 404, message)
    return view.render("agent.html", active="library", **facts, **_links(facts, level))


def _facts(
    found: AgentView, access: Access, kind: str, q: str, sort: str, page: str
) -> dict[str, Any]:
    """Everything the page shows, from the rows ``access`` allows only."""
    rows = agentrows.visible(found, access)
    shown = agentrows.page_of(agentrows.select(found, access, kind, q, sort), page)
    tags = _session_tags(found, shown.rows) if kind == "sessions" else {}
    seen = memo.seen_by(access)
    timeline = memo.remember(found, ("timeline", seen), lambda: agentrows.rows_over_time(rows))
    weekly = memo.remember(
        found, ("weekly", seen), lambda: agentrows.sessions_per_week(rows["sessions"])
    )
    return {
        "agent": {
            "id": found.agent_id,
            "type": found.agent.get("type"),
            "last_updated": found.data.get("last_updated"),
        },
        "kind": kind,
        "q": q,
        "sort": sort,
        "sorts": [(value, label) for value, label, *_ in SORTS[kind]],
        "counts": {k: len(rows[k]) for k in KINDS},
        "page": shown,
        "rows": [_row(r, tags.get(id(r))) for r in shown.rows],
        "weekly": weekly,
        "timeline": timeline,
    }


def _row(row: Any, tags: tuple[str, ...] | None) -> dict[str, Any]:
    return {
        "row": row,
        "visibility": str(Visibility(row.visibility)),
        "tags": tags if tags is not None else getattr(row, "tags", ()),
    }


def _session_tags(found: AgentView, shown: Any) -> dict[int, tuple[str, ...]]:
    """Tags of the sessions shown (the index's session rows do not keep them): each row of
    ``found.sessions`` was made from the served manifest's session at the same position."""

    def make() -> tuple[list[dict[str, Any]], dict[int, int]]:
        served = [r for r in found.served_data.get(SESSIONS) or () if isinstance(r, dict)]
        return served, {id(r): i for i, r in enumerate(found.sessions)}

    served, at = memo.remember(found, "session-positions", make)
    if len(served) != len(found.sessions):
        return {}
    out = {}
    for row in shown:
        raw = served[at[id(row)]].get("tags")
        out[id(row)] = tuple(t for t in raw if isinstance(t, str)) if isinstance(raw, list) else ()
    return out


def _links(facts: dict[str, Any], level: str) -> dict[str, Any]:
    """The page's links, each keeping the level (and the kind, filter and sort it pages)."""
    agent_id, kind, q, sort = facts["agent"]["id"], facts["kind"], facts["q"], facts["sort"]
    path = "/agents/" + segment(agent_id)
    shown = facts["page"]
    default_sort = SORTS[kind][0][0]

    def page_link(number: int) -> str:
        return href(
            path,
            level,
            kind=None if kind == "entities" else kind,
            q=q,
            sort=None if sort == default_sort else sort,
            page=number,
        )

    timeline = facts["timeline"]
    weekly = Series("sessions-week", "Sessions per week", ("session", "sessions"), facts["weekly"])
    note = CHART_NOTE
    if timeline.undated:
        note += f" {timeline.undated:,} rows without a date are not counted."
    if timeline.before:
        start = timeline.points[0][0]
        note += f" {timeline.before:,} rows dated before the week of {start} count from it."
    growth = Series("rows-time", "Rows over time", ("row", "rows"), timeline.points, "line", note)
    return {
        "path": href(path),
        "tabs": [
            (k, facts["counts"][k], href(path, level, kind=None if k == "entities" else k))
            for k in KINDS
        ],
        "clear": href(path, level, kind=None if kind == "entities" else kind),
        "previous": page_link(shown.number - 1) if shown.number > 1 else None,
        "next": page_link(shown.number + 1) if shown.number < shown.pages else None,
        "history": href("/history", level, agent=agent_id),
        "entity_href": lambda name: href("/entity", level, name=name),
        "charts": {"weekly": svg(weekly), "growth": svg(growth), "note": note},
        "busiest": max(facts["weekly"], key=lambda p: p[1], default=None),
    }


PAGES: Final = [Page("/agents/{agent_id}", agent)]
