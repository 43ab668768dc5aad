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

import functools
import re
import threading
import weakref
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from bourdon.access.visibility import Access
from bourdon.errors import InputError
from bourdon.model import fold
from bourdon.query.rowid import RowId, parse_row_id, row_id
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
    id: str

    @property
    def name(self) -> str:
        return self.rows[0].name


Node = EntityNode | SessionRow | WorkstreamRow | NoteRow


@dataclass
class Graph:
    """Nodes by id and edges both ways, over the rows one ``Access`` allows."""

    nodes: dict[str, Node] = field(default_factory=dict)
    ids: dict[Node, str] = field(default_factory=dict)  # the other way round
    out: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # id -> {(target, rel)}
    into: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # id -> {(source, rel)}
    names: dict[str, tuple[str, ...]] = field(default_factory=dict)  # folded name/alias -> ids

    def add(self, nid: str, node: Node) -> None:
        self.nodes[nid] = node
        self.ids[node] = nid

    def entities_named(self, text: str) -> tuple[str, ...]:
        """The entity nodes whose name or alias is ``text`` (case- and space-insensitive)."""
        return self.names.get(fold(text), ())

    def resolve(self, text: str) -> str | None:
        """The node a seed names: a node id, an entity row's id, or an entity's name."""
        if text in self.nodes:
            return text
        if text.startswith("entity:"):
            found = self._entity_row(text)
            if found is not None:
                return found
        named = self.entities_named(text)
        return named[0] if named else None

    def _entity_row(self, text: str) -> str | None:
        """The node of the visible entity row whose own id is ``text``."""
        try:
            asked = parse_row_id(text)
        except InputError:
            return None
        key = fold(asked.label)
        for nid in self.names.get(key, ()):
            node = self.nodes[nid]
            if isinstance(node, EntityNode) and any(
                r.agent == asked.agent and row_id(r) == asked for r in node.rows
            ):
                return nid
        return None

    @functools.cached_property
    def sessions_by_project(self) -> dict[str, list[SessionRow]]:
        """Sessions by project (see ``project_key``), oldest first; made when first asked."""
        out: dict[str, list[SessionRow]] = defaultdict(list)
        for node in self.nodes.values():
            if isinstance(node, SessionRow):
                key = self.project_key(node)
                if key is not None:
                    out[key].append(node)
        for rows in out.values():
            rows.sort(key=lambda r: r.key)
        return dict(out)

    @functools.cached_property
    def rows_by_target(self) -> dict[str, list[SessionRow | NoteRow]]:
        """The sessions and notes that name each entity node; made when first asked."""
        out: dict[str, list[SessionRow | NoteRow]] = defaultdict(list)
        for target, sources in self.into.items():
            for source, _ in sources:
                node = self.nodes[source]
                if isinstance(node, SessionRow | NoteRow) and node not in out[target]:
                    out[target].append(node)
        return dict(out)

    def project_key(self, session: SessionRow) -> str | None:
        """What makes two sessions one project's: the entity their project names (by name or
        alias), else the project's name itself."""
        project = project_of(session)
        if project is None:
            return None
        named = self.entities_named(project)
        return named[0] if named else fold(project)


def node_id(node: Node) -> str:
    """A node's id (the graph's ``ids`` has it ready for the nodes of a graph)."""
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
    """The graph of what ``access`` may see in ``state`` (each row's id is made once)."""
    graph = Graph()
    # The parts hold every agent's rows by folded name and alias already.
    grouped: dict[str, list[EntityRow]] = defaultdict(list)
    aliased: dict[str, set[str]] = defaultdict(set)  # folded alias -> folded names
    for part in state.parts.values():
        for key, rows in part.by_name.items():
            grouped[key] += [r for r in rows if access.allows(r)]
        for alias, rows in part.by_alias.items():
            aliased[alias] |= {fold(r.name) for r in rows if access.allows(r)}
    names: dict[str, list[str]] = defaultdict(list)
    ids: dict[str, str] = {}  # folded name -> node id
    for key in sorted(grouped):
        if not grouped[key]:
            continue
        carriers = tuple(sorted(grouped[key], key=lambda r: (r.agent, r.name)))
        # The tag is the one each agent's row id of this name carries.
        first = carriers[0]
        node = EntityNode(key, carriers, str(RowId("entity", "*", first.name, row_id(first).tag)))
        graph.add(node.id, node)
        ids[key] = node.id
        names[key].append(node.id)
    for alias, named in aliased.items():
        names[alias] += [ids[k] for k in sorted(named) if ids[k] not in names[alias]]
    # A name wins over another entity's alias; otherwise by id, so lookups are stable.
    keys = {nid: n.key for nid, n in graph.nodes.items() if isinstance(n, EntityNode)}
    graph.names = {
        s: tuple(sorted(ids, key=lambda i: (keys[i] != s, i))) for s, ids in names.items()
    }

    def link(src: str, texts: Iterable[str], relationship: str) -> None:
        for text in texts:
            for target in graph.entities_named(text):
                graph.out.setdefault(src, set()).add((target, relationship))
                graph.into.setdefault(target, set()).add((src, relationship))

    for w in state.workstreams:
        if access.allows(w):
            graph.add(wid := str(row_id(w)), w)
            link(wid, (*w.related_entities, w.name), RELATED_TO)
    for s in state.sessions:
        if access.allows(s):
            graph.add(sid := str(row_id(s)), s)
            link(sid, s.project_focus, FOCUSES_ON)
            link(sid, touched_names(s), TOUCHES)
    for n in state.notes:
        if access.allows(n):
            graph.add(nid := str(row_id(n)), n)
            link(nid, n.related_entities, MENTIONS)
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
