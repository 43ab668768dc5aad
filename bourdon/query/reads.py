"""The read surface over the index: one function per read tool, answering wire-shaped dicts.

Every function takes the ``Index`` and the tool's parameters exactly as the Bourdon tool
reference names them, and returns the reference's keys plus a ``meta`` object (bounds applied,
counts, warnings). Visibility is applied to each row before it can join any answer, count, tag
list or summary. Bounds are clamped, never rejected; bad input raises ``InputError`` (400) with
a message that says what to send instead, and an unknown agent raises ``NotFoundError`` (404).

The MCP server and the CLI both call these, so people and agents always get the same answer.
The pieces they share: ``answer`` (meta, input checks), ``paging`` (bounds, cursors, pages),
``wire`` (the shape of rows), ``envelope`` (the agents envelope's entries).
"""

from __future__ import annotations

import socket
from typing import Any, Final

from bourdon.access.visibility import OPEN, Access, Scope, filter_manifest, resolve
from bourdon.errors import InputError
from bourdon.model import SUFFIX, Visibility, fold
from bourdon.query.answer import (
    hidden,
    hidden_dated,
    meta,
    optional_agent,
    require_agent,
    require_text,
)
from bourdon.query.envelope import AGENTS_SCHEMA, envelope_entry, unreadable_entry
from bourdon.query.index import Index
from bourdon.query.paging import clamp_limit, dated_page, decode_cursor, encode_cursor, page
from bourdon.query.wire import group_matches, merge_workstreams, note_dict, session_dict

MAX_MATCHES: Final = 20
SUMMARY_ENTITIES: Final = 20
WORKSTREAM_STATUSES: Final = ("active", "paused", "done", "archived")


# -- entities ----------------------------------------------------------------------------


