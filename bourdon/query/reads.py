"""The read surface over the index: one function per read tool, answering wire-shaped dicts.

Every function takes the ``Index`` and the tool's parameters exactly as the Bourdon tool
reference names them, and returns the reference's keys plus a ``meta`` object (bounds applied,
counts, warnings). Visibility is applied to each row before it can join any answer, count, tag
list or summary. Bounds are clamped, never rejected; bad input raises ``InputError`` (400) with
a message that says what to send instead, and an unknown agent raises ``NotFoundError`` (404).

The MCP server and the CLI both call these, so people and agents always get the same answer.
"""

from __future__ import annotations

import base64
import binascii
import json
import socket
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final, Protocol, TypeVar

from bourdon.access.visibility import OPEN, Access, Scope, filter_manifest, resolve
from bourdon.errors import InputError, NotFoundError
from bourdon.model import Visibility, check_agent_id, fold
from bourdon.query.index import Index, Match
from bourdon.query.rows import EntityRow, NoteRow, SessionRow, WorkstreamRow

DEFAULT_LIMIT: Final = 20
MAX_LIMIT: Final = 100
DEFAULT_SINCE_DAYS: Final = 14
MAX_MATCHES: Final = 20
SUMMARY_ENTITIES: Final = 20
WORKSTREAM_STATUSES: Final = ("active", "paused", "done", "archived")
AGENTS_SCHEMA: Final = "bourdon.agents/v1"
EXPORT_RECENT: Final = 10

T = TypeVar("T")


# -- shared pieces -----------------------------------------------------------------------


def meta(index: Index, access: Access | None = None, **extra: Any) -> dict[str, Any]:
    """The ``meta`` object every answer carries: level, bounds, counts, warnings."""
    warnings = sorted(
        text
        for name, text in index.problems.items()
        if access is None or access.allows_agent(name.removesuffix(".l5.yaml"))
    )
    level, agents = (access.level, access.agents) if access is not None else (2, None)
    warnings += index.row_warnings(level, agents)
    if access is not None and access.warning:
        warnings.insert(0, access.warning)
    out: dict[str, Any] = {}
    if access is not None:
        out.update(access.to_meta())
    out.update(extra)
    out["warnings"] = warnings + list(out.pop("warnings", []))
    return out


def require_text(value: object, what: str, example: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{what} is empty; pass a name such as {example!r}")
    if len(value) > 512:
        raise InputError(f"{what} is {len(value)} characters; keep it under 512")
    return value.strip()


def require_agent(index: Index, agent: object, access: Access | None = None) -> str:
    """A known agent id the caller may read; the 404 names only agents it may see."""
    agent_id = check_agent_id(agent, "agent")
    visible = [a for a in sorted(index.agents) if access is None or access.allows_agent(a)]
    if agent_id not in visible:
        known = ", ".join(visible) or "none yet"
        raise NotFoundError(f"no agent {agent_id!r} in this library; known agents: {known}")
    return agent_id


def optional_agent(index: Index, agent: object, access: Access | None = None) -> str | None:
    return None if agent is None or agent == "" else require_agent(index, agent, access)


def clamp_limit(limit: object, default: int = DEFAULT_LIMIT, most: int = MAX_LIMIT) -> int:
    if limit is None:
        return default
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InputError(f"limit must be a whole number from 1 to {most}, got {limit!r}")
    return max(1, min(most, limit))


def parse_since(since: object, what: str = "since") -> str | None:
    """An ISO date or date-time, as the ``YYYY-MM-DD`` it starts on; ``None`` stays ``None``."""
    if since is None or since == "":
        return None
    if isinstance(since, str):
        text = since.strip()
        for parse in (date.fromisoformat, datetime.fromisoformat):
            try:
                parsed = parse(text)
            except ValueError:
                continue
            return (parsed.date() if isinstance(parsed, datetime) else parsed).isoformat()
    return _bad(what, since)


def _bad(what: str, value: object) -> str:
    raise InputError(
        f"{what} {value!r} is not a date; pass an ISO date such as '2026-11-01' "
        "or a date-time such as '2026-11-01T09:00:00Z'"
    )


def encode_cursor(kind: str, after: Sequence[Any], since: str | None) -> str:
    payload = json.dumps(
        {"v": 1, "k": kind, "after": list(after), "since": since}, separators=(",", ":")
    )
    return base64.urlsafe_b64encode(payload.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: object, kind: str) -> tuple[tuple[Any, ...], str | None]:
    """The position after which a page starts, and the window it was opened with."""
    bad = InputError(
        f"cursor {str(cursor)[:40]!r} is not one this server gave out; pass the next_cursor of "
        "the previous page unchanged, or omit cursor to start from the first page"
    )
    if not isinstance(cursor, str) or len(cursor) > 2048:
        raise bad
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError):
        raise bad from None
    if not isinstance(data, dict) or data.get("v") != 1 or data.get("k") != kind:
        raise bad
    after, since = data.get("after"), data.get("since")
    if not isinstance(after, list) or not (since is None or isinstance(since, str)):
        raise bad
    return tuple(after), since


