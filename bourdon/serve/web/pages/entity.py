"""The entity page: every agent's view of one name side by side, its trace timeline, and the
rows around it, all from the tools (``find_entity``, ``trace_entity``, ``expand_neighbors``)
so that each part shows exactly what those tools answer this caller at the page's level."""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import Response

from bourdon.serve.web.app import Page
from bourdon.serve.web.view import View

TIMELINE: Final = 100  # newest events shown; the page says how many more there are
NEIGHBOURS: Final = 24  # the most expand_neighbors gives in one call
SESSIONS_SHOWN: Final = 5  # per card; the agent page lists the rest


async def entity(view: View) -> Response:
    name = view.request.query_params.get("name", "").strip()
    if not name:
        return view.render("entity.html", status=400, name="", entity=None, near=[], hidden=[])
    level = view.level_args()
    found = await view.call("find_entity", name=name, **level)
    matches = found.get("matches") or []
    known = [m for m in matches if m.get("match") != "fuzzy"]
    near = [m for m in matches if m.get("match") == "fuzzy"]
    hidden = (found.get("meta") or {}).get("hidden") or []
    if not known:
        # A name nobody knows is an answer, not an error: offer what is close to it.
        return view.render("entity.html", name=name, entity=None, near=near, hidden=hidden)
    main = known[0]
    trace = await view.call("trace_entity", entity=main["name"], limit=TIMELINE, **level)
    rows = await view.call("expand_neighbors", name=main["name"], limit=NEIGHBOURS, **level)
    # Entities are two hops away (through the workstream or note that names both), and the
    # rows that name it would fill a depth-2 answer first: ask for the entities alone.
    linked = await view.call(
        "expand_neighbors", name=main["name"], depth=2, types=["entity"], limit=NEIGHBOURS, **level
    )
    return view.render(
        "entity.html",
        name=name,
        entity=main,
        others=known[1:],
        cards=cards(main, trace),
        timeline=list(reversed(trace.get("timeline") or [])),
        trace_meta=trace.get("meta") or {},
        rows=rows.get("neighbors") or [],
        linked=linked.get("neighbors") or [],
        via=names_of(rows.get("neighbors") or []),
        near=near,
        hidden=hidden,
    )


def cards(match: dict[str, Any], trace: dict[str, Any]) -> list[dict[str, Any]]:
    """One card per agent holding the entity: its own summary (``find_entity``) and its own
    type, aliases, tags, visibility, dates and sessions (the trace's live attribution)."""
    live = {a["agent_id"]: a for a in trace.get("attributions") or [] if a.get("current")}
    summaries = match.get("summaries") or {}
    out = []
    for agent in match.get("agents") or []:
        seen = live.get(agent) or {}
        sessions = seen.get("matching_sessions") or []
        newest = sorted(sessions, key=lambda s: str(s.get("date") or ""), reverse=True)
        out.append(
            {
                "agent": agent,
                "local": not agent.startswith("peer:"),  # a peer's agent has no page here
                "summary": summaries.get(agent, ""),
                "types": seen.get("types") or [],
                "aliases": seen.get("aliases") or [],
                "tags": seen.get("tags") or [],
                "visibility": seen.get("visibility"),
                "last_touched": seen.get("last_touched"),
                "first_seen": seen.get("first_seen"),
                "versions": seen.get("version_count"),
                "sessions": newest[:SESSIONS_SHOWN],
                "session_count": len(sessions),
                "workstreams": seen.get("matching_workstreams") or [],
                "notes": seen.get("matching_notes") or [],
            }
        )
    return out


def names_of(neighbours: list[dict[str, Any]]) -> dict[str, str]:
    """Row id -> its name, to say which row links two entities."""
    return {n["id"]: str(n.get("name") or n["id"]) for n in neighbours}


PAGES: Final = [Page("/entity", entity)]
