"""The search page: ``search_federation`` over every row the caller may see, its snippets
with the matched words marked, filters by agent and kind, and a "More results" cursor."""

from __future__ import annotations

from typing import Any, Final

from starlette.responses import Response

from bourdon.serve.web.app import Page
from bourdon.serve.web.filters import marked
from bourdon.serve.web.view import View

PER_PAGE: Final = 20
# A row kind as search_federation names it -> the agent page's tab (and the filter's label).
KINDS: Final = {
    "entity": "entities",
    "session": "sessions",
    "workstream": "workstreams",
    "note": "notes",
}


async def search(view: View) -> Response:
    params = view.request.query_params
    q = params.get("q", "").strip()
    agent = params.get("agent", "").strip()
    kind = params.get("kind", "").strip()
    cursor = params.get("cursor", "").strip()
    level = view.level_args()
    listed = await view.call("list_agents", **level)
    # Peers' agents have no namespace here to filter on (search_federation takes local ids).
    agents = [a for a in listed.get("agents") or [] if not str(a).startswith("peer:")]
    context: dict[str, Any] = {
        "active": "search",
        "q": q,
        "agent": agent,
        "kind": kind,
        "kinds": KINDS,
        "agents": agents,
        "results": [],
        "answer": None,
    }
    if not q:
        return view.render("search.html", **context)
    answer = await view.call(
        "search_federation",
        query=q,
        top_k=PER_PAGE,
        agent=agent or None,
        kind=kind or None,
        cursor=cursor or None,
        **level,
    )
    context["answer"] = answer
    context["results"] = [hit(r, q) for r in answer.get("results") or []]
    return view.render("search.html", **context)


def hit(result: dict[str, Any], query: str) -> dict[str, Any]:
    """What the page shows of one result: a title, where it links, and its snippet."""
    meta = result.get("metadata") or {}
    kind = str(result.get("source") or meta.get("kind") or "")
    agent = str(meta.get("agent") or "")
    words = marked(result.get("snippet"))
    if kind in ("entity", "workstream"):
        title = str(meta.get("name") or result.get("doc_id"))
    else:
        title = f"{kind.capitalize()} of {meta.get('date') or 'an unknown day'}"
    return {
        "kind": kind,
        "agent": agent,
        "title": title,
        "snippet": result.get("snippet") or "",
        "fields": meta.get("match") or [],
        "entity": title if kind == "entity" else None,
        # The agent page filters its rows by text: the row's name, else a word the row holds.
        "tab": KINDS.get(kind, "entities"),
        "filter": title if kind == "workstream" else (words[0] if words else query),
        "local": bool(agent) and not agent.startswith("peer:"),
    }


PAGES: Final = [Page("/search", search)]
