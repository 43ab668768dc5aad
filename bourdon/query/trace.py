"""``trace_entity``: an entity's timeline, read from the git history of every agent's manifest.

For each agent whose manifest ever held the entity (by name or alias, case-insensitive), the
versions are walked oldest first and the entity's row is compared between consecutive
versions (``query.tracediff``). Each version's row is judged with that version's own policy;
a row the caller may not see counts as absent, so the timeline a caller gets is the one it
would get had those versions never held the row: no event, field, count or commit of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from bourdon.access.visibility import OPEN, Access, Scope, filter_manifest, resolve
from bourdon.errors import ManifestError, NotFoundError
from bourdon.model import (
    ENTITIES,
    NOTES,
    SESSIONS,
    WORKSTREAMS,
    Manifest,
    Visibility,
    row_visibility,
)
from bourdon.query.answer import require_text
from bourdon.query.paging import clamp_limit
from bourdon.query.rowspan import spans
from bourdon.query.tracediff import Event, Walk
from bourdon.store.library import Library

Found = tuple[dict[str, Any], Visibility] | None  # the row seen, and its visibility
SCHEMA: Final = "bourdon.entity-trace/v1"
DEFAULT_EVENTS: Final = 200
MAX_EVENTS: Final = 1000


def trace_entity(
    library: Library,
    entity: str,
    access_level: str | None = "team",
    include_private: bool = False,
    *,
    agent: str | None = None,
    limit: int | None = None,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """The entity's trace as the caller may see it (the reference's keys, and ``meta``).

    ``agent`` limits it to one agent's history; ``limit`` keeps the newest events (default
    200, at most 1,000; the applied value is in ``meta``). An unknown entity is
    ``matched: false``, not an error.
    """
    entity = require_text(entity, "entity", "trace_entity(entity='ledgerline')").strip()
    access = resolve(access_level, include_private, "team", scope=scope)
    applied = clamp_limit(limit, DEFAULT_EVENTS, MAX_EVENTS)
    agents, order = library.agents_ever()
    walks = []
    for agent_id in agents:
        if (agent is not None and agent_id != agent) or not access.allows_agent(agent_id):
            continue
        walk = _walk(library, agent_id, entity, access)
        if walk.events:
            walks.append(walk)
    if not walks:
        return _unmatched(entity, access, applied)
    events = sorted(
        (e for w in walks for e in w.events), key=lambda e: (order.get(e.commit, -1), e.agent_id)
    )
    shown = events[-applied:] if applied else []
    current = [w for w in walks if w.current is not None]
    latest = current or walks
    names = [w.last_row["name"] for w in latest if w.last_row is not None]
    exact = [n for n in names if n.casefold() == entity.casefold()]
    touched = [
        str(r["last_touched"]) for w in current if (r := w.current) and r.get("last_touched")
    ]
    return {
        "schema_version": SCHEMA,
        "name": (exact or names or [entity])[0],
        "matched": True,
        "types": sorted({t for w in latest for t in w.types()}),
        "tags": sorted({t for w in latest for t in w.tags()}),
        "aliases": sorted({a for w in latest for a in w.aliases()}),
        "visibility": str(access.level),
        "known_by": [w.agent_id for w in current],
        "first_seen": events[0].timestamp,
        "last_touched": max(touched) if touched else events[-1].timestamp,
        "attributions": [_attribution(library, w, entity, access) for w in walks],
        "timeline": [e.to_dict() for e in shown],
        "meta": {
            **access.to_meta(),
            **({"warning": access.warning} if access.warning else {}),
            "limit": applied,
            "events": len(events),
            "truncated": len(shown) < len(events),
            **({"agent": agent} if agent is not None else {}),
        },
    }


def _walk(library: Library, agent_id: str, entity: str, access: Access) -> Walk:
    walk = Walk(agent_id, entity)
    try:
        # The row as it is now names what it was called before (a renamed row keeps its old
        # name as an alias), so its history is followed from before the rename.
        live = library.read(agent_id).data
        walk.follow(_visible(walk, live, access))
    except (NotFoundError, ManifestError):
        pass
    # The last version's blob and the names then followed, its spans, and what was found.
    last: tuple[object, object, Found] = (None, None, None)
    for state in library.states(agent_id):
        if state.raw is None:
            walk.step(state.version, None)
            last = (None, None, None)
            continue
        names = walk.names()
        if (state.blob_id, names) == last[0]:
            found = last[2]
        elif not walk.may_hold(state.raw):
            found, last = None, ((state.blob_id, names), None, None)
        else:
            # Most commits change other rows: the same text around every mention (and the same
            # policy) is the same row, without a parse.
            key = spans(state.raw, names)
            if key is not None and (names, key) == last[1]:
                found = last[2]
            else:
                try:
                    found = _visible(walk, library.parse(state.raw, agent_id), access)
                except ManifestError:
                    continue  # a version that does not parse was never served
            last = ((state.blob_id, names), (names, key) if key is not None else None, found)
        walk.step(state.version, *(found or (None, None)))
    return walk


def _visible(
    walk: Walk, data: Mapping[str, Any], access: Access
) -> tuple[dict[str, Any], Visibility] | None:
    """The first row that may be the entity and that the caller may see, with its visibility
    under this version's policy: a hidden row never hides a visible one."""
    policy = Manifest(data).policy
    for row in walk.candidates(data.get(ENTITIES)):
        level = row_visibility(row, policy)
        if access.sees(int(level)):
            return row, level
    return None


