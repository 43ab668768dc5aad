"""The memory graph one caller may walk, derived from the index's rows (pure, no I/O).

Nodes are the rows a caller may see, except entities: every agent's row for the same name is
ONE node (as ``find_entity`` groups them), named ``entity:*:<name>:<tag>`` (the shape of a row
id, ``*`` for "every agent that knows it"; the tag is the one each agent's row id carries).
Edges point from the row that names to the entity it names:

- workstream -> entity ``RELATED_TO``: a ``related_entities`` item, or the workstream's own
  name, is the entity's name or one of its aliases (case-insensitive);
- session -> entity ``FOCUSES_ON`` (a ``project_focus`` item) and ``TOUCHES`` (the basename of
  ``cwd``, or a component of a ``files_touched`` path);
- note -> entity ``MENTIONS`` (a ``related_entities`` item).

Entities named together by one workstream or note are two hops apart, through it.

The graph is built from the visible rows only, so a row the caller may not see is neither a
node nor a route: it cannot change a distance, a score, a count or an alias that resolves.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from bourdon.access.visibility import Access
from bourdon.model import fold
from bourdon.query.rowid import AnyRow, RowId, row_id
from bourdon.query.rows import EntityRow, NoteRow, SessionRow, WorkstreamRow
from bourdon.query.snapshot import Snapshot

# Graphs made lately, per snapshot and per what the caller may see: a walk of three rounds
# builds the graph once. A snapshot is never edited, so its graphs stay true while it lives.
_CACHE: weakref.WeakKeyDictionary[Snapshot, dict[tuple[object, ...], Graph]] = (
    weakref.WeakKeyDictionary()
)
_CACHE_LOCK = threading.Lock()
CACHED_PER_SNAPSHOT: Final = 8

RELATED_TO: Final = "RELATED_TO"
FOCUSES_ON: Final = "FOCUSES_ON"
TOUCHES: Final = "TOUCHES"
MENTIONS: Final = "MENTIONS"
RELATIONSHIPS: Final = (RELATED_TO, FOCUSES_ON, TOUCHES, MENTIONS)
# How strongly an edge ties its ends: a stated relation beats a folder that happens to match.
WEIGHTS: Final = {RELATED_TO: 1.0, FOCUSES_ON: 0.9, MENTIONS: 0.8, TOUCHES: 0.6}

_PATH_PARTS = re.compile(r"[\\/]+")


@dataclass(frozen=True)
class EntityNode:
    """One name across agents: the visible rows that carry it, in agent order."""

    key: str  # the folded name
    rows: tuple[EntityRow, ...]

    @property
    def name(self) -> str:
        return self.rows[0].name

    @property
    def id(self) -> str:
        return str(RowId("entity", "*", self.name, row_id(self.rows[0]).tag))


Node = EntityNode | SessionRow | WorkstreamRow | NoteRow


@dataclass
class Graph:
    """Nodes by id and edges both ways, over the rows one ``Access`` allows."""

    nodes: dict[str, Node] = field(default_factory=dict)
    out: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # id -> {(target, rel)}
    into: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # id -> {(source, rel)}
    names: dict[str, tuple[str, ...]] = field(default_factory=dict)  # folded name/alias -> ids
    row_ids: dict[str, str] = field(default_factory=dict)  # an entity row's id -> its node id

    def entities_named(self, text: str) -> tuple[str, ...]:
        """The entity nodes whose name or alias is ``text`` (case- and space-insensitive)."""
        return self.names.get(fold(text), ())

    def resolve(self, text: str) -> str | None:
        """The node a seed names: a node id, an entity row's id, or an entity's name."""
        if text in self.nodes:
            return text
        if text in self.row_ids:
            return self.row_ids[text]
        named = self.entities_named(text)
        return named[0] if named else None


def node_id(node: Node) -> str:
    return node.id if isinstance(node, EntityNode) else str(row_id(node))


def kind_of(node: Node) -> str:
    if isinstance(node, EntityNode):
        return "entity"
    if isinstance(node, SessionRow):
        return "session"
    return "workstream" if isinstance(node, WorkstreamRow) else "note"


def graph_for(state: Snapshot, access: Access) -> Graph:
    """The graph ``access`` may walk in ``state``, built once per snapshot and audience."""
    key = (access.level, access.agents, access.keep_home)
    with _CACHE_LOCK:
        found = _CACHE.get(state, {}).get(key)
    if found is None:
        found = build(state, access)
        with _CACHE_LOCK:
            kept = _CACHE.setdefault(state, {})
            if len(kept) >= CACHED_PER_SNAPSHOT:
                kept.pop(next(iter(kept)))
            kept[key] = found
    return found


def build(state: Snapshot, access: Access) -> Graph:
    """The graph of what ``access`` may see in ``state``."""
    graph = Graph()
    grouped: dict[str, list[EntityRow]] = defaultdict(list)
    for row in state.entity_rows:
        if access.allows(row):
            grouped[fold(row.name)].append(row)
    names: dict[str, list[str]] = defaultdict(list)
    entities: dict[str, EntityNode] = {}
    for key in sorted(grouped):
        rows = tuple(sorted(grouped[key], key=lambda r: (r.agent, r.name)))
        node = EntityNode(key, rows)
        graph.nodes[node.id] = entities[node.id] = node
        for row in rows:
            graph.row_ids[str(row_id(row))] = node.id
        spellings = {key} | {fold(a) for r in rows for a in r.aliases}
        for spelling in spellings:
            names[spelling].append(node.id)
    # A name wins over another entity's alias; otherwise alphabetical, so lookups are stable.
    graph.names = {
        s: tuple(sorted(ids, key=lambda i: (entities[i].key != s, i))) for s, ids in names.items()
    }

    def link(source: AnyRow, texts: Iterable[str], relationship: str) -> None:
        src = str(row_id(source))
        for text in texts:
            for target in graph.entities_named(text):
                graph.out.setdefault(src, set()).add((target, relationship))
                graph.into.setdefault(target, set()).add((src, relationship))

    for w in state.workstreams:
        if access.allows(w):
            graph.nodes[str(row_id(w))] = w
            link(w, (*w.related_entities, w.name), RELATED_TO)
    for s in state.sessions:
        if access.allows(s):
            graph.nodes[str(row_id(s))] = s
            link(s, s.project_focus, FOCUSES_ON)
            link(s, touched_names(s), TOUCHES)
    for n in state.notes:
        if access.allows(n):
            graph.nodes[str(row_id(n))] = n
            link(n, n.related_entities, MENTIONS)
    return graph


def touched_names(session: SessionRow) -> list[str]:
    """The folder a session ran in (its basename) and every component of the paths it touched."""
    parts = [p for p in _PATH_PARTS.split(session.cwd or "") if p][-1:]
    for path in session.files_touched:
        parts += [p for p in _PATH_PARTS.split(path) if p]
    return parts


def project_of(session: SessionRow) -> str | None:
    """The project a session worked on: its first ``project_focus``, else its folder's name."""
    if session.project_focus:
        return session.project_focus[0]
    parts = [p for p in _PATH_PARTS.split(session.cwd or "") if p]
    return parts[-1] if parts else None
