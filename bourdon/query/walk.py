"""The traversal verbs: ``expand_neighbors`` (a few rows -> their graph neighbourhood) and
``fetch_slice`` (one row -> the rows dated around it), over ``bourdon.query.graph``.

Both walk the graph of what the caller may see, so a row it may not see is never a route, a
count or a gap; a seed that is unknown and one that is hidden are both just ``unresolved``,
and ``fetch_slice`` answers both with the same 404. Bounds are clamped and reported, never
rejected. The contract is the traversal-verbs reference (at most about three rounds: find,
widen, widen once more, answer).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from bourdon.access.visibility import OPEN, Scope, resolve
from bourdon.errors import InputError, NotFoundError
from bourdon.query.answer import meta
from bourdon.query.graph import (
    FOCUSES_ON,
    RELATIONSHIPS,
    WEIGHTS,
    Graph,
    Node,
    graph_for,
    kind_of,
)
from bourdon.query.index import Index
from bourdon.query.nodewire import breadcrumb, content_of, metadata, name_of, project_id, type_of
from bourdon.query.rowid import KINDS
from bourdon.query.rows import NoteRow, SessionRow, WorkstreamRow

MAX_SEEDS: Final = 8
DEPTH: Final = (1, 3)
LIMIT: Final = (1, 24)
PREVIEW: Final = (0, 4000)  # content_max_chars of expand_neighbors
WINDOW: Final = (1, 64)
BUDGET: Final = (0, 100_000)  # content_max_chars of fetch_slice, for the whole window
DECAY: Final = 0.5  # each hop past the first halves a neighbour's score


def clamp(value: object, bounds: tuple[int, int], default: int, what: str) -> int:
    """``value`` within ``bounds`` (None: ``default``); not a whole number is a 400."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{what} must be a whole number, e.g. {default}")
    return max(bounds[0], min(bounds[1], value))


# -- expand_neighbors ------------------------------------------------------------------------