def _attribution(library: Library, walk: Walk, entity: str, access: Access) -> dict[str, Any]:
    row = walk.last_row or {}
    origin = next((e for e in walk.events if e.kind == "entity_origin"), walk.events[0])
    related = _related(library, walk.agent_id, entity, access) if walk.current else {}
    return {
        "agent_id": walk.agent_id,
        "summary": str(row.get("summary") or ""),
        "visibility": str(walk.last_visibility) if walk.last_visibility is not None else "team",
        "types": walk.types(),
        "tags": walk.tags(),
        "aliases": walk.aliases(),
        "last_touched": row.get("last_touched"),
        "first_seen": origin.timestamp,
        "first_version_id": origin.commit,
        "version_count": len(walk.events),
        "provenance_count": sum(1 for e in walk.events if e.by),
        "matching_sessions": related.get(SESSIONS, []),
        "matching_workstreams": related.get(WORKSTREAMS, []),
        "matching_notes": related.get(NOTES, []),
        "current": walk.current is not None,
    }


def _related(
    library: Library, agent_id: str, entity: str, access: Access
) -> dict[str, list[dict[str, Any]]]:
    """The agent's live sessions, workstreams and notes that mention the entity, as the
    caller may see them."""
    try:
        data = library.read(agent_id).data
    except NotFoundError:
        return {}
    shown = filter_manifest(data, access.level, keep_home=access.keep_home)
    target = entity.casefold()
    fields = {
        SESSIONS: ("project_focus", "key_actions", "files_touched"),
        WORKSTREAMS: ("name", "summary", "related_entities"),
        NOTES: ("text", "related_entities"),
    }
    out: dict[str, list[dict[str, Any]]] = {}
    for section, keys in fields.items():
        rows = shown.get(section) or []
        out[section] = [
            r for r in rows if isinstance(r, dict) and target in _text(r, keys).casefold()
        ]
    return out


def _text(row: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    parts = []
    for key in keys:
        value = row.get(key)
        parts += [str(v) for v in value] if isinstance(value, list) else [str(value or "")]
    return " ".join(parts)


def _unmatched(entity: str, access: Access, applied: int) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA,
        "name": entity,
        "matched": False,
        "types": [],
        "tags": [],
        "aliases": [],
        "visibility": str(access.level),
        "known_by": [],
        "first_seen": None,
        "last_touched": None,
        "attributions": [],
        "timeline": [],
        "meta": {**access.to_meta(), "limit": applied, "events": 0, "truncated": False},
    }


__all__ = ["Event", "trace_entity"]