def find_entity(
    index: Index,
    name: object,
    access_level: str | None = "public",
    include_private: bool = False,
    *,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """Entities by name across agents: exact, alias, then near misses, each saying how."""
    query = require_text(name, "name", "bourdon")
    access = resolve(access_level, include_private, scope=scope)
    # The names and aliases of every level, looked up once: the caller's own matches are those
    # it may see (near misses only when there are none), the hint counts the others.
    named = index.match(query, fuzzy=False)
    mine = [m for m in named if access.allows(m.row)] or index.match(query, visible=access.allows)
    groups = group_matches(mine, access, index.lifecycle())
    asked = {"name": query, "access_level": access_level, "include_private": include_private}
    answer = _matches_answer(index, access, groups, asked)
    shown = {fold(g["name"]) for g in groups}
    # Names and aliases only: near misses would cost a typo search per level, on every call.
    unseen = [m.row for m in named if fold(m.row.name) not in shown]
    if unseen:

        def more_at(wider: Access) -> int:
            return len({fold(row.name) for row in unseen if wider.allows(row)})

        answer["meta"].update(hidden(access, scope, more_at))
    return answer


def query_agent_memory(
    index: Index,
    agent: object,
    topic: object,
    access_level: str | None = "public",
    include_private: bool = False,
    *,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """One agent's entities that match a topic (by name, alias or near miss)."""
    access = resolve(access_level, include_private, scope=scope)
    agent_id = require_agent(index, agent, access)
    query = require_text(topic, "topic", "ledgerline")
    mine = (m for m in index.match(query, visible=access.allows) if m.row.agent == agent_id)
    groups = group_matches(mine, access, index.lifecycle())
    asked = {
        "agent": agent_id,
        "topic": query,
        "access_level": access_level,
        "include_private": include_private,
    }
    return _matches_answer(index, access, groups, asked)


def _matches_answer(
    index: Index, access: Access, groups: list[dict[str, Any]], asked: dict[str, Any]
) -> dict[str, Any]:
    """What was asked, the first ``MAX_MATCHES`` groups, and a ``meta`` that counts them all."""
    shown = groups[:MAX_MATCHES]
    total = len(groups)
    counted = meta(
        index, access, limit=MAX_MATCHES, total_matches=total, truncated=total > len(shown)
    )
    return {**asked, "matches": shown, "meta": counted}


# -- sessions ----------------------------------------------------------------------------


def list_recent_work(
    index: Index,
    since: str | None = None,
    agent: str | None = None,
    access_level: str | None = "public",
    include_private: bool = False,
    limit: int | None = None,
    cursor: str | None = None,
    summary: bool = False,
    *,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """A page of sessions across agents (or one), newest first, 14-day default window."""
    access = resolve(access_level, include_private, scope=scope)
    agent_id, chosen, next_cursor, more, facts = dated_page(
        index, index.sessions, "sessions", since, agent, access, limit, cursor
    )
    if not cursor:
        facts.update(hidden_dated(index.sessions, access, scope, agent_id, facts, "session"))
    return {
        "since": since,
        "agent": agent_id,
        "access_level": access_level,
        "include_private": include_private,
        "limit": limit,
        "cursor": cursor,
        "summary": summary,
        "sessions": [session_dict(s, summary) for s in chosen],
        "next_cursor": next_cursor,
        "has_more": more,
        "meta": facts,
    }


def list_notes(
    index: Index,
    since: str | None = None,
    agent: str | None = None,
    access_level: str | None = "public",
    include_private: bool = False,
    limit: int | None = None,
    cursor: str | None = None,
    *,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """A page of freestanding notes, paginated exactly like ``list_recent_work``."""
    access = resolve(access_level, include_private, scope=scope)
    agent_id, chosen, next_cursor, more, facts = dated_page(
        index, index.notes, "notes", since, agent, access, limit, cursor
    )
    if not cursor:
        facts.update(hidden_dated(index.notes, access, scope, agent_id, facts, "note"))
    return {
        "since": since,
        "agent": agent_id,
        "access_level": access_level,
        "include_private": include_private,
        "limit": limit,
        "cursor": cursor,
        "notes": [note_dict(n, index.today()) for n in chosen],
        "next_cursor": next_cursor,
        "has_more": more,
        "meta": facts,
    }


# -- workstreams -------------------------------------------------------------------------


def list_workstreams(
    index: Index,
    status: str | None = None,
    agent: str | None = None,
    access_level: str | None = "public",
    include_private: bool = False,
    *,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """Workstreams across agents, deduplicated by name (not paginated: a small, bounded set)."""
    access = resolve(access_level, include_private, scope=scope)
    agent_id = optional_agent(index, agent, access)
    if status not in (None, "") and status not in WORKSTREAM_STATUSES:
        raise InputError(
            f"status {status!r} is not one of {', '.join(WORKSTREAM_STATUSES)}; "
            "omit it for every status"
        )
    rows = [
        w
        for w in index.workstreams
        if access.allows(w)
        and (agent_id is None or w.agent == agent_id)
        and (not status or w.status == status)
    ]
    merged = merge_workstreams(rows, index.today())
    return {
        "status": status,
        "agent": agent_id,
        "access_level": access_level,
        "include_private": include_private,
        "workstreams": merged,
        "meta": meta(index, access, returned=len(merged)),
    }


# -- summaries ---------------------------------------------------------------------------


def get_cross_agent_summary(
    index: Index,
    project: object,
    access_level: str | None = "public",
    include_private: bool = False,
    limit: int | None = None,
    cursor: str | None = None,
    *,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """Everything the federation knows about a project: agents, sessions, entities, and more.

    Sessions count when their ``project_focus`` names the project or one of its aliases; they
    are paginated like ``list_recent_work`` (without a default window).
    """
    query = require_text(project, "project", "ledgerline")
    access = resolve(access_level, include_private, scope=scope)
    size = clamp_limit(limit)
    after = decode_cursor(cursor, "summary")[0] if cursor not in (None, "") else None
    exact = index.match(query, fuzzy=False, visible=access.allows)
    names = {fold(query)} | {fold(m.row.name) for m in exact}
    names |= {fold(a) for m in exact for a in m.row.aliases}
    sessions = [
        s
        for s in index.sessions
        if access.allows(s) and any(fold(f) in names for f in s.project_focus)
    ]
    chosen, more = page(sessions, lambda s: s.key, after, size)
    lifecycle = index.lifecycle()
    entities = group_matches(exact, access, lifecycle)
    workstreams = merge_workstreams(
        (
            w
            for w in index.workstreams
            if access.allows(w)
            and (fold(w.name) in names or any(fold(r) in names for r in w.related_entities))
        ),
        lifecycle.day,
    )
    notes = [
        note_dict(n, lifecycle.day)
        for n in index.notes
        if access.allows(n) and any(fold(r) in names for r in n.related_entities)
    ][:size]
    agents = sorted(
        {s.agent for s in sessions}
        | {a for e in entities for a in e["agents"]}
        | {a for w in workstreams for a in w["agents"]}
    )
    return {
        "project": query,
        "agents": agents,
        "recent_sessions": [session_dict(s) for s in chosen],
        "entities": entities[:SUMMARY_ENTITIES],
        "workstreams": workstreams[:SUMMARY_ENTITIES],
        "notes": notes,
        "next_cursor": encode_cursor("summary", chosen[-1].key, None) if more and chosen else None,
        "has_more": more,
        "meta": meta(
            index,
            access,
            limit=size,
            total_sessions=len(sessions),
            truncated=more or len(entities) > SUMMARY_ENTITIES,
        ),
    }


# -- agents ------------------------------------------------------------------------------


def list_agents(index: Index, federation_hop: int = 0, *, scope: Scope = OPEN) -> dict[str, Any]:
    """Agent ids this server knows (those the caller may read)."""
    access = resolve("public", False, scope=scope)
    agents = [a for a in sorted(index.agents) if access.allows_agent(a)]
    problems = meta(index, access)["warnings"]
    return {"agents": agents, "meta": {"count": len(agents), "warnings": problems}}


def agent_details(index: Index, access: Access) -> list[dict[str, Any]]:
    """Per-agent facts for people (``bourdon agents``): counts of rows the caller may see."""
    out = []
    for agent_id in sorted(index.agents):
        view = index.agents[agent_id]
        visible_sessions = [s for s in view.sessions if access.allows(s)]
        out.append(
            {
                "id": agent_id,
                "type": view.agent.get("type"),
                "instance": view.agent.get("instance"),
                "last_updated": view.data.get("last_updated"),
                "entities": sum(access.allows(e) for e in view.entities),
                "sessions": len(visible_sessions),
                "workstreams": sum(access.allows(w) for w in view.workstreams),
                "notes": sum(access.allows(n) for n in view.notes),
                "freshest_session": max((s.date for s in visible_sessions if s.date), default=None),
                "digest": view.digest,
            }
        )
    return out


def export_agents(
    index: Index,
    machine: str | None = None,
    level: Visibility = Visibility.TEAM,
    *,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """This server's own agents as the ``bourdon.agents/v1`` envelope; never asks peers."""
    name = machine or socket.gethostname()
    agents = [
        envelope_entry(index.agents[agent_id], level, name, keep_home=scope.keep_home)
        for agent_id in sorted(index.agents)
        if scope.agents is None or agent_id in scope.agents
    ]
    for problem in sorted(index.problems):
        agent_id = problem.removesuffix(SUFFIX)
        if scope.agents is None or agent_id in scope.agents:
            agents.append(unreadable_entry(agent_id, index.problems[problem], name))
    agents.sort(key=lambda a: a.get("last_updated") or "", reverse=True)
    return {
        "schema": AGENTS_SCHEMA,
        "machine": name,
        "generated_from": "agents",
        "agents": agents,
        "meta": meta(index, resolve(str(level), True, scope=scope), count=len(agents)),
    }


# -- resources ---------------------------------------------------------------------------


def agent_memory(
    index: Index, agent_id: object, level: Visibility, *, scope: Scope = OPEN
) -> dict[str, Any]:
    """One agent's manifest with the rows above ``level`` removed."""
    found = require_agent(index, agent_id, resolve(str(level), True, scope=scope))
    return filter_manifest(index.agents[found].served_data, level, keep_home=scope.keep_home)


def entity_view(
    index: Index, name: object, level: Visibility, *, scope: Scope = OPEN
) -> list[dict[str, Any]]:
    """The cross-agent view of one entity by name (exact and alias matches)."""
    query = require_text(name, "name", "bourdon")
    access = resolve(str(level), True, scope=scope)
    return group_matches(
        index.match(query, fuzzy=False, visible=access.allows), access, index.lifecycle()
    )


__all__ = [
    "agent_details",
    "agent_memory",
    "entity_view",
    "export_agents",
    "find_entity",
    "get_cross_agent_summary",
    "list_agents",
    "list_notes",
    "list_recent_work",
    "list_workstreams",
    "query_agent_memory",
]