def page(
    rows: Iterable[T],
    key: Callable[[T], tuple[Any, ...]],
    after: tuple[Any, ...] | None,
    limit: int,
) -> tuple[list[T], bool]:
    """Keyset pagination over rows sorted newest first: the rows after ``after``, at most limit.

    Keys, not offsets: a session written between two pages never makes a row show twice or
    not at all.
    """
    out: list[T] = []
    more = False
    for row in rows:
        if after is not None and list(key(row)) >= list(after):
            continue
        if len(out) == limit:
            more = True
            break
        out.append(row)
    return out, more


def window(since: object, cursor: object, kind: str) -> tuple[str | None, tuple[Any, ...] | None]:
    """The ``since`` date and cursor position of a paginated call (DESIGN: 14-day default)."""
    if cursor not in (None, ""):
        after, opened_since = decode_cursor(cursor, kind)
        chosen = parse_since(since) if since not in (None, "") else opened_since
        return chosen, after
    chosen = parse_since(since)
    if chosen is None:
        chosen = (datetime.now(UTC).date() - timedelta(days=DEFAULT_SINCE_DAYS)).isoformat()
    return chosen, None


# -- entities ----------------------------------------------------------------------------


def group_matches(matches: Iterable[Match], access: Access) -> list[dict[str, Any]]:
    """Entity matches grouped by name across agents (the reference's EntityMatch)."""
    groups: dict[str, dict[str, Any]] = {}
    rank = {"exact": 0, "alias": 1, "fuzzy": 2}
    for m in matches:
        row = m.row
        if not access.allows(row):
            continue
        group = groups.setdefault(
            fold(row.name),
            {
                "name": row.name,
                "agents": [],
                "types": [],
                "summaries": {},
                "tags": [],
                "aliases": [],
                "visibility": "public",
                "match": m.kind,
                "score": m.score,
                "last_touched": None,
            },
        )
        if (rank[m.kind], -m.score) < (rank[group["match"]], -group["score"]):
            group["match"], group["score"] = m.kind, m.score
        _add(group["agents"], row.agent)
        if row.visibility > Visibility[group["visibility"].upper()]:
            group["visibility"] = str(Visibility(row.visibility))
        if row.type:
            _add(group["types"], row.type)
        if row.summary:
            group["summaries"][row.agent] = row.summary
        for tag in row.tags:
            _add(group["tags"], tag)
        for alias in row.aliases:
            _add(group["aliases"], alias)
        if row.last_touched and (group["last_touched"] or "") < row.last_touched:
            group["last_touched"] = row.last_touched
    ordered = sorted(
        groups.values(), key=lambda g: (rank[g["match"]], -g["score"], -len(g["agents"]), g["name"])
    )
    return ordered


