"""``trace_entity``: an entity's timeline, read from the git history of every agent's manifest.

For each agent whose manifest ever held the entity (by name or alias, case-insensitive), the
versions are walked oldest first and the entity's row is compared between consecutive
versions (``query.tracediff``). Each version's row is judged with that version's own policy;
a row the caller may not see counts as absent, so the timeline a caller gets is the one it
would get had those versions never held the row: no event, field, count or commit of them.

What a trace learns that does not depend on the caller is kept per library object
(``TraceFacts``): the names each blob's entities answer to (or which names its bytes lack), and
each live manifest's sessions, workstreams and notes as a level sees them. With the store's
versions kept per branch tip (``store.states``), an agent none of whose versions ever held the
name costs no git call, no blob read and no parse.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from bourdon.access.visibility import OPEN, Access, Scope, filter_manifest, resolve
from bourdon.errors import ManifestError
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
from bourdon.query.tracefacts import TraceFacts, facts_of
from bourdon.store.library import Library

Found = tuple[dict[str, Any], Visibility] | None  # the row seen, and its visibility
Live = tuple[str, dict[str, Any]]  # a live manifest's blob id, and the manifest
SCHEMA: Final = "bourdon.entity-trace/v1"
DEFAULT_EVENTS: Final = 200
MAX_EVENTS: Final = 1000
RELATED_KEPT: Final = 64  # live manifests' filtered sections kept (level, keep_home)
RELATED_FIELDS: Final = {
    SESSIONS: ("project_focus", "key_actions", "files_touched"),
    WORKSTREAMS: ("name", "summary", "related_entities"),
    NOTES: ("text", "related_entities"),
}


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
    facts = facts_of(library)
    agents, order = library.agents_ever()
    walks = []
    lives: dict[str, Live] = {}  # the live manifests the walks read, for their attributions
    for agent_id in agents:
        if (agent is not None and agent_id != agent) or not access.allows_agent(agent_id):
            continue
        walk = _walk(library, facts, agent_id, entity, access, lives)
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
        "attributions": [
            _attribution(library, facts, w, entity, access, lives.get(w.agent_id)) for w in walks
        ],
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


def _walk(
    library: Library,
    facts: TraceFacts,
    agent_id: str,
    entity: str,
    access: Access,
    lives: dict[str, Live],
) -> Walk:
    walk = Walk(agent_id, entity)
    versions = library.version_blobs(agent_id)
    if facts.live_may_name(versions[-1][1] if versions else None, entity):
        try:
            # The row as it is now names what it was called before (a renamed row keeps its
            # old name as an alias), so its history is followed from before the rename.
            live = library.live_manifest(agent_id)
            if live is not None:
                lives[agent_id] = live
                facts.live_read(*live)
                walk.follow(_visible(walk, live[1], access))
        except ManifestError:
            pass
    # The last version's blob and the names then followed, its spans, and what was found.
    last: tuple[object, object, Found] = (None, None, None)
    for version, blob_id in versions:
        names = walk.names()
        if blob_id is not None and (blob_id, names) == last[0]:
            walk.step(version, *(last[2] or (None, None)))
            continue
        if blob_id is not None and facts.lacks(blob_id, names):
            last = ((blob_id, names), None, None)
            walk.step(version, None)
            continue
        raw = library.blob(blob_id) if blob_id is not None else None
        if blob_id is None or raw is None:
            walk.step(version, None)
            last = (None, None, None)
            continue
        if not walk.may_hold(raw):
            _learn(library, facts, agent_id, blob_id, raw, names)
            found: Found = None
            last = ((blob_id, names), None, None)
        else:
            # Most commits change other rows: the same text around every mention (and the same
            # policy) is the same row, without a parse.
            key = spans(raw, names)
            if key is not None and (names, key) == last[1]:
                found = last[2]
            else:
                try:
                    data = library.parse(raw, agent_id, blob_id=blob_id)
                except ManifestError:
                    continue  # a version that does not parse was never served
                facts.parsed(blob_id, data)
                found = _visible(walk, data, access)
            last = ((blob_id, names), (names, key) if key is not None else None, found)
        walk.step(version, *(found or (None, None)))
    return walk


def _learn(
    library: Library,
    facts: TraceFacts,
    agent_id: str,
    blob_id: str,
    raw: bytes,
    names: frozenset[str],
) -> None:
    """Keep what a blob's bytes said they lack: its names, when its parsed form is only a
    load away (so any later name is decided), else the names just looked for."""
    if library.parsed_cheaply(raw):
        try:
            facts.parsed(blob_id, library.parse(raw, agent_id, blob_id=blob_id))
            return
        except ManifestError:
            pass
    facts.not_held(blob_id, names)


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


def _attribution(
    library: Library,
    facts: TraceFacts,
    walk: Walk,
    entity: str,
    access: Access,
    live: Live | None,
) -> dict[str, Any]:
    row = walk.last_row or {}
    origin = next((e for e in walk.events if e.kind == "entity_origin"), walk.events[0])
    if walk.current and live is None:  # its live row was found through older names
        live = library.live_manifest(walk.agent_id)
    related = _related(facts, live, entity, access) if walk.current and live else {}
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
    facts: TraceFacts, live: Live, entity: str, access: Access
) -> dict[str, list[dict[str, Any]]]:
    """The agent's live sessions, workstreams and notes that mention the entity, as the
    caller may see them (``live``: the blob id of its manifest, and the manifest)."""
    blob_id, data = live
    key = (blob_id, int(access.level), access.keep_home)
    with facts.lock:
        texts = facts.related.get(key)
        if texts is not None:
            facts.related.move_to_end(key)
    if texts is None:
        texts = _searched(filter_manifest(data, access.level, keep_home=access.keep_home))
        with facts.lock:
            facts.related[key] = texts
            while len(facts.related) > RELATED_KEPT:
                facts.related.popitem(last=False)
    target = entity.casefold()
    return {
        section: [row for row, text in rows if target in text] for section, rows in texts.items()
    }


def _searched(shown: Mapping[str, Any]) -> dict[str, list[tuple[Any, str]]]:
    """Each section's rows with the text a trace looks for the entity in, folded."""
    return {
        section: [
            (r, _text(r, keys).casefold()) for r in shown.get(section) or [] if isinstance(r, dict)
        ]
        for section, keys in RELATED_FIELDS.items()
    }


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