def expand_neighbors(
    index: Index,
    name: object,
    depth: int | None = 1,
    limit: int | None = 8,
    relationship_types: Sequence[str] | None = None,
    types: Sequence[str] | None = None,
    content_max_chars: int | None = 500,
    include_incoming: bool = True,
    access_level: str | None = "team",
    include_private: bool = False,
    *,
    entity_ids: Sequence[str] | None = None,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """The rows around a few seeds (names or row ids), nearest and strongest first.
    ``entity_ids`` is the traversal contract's name for the seeds, used when ``name`` is None."""
    seeds = _seeds(name if name is not None or entity_ids is None else list(entity_ids))
    applied_depth = clamp(depth, DEPTH, 1, "depth")
    applied_limit = clamp(limit, LIMIT, 8, "limit")
    preview = clamp(content_max_chars, PREVIEW, 500, "content_max_chars")
    relationships = _names(relationship_types, "relationship_types", upper=True)
    wanted = _names(types, "types", upper=False)
    unknown = sorted(relationships - set(RELATIONSHIPS)) if relationships else []
    access = resolve(access_level, include_private, scope=scope)
    graph = graph_for(index.state, access)

    origins: dict[str, str] = {}  # node id -> the seed as given
    unresolved = [str(s) for s in seeds[MAX_SEEDS:]]
    for seed in seeds[:MAX_SEEDS]:
        found = graph.resolve(seed)
        if found is None:
            unresolved.append(seed)
        else:
            origins.setdefault(found, seed)
    reached = _walk(graph, list(origins), applied_depth, relationships, bool(include_incoming))
    shown = [
        (nid, hop)
        for nid, hop in reached.items()
        if not wanted or _type_matches(graph.nodes[nid], wanted)
    ]
    shown.sort(key=lambda item: (-item[1].score, item[1].distance, item[0]))
    neighbors = [_neighbor(graph, nid, hop, preview) for nid, hop in shown[:applied_limit]]
    filters = {
        "relationship_types": sorted(relationships) or None,
        "types": sorted(wanted) or None,
        "include_incoming": bool(include_incoming),
        "content_max_chars": preview,
    }
    warnings = [f"unknown relationship types {unknown}; known: {list(RELATIONSHIPS)}"] * bool(
        unknown
    )
    return {
        "origins": list(origins),
        "unresolved": unresolved,
        "neighbors": neighbors,
        "total": len(shown),
        "depth": applied_depth,
        "limit": applied_limit,
        "truncated": len(shown) > applied_limit,
        "filters": filters,
        "meta": meta(
            index,
            access,
            depth=applied_depth,
            limit=applied_limit,
            content_max_chars=preview,
            seeds_walked=min(len(seeds), MAX_SEEDS),
            max_seeds=MAX_SEEDS,
            warnings=warnings,
        ),
    }


class _Hop:
    """How the walk first reached a node: the best edge from the level before it."""

    __slots__ = ("direction", "distance", "relationship", "score", "via")

    def __init__(
        self, distance: int, score: float, relationship: str, direction: str, via: str
    ) -> None:
        self.distance, self.score = distance, score
        self.relationship, self.direction, self.via = relationship, direction, via

    def rank(self) -> tuple[float, str, str, str]:
        return (-self.score, self.relationship, self.direction, self.via)


def _walk(
    graph: Graph, seeds: list[str], depth: int, relationships: set[str], incoming: bool
) -> dict[str, _Hop]:
    """Breadth first from the seeds, one level at a time; at each level a node keeps its best
    edge (highest score, then relationship, direction and predecessor), so the answer does not
    depend on the order rows were read in."""
    reached: dict[str, _Hop] = {}
    scores = dict.fromkeys(seeds, 1.0)
    frontier = sorted(seeds)
    for distance in range(1, depth + 1):
        level: dict[str, _Hop] = {}
        decay = DECAY ** (distance - 1)
        for here in frontier:
            steps = [(t, r, "outgoing") for t, r in graph.out.get(here, ())]
            if incoming:
                steps += [(s, r, "incoming") for s, r in graph.into.get(here, ())]
            for there, rel, direction in steps:
                if there in scores or (relationships and rel not in relationships):
                    continue
                hop = _Hop(
                    distance, round(scores[here] * WEIGHTS[rel] * decay, 6), rel, direction, here
                )
                best = level.get(there)
                if best is None or hop.rank() < best.rank():
                    level[there] = hop
        for there, hop in level.items():
            scores[there] = hop.score
            reached[there] = hop
        frontier = sorted(level)
        if not frontier:
            break
    return reached


def _neighbor(graph: Graph, nid: str, hop: _Hop, preview: int) -> dict[str, Any]:
    node = graph.nodes[nid]
    return {
        "id": nid,
        "type": type_of(node),
        "kind": kind_of(node),
        "name": name_of(node),
        "relationship": hop.relationship,
        "direction": hop.direction,
        "distance": hop.distance,
        "score": hop.score,
        "content": content_of(node)[:preview],
        "project_id": project_id(node),
        "metadata": {**metadata(node), "via": hop.via},
        "widen_with": "fetch_slice",
    }


def _seeds(name: object) -> list[str]:
    items = [name] if isinstance(name, str) else name
    if not isinstance(items, list | tuple) or not items:
        raise InputError("name is empty; pass a name such as 'bourdon', a row id, or a list")
    seeds = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise InputError("every seed must be a non-blank name or row id")
        if len(item) > 512:
            raise InputError(f"a seed is {len(item)} characters; keep it under 512")
        seeds.append(item.strip())
    return seeds


def _names(values: Sequence[str] | None, what: str, *, upper: bool) -> set[str]:
    if values is None:
        return set()
    if isinstance(values, str):
        values = [values]
    if not all(isinstance(v, str) for v in values):
        raise InputError(f"{what} must be a list of names")
    return {v.strip().upper() if upper else v.strip().casefold() for v in values if v.strip()}


def _type_matches(node: Node, wanted: set[str]) -> bool:
    return kind_of(node) in wanted or type_of(node).casefold() in wanted


# -- fetch_slice -----------------------------------------------------------------------------


def fetch_slice(
    index: Index,
    kind: object,
    id: object,
    window: int | None = 3,
    content_max_chars: int | None = 18000,
    access_level: str | None = "team",
    include_private: bool = False,
    *,
    scope: Scope = OPEN,
) -> dict[str, Any]:
    """The rows dated around one row: a session's neighbours in its project, a note's
    companions (notes sharing an entity it names), a workstream's or an entity's sessions and
    notes. Unknown and hidden ids are the same 404."""
    if kind not in KINDS:
        raise InputError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if not isinstance(id, str) or not id.strip():
        raise InputError("id is empty; pass a row id such as an expand_neighbors neighbour's id")
    asked = id.strip()
    applied_window = clamp(window, WINDOW, 3, "window")
    budget = clamp(content_max_chars, BUDGET, 18000, "content_max_chars")
    access = resolve(access_level, include_private, scope=scope)
    graph = graph_for(index.state, access)
    found = graph.resolve(asked)
    node = graph.nodes.get(found) if found else None
    if node is None or kind_of(node) != kind:
        raise NotFoundError(f"no {kind} {asked!r} in this library")
    series, centre = _series(graph, node)
    sliced = bool(series) and series != [node]
    if not series:  # nothing dated sits around it: the row comes back whole, on its own
        series, centre = [node], 0
    total = len(series)
    width = min(applied_window, total)
    if centre is None:  # a memory: the window ends at its most recent row
        start = total - width
    else:
        start = max(0, min(centre - (applied_window - 1) // 2, total - width))
    chosen = series[start : start + width]
    passages, used = [], 0
    for offset, row in enumerate(chosen):
        text = content_of(row)
        room = max(0, budget - used)
        passages.append(
            {
                "id": graph.ids[row],
                "kind": kind_of(row),
                "name": name_of(row),
                "content": text[:room],
                "passage_index": start + offset,
                "passage_total": total,
                "breadcrumb": breadcrumb(row),
                "truncated": len(text) > room,
                "metadata": metadata(row),
            }
        )
        used += min(len(text), room)
    parent = graph.ids[node]
    return {
        "kind": kind,
        "entity_id": asked,
        "parent_id": parent,
        "parent_name": name_of(node),
        "parent_type": type_of(node),
        "passages": passages,
        "window": applied_window,
        "sliced": sliced,
        "total": total,
        "window_start": start if passages else None,
        "passage_total": total,
        "covers_parent": start == 0 and width == total,
        "project_id": project_id(node),
        "content_chars": used,
        "meta": meta(
            index, access, window=applied_window, content_max_chars=budget, returned=len(passages)
        ),
    }


def _series(graph: Graph, node: Node) -> tuple[list[Any], int | None]:
    """The rows ``node`` is read among, oldest first, and where ``node`` sits (None: it is
    the memory the rows belong to, not one of them)."""
    if isinstance(node, SessionRow):
        project = graph.project_key(node)
        rows: list[Any] = graph.sessions_by_project.get(project, [node]) if project else [node]
        return rows, rows.index(node)
    here = graph.ids[node]
    named = graph.rows_by_target
    found: set[Any]
    if isinstance(node, NoteRow):
        found = {n for t in _targets(graph, here) for n in named.get(t, ())}
        rows = sorted({n for n in found if isinstance(n, NoteRow)} | {node}, key=lambda r: r.key)
        return rows, rows.index(node)
    if isinstance(node, WorkstreamRow):
        found = {n for t in _targets(graph, here) for n in named.get(t, ())}
    else:
        found = {
            graph.nodes[src]
            for src, rel in graph.into.get(here, ())
            if rel == FOCUSES_ON and isinstance(graph.nodes[src], SessionRow)
        }
    return sorted(found, key=lambda r: (r.date, graph.ids[r])), None


def _targets(graph: Graph, nid: str) -> set[str]:
    return {target for target, _ in graph.out.get(nid, ())}


__all__ = ["expand_neighbors", "fetch_slice"]