def _add(items: list[Any], item: Any) -> None:
    if item not in items:
        items.append(item)


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
    groups = group_matches(index.match(query, visible=access.allows), access)
    shown = groups[:MAX_MATCHES]
    return {
        "name": query,
        "access_level": access_level,
        "include_private": include_private,
        "matches": shown,
        "meta": meta(
            index,
            access,
            limit=MAX_MATCHES,
            total_matches=len(groups),
            truncated=len(groups) > len(shown),
        ),
    }


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
    groups = group_matches(mine, access)
    shown = groups[:MAX_MATCHES]
    return {
        "agent": agent_id,
        "topic": query,
        "access_level": access_level,
        "include_private": include_private,
        "matches": shown,
        "meta": meta(
            index,
            access,
            limit=MAX_MATCHES,
            total_matches=len(groups),
            truncated=len(groups) > len(shown),
        ),
    }


# -- sessions ----------------------------------------------------------------------------


def session_dict(row: SessionRow, summary: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "agent": row.agent,
        "date": row.date,
        "cwd": row.cwd,
        "project_focus": list(row.project_focus),
        "visibility": str(Visibility(row.visibility)),
    }
    if row.session_id:
        out["session_id"] = row.session_id
    if not summary:
        out["key_actions"] = list(row.key_actions)
        out["files_touched"] = list(row.files_touched)
    return out


class _Dated(Protocol):
    @property
    def agent(self) -> str: ...

    @property
    def date(self) -> str: ...

    @property
    def visibility(self) -> int: ...

    @property
    def key(self) -> tuple[Any, ...]: ...


D = TypeVar("D", bound=_Dated)


def _dated_page(
    index: Index,
    rows: list[D],
    kind: str,
    since: str | None,
    agent: str | None,
    access: Access,
    limit: int | None,
    cursor: str | None,
) -> tuple[str | None, list[D], str | None, bool, dict[str, Any]]:
    """One page of dated rows (sessions or notes), newest first, as both list tools serve it:
    the 14-day default window, the agent filter, keyset cursors. Undated rows never appear in
    a window."""
    agent_id = optional_agent(index, agent, access)
    size = clamp_limit(limit)
    start, after = window(since, cursor, kind)
    wanted = (
        r
        for r in rows
        if access.allows(r)
        and (agent_id is None or r.agent == agent_id)
        and r.date
        and (start is None or r.date >= start)
    )
    chosen, more = page(wanted, lambda r: r.key, after, size)
    next_cursor = encode_cursor(kind, chosen[-1].key, start) if more and chosen else None
    facts = meta(index, access, limit=size, since_applied=start, returned=len(chosen))
    return agent_id, chosen, next_cursor, more, facts


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
    agent_id, chosen, next_cursor, more, facts = _dated_page(
        index, index.sessions, "sessions", since, agent, access, limit, cursor
    )
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
    agent_id, chosen, next_cursor, more, facts = _dated_page(
        index, index.notes, "notes", since, agent, access, limit, cursor
    )
    return {
        "since": since,
        "agent": agent_id,
        "access_level": access_level,
        "include_private": include_private,
        "limit": limit,
        "cursor": cursor,
        "notes": [note_dict(n) for n in chosen],
        "next_cursor": next_cursor,
        "has_more": more,
        "meta": facts,
    }


def note_dict(row: NoteRow) -> dict[str, Any]:
    return {
        "agent": row.agent,
        "date": row.date,
        "text": row.text,
        "related_entities": list(row.related_entities),
        "tags": list(row.tags),
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
    merged = merge_workstreams(rows)
    return {
        "status": status,
        "agent": agent_id,
        "access_level": access_level,
        "include_private": include_private,
        "workstreams": merged,
        "meta": meta(index, access, returned=len(merged)),
    }


def merge_workstreams(rows: Iterable[WorkstreamRow]) -> list[dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for w in rows:
        item = out.setdefault(
            fold(w.name),
            {
                "name": w.name,
                "status": w.status,
                "summary": w.summary,
                "agents": [],
                "summaries": {},
                "started": w.started,
                "last_touched": w.last_touched,
                "related_entities": [],
                "tags": [],
            },
        )
        _add(item["agents"], w.agent)
        if w.summary:
            item["summaries"][w.agent] = w.summary
        if w.last_touched and (item["last_touched"] or "") < w.last_touched:
            item["last_touched"], item["status"] = w.last_touched, w.status
        if w.started and (not item["started"] or w.started < item["started"]):
            item["started"] = w.started
        for name in w.related_entities:
            _add(item["related_entities"], name)
        for tag in w.tags:
            _add(item["tags"], tag)
    return sorted(out.values(), key=lambda i: (i["last_touched"] or "", i["name"]), reverse=True)


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
    entities = group_matches(exact, access)
    workstreams = merge_workstreams(
        w
        for w in index.workstreams
        if access.allows(w)
        and (fold(w.name) in names or any(fold(r) in names for r in w.related_entities))
    )
    notes = [
        note_dict(n)
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


# The reference reports agents running right now (live_sessions, live_count) from a presence
# registry; bourdon keeps none, so no agent is ever reported live.
def not_live() -> dict[str, Any]:
    return {"live_sessions": [], "live_count": 0}


def export_agents(
    index: Index,
    machine: str | None = None,
    level: Visibility = Visibility.TEAM,
    *,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """This server's own agents as the ``bourdon.agents/v1`` envelope; never asks peers."""
    name = machine or socket.gethostname()
    agents = []
    for agent_id in sorted(index.agents):
        if scope.agents is not None and agent_id not in scope.agents:
            continue
        view = index.agents[agent_id]
        sessions = sorted(
            (s for s in view.sessions if s.visibility <= level), key=lambda s: s.key, reverse=True
        )
        capabilities = view.data.get("capabilities")
        agents.append(
            {
                "id": agent_id,
                "type": view.agent.get("type"),
                "instance": view.agent.get("instance"),
                "role_narrative": view.agent.get("role_narrative"),
                "last_updated": view.data.get("last_updated"),
                "capability_count": len(capabilities) if isinstance(capabilities, list) else 0,
                "session_count": len(sessions),
                "freshest_session_date": next((s.date for s in sessions if s.date), None),
                "recent_activity": [
                    {
                        "date": s.date,
                        "project_focus": list(s.project_focus),
                        "key_actions": list(s.key_actions),
                        "visibility": str(Visibility(s.visibility)),
                    }
                    for s in sessions[:EXPORT_RECENT]
                ],
                "parse_error": None,
                "source": name,
                "source_kind": "local",
                **not_live(),
            }
        )
    for problem in sorted(index.problems):
        if scope.agents is not None and problem.removesuffix(".l5.yaml") not in scope.agents:
            continue
        agents.append(
            {
                "id": problem.removesuffix(".l5.yaml"),
                "type": None,
                "instance": None,
                "role_narrative": None,
                "last_updated": None,
                "capability_count": None,
                "session_count": None,
                "freshest_session_date": None,
                "recent_activity": [],
                "parse_error": index.problems[problem],
                "source": name,
                "source_kind": "local",
                **not_live(),
            }
        )
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
    return filter_manifest(index.agents[found].served_data, level)


def entity_view(
    index: Index, name: object, level: Visibility, *, scope: Scope = OPEN
) -> list[dict[str, Any]]:
    """The cross-agent view of one entity by name (exact and alias matches)."""
    query = require_text(name, "name", "bourdon")
    access = resolve(str(level), True, scope=scope)
    return group_matches(index.match(query, fuzzy=False, visible=access.allows), access)


__all__ = [
    "EntityRow",
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
