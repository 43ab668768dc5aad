"""What traces of one library learn that does not depend on the caller (``TraceFacts``).

Facts about immutable content, keyed by blob id, so nothing in them goes stale (a history
rewritten by a purge drops them all): the names each blob's entities answer to, or which names
its bytes lack; each live manifest's names; and each live manifest's sessions, workstreams and
notes as one level sees them (filled by ``query.trace``). Kept per library object, weakly.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

from bourdon.model import ENTITIES
from bourdon.query.tracediff import aliases_of
from bourdon.store.library import Library

NAMES_KEPT: Final = 500_000  # names kept of blobs' entities, the latest used (~40 MB)
LIVE_KEPT: Final = 256  # live manifests whose names are kept, as many as ``Manifests`` parses


class _Blob(NamedTuple):
    names: frozenset[str] | None  # its served entities' names and aliases (folded), if parsed
    lacks: frozenset[str]  # names its bytes do not hold (``Walk.may_hold`` said no)


class TraceFacts:
    """What traces of one library learned about blobs and live manifests: facts about
    immutable content, so nothing in them goes stale (a rewritten history drops them all)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.generation = 0
        self.blobs: OrderedDict[str, _Blob] = OrderedDict()
        self.names_kept = 0
        # blob id -> the names and aliases of every row of the manifest as ``read`` gives it
        self.live_names: OrderedDict[str, frozenset[str]] = OrderedDict()
        # (live blob id, level, keep_home) -> section -> [(row, its searched text, folded)]
        self.related: OrderedDict[tuple[str, int, bool], dict[str, list[tuple[Any, str]]]] = (
            OrderedDict()
        )

    def sync(self, generation: int) -> None:
        with self.lock:
            if generation != self.generation:
                self.blobs.clear()
                self.names_kept = 0
                self.live_names.clear()
                self.related.clear()
                self.generation = generation

    def lacks(self, blob_id: str, names: frozenset[str]) -> bool:
        """Whether the blob surely holds no row named or aliased like ``names``."""
        with self.lock:
            known = self.blobs.get(blob_id)
        if known is None:
            return False
        return names <= known.lacks or (known.names is not None and known.names.isdisjoint(names))

    def parsed(self, blob_id: str, data: Mapping[str, Any]) -> None:
        with self.lock:
            known = self.blobs.get(blob_id)
        if known is None or known.names is None:
            self._keep(blob_id, _Blob(_names(data), frozenset()))

    def live_may_name(self, blob_id: str | None, name: str) -> bool:
        """Whether the live manifest of that blob may have a row named or aliased ``name``
        (``True`` when not known yet)."""
        with self.lock:
            names = self.live_names.get(blob_id) if blob_id else None
        return names is None or name.casefold() in names

    def live_read(self, blob_id: str, data: Mapping[str, Any]) -> None:
        with self.lock:
            if blob_id in self.live_names:
                self.live_names.move_to_end(blob_id)
                return
        names = _names(data)
        with self.lock:
            self.live_names[blob_id] = names
            while len(self.live_names) > LIVE_KEPT:
                self.live_names.popitem(last=False)

    def not_held(self, blob_id: str, names: frozenset[str]) -> None:
        with self.lock:
            known = self.blobs.get(blob_id) or _Blob(None, frozenset())
        self._keep(blob_id, known._replace(lacks=known.lacks | names))

    def _keep(self, blob_id: str, blob: _Blob) -> None:
        with self.lock:
            before = self.blobs.pop(blob_id, None)
            self.names_kept += _size(blob) - (_size(before) if before else 0)
            self.blobs[blob_id] = blob
            while self.names_kept > NAMES_KEPT and len(self.blobs) > 1:
                self.names_kept -= _size(self.blobs.popitem(last=False)[1])


def _names(data: Mapping[str, Any]) -> frozenset[str]:
    """The names and aliases (folded) of the entities ``Walk.candidates`` would look at."""
    rows = data.get(ENTITIES)
    rows = rows if isinstance(rows, list) else []
    named = [r for r in rows if isinstance(r, dict) and isinstance(r.get("name"), str)]
    names = {r["name"].casefold() for r in named}
    names.update(a.casefold() for r in named for a in aliases_of(r))
    return frozenset(names)


def _size(blob: _Blob) -> int:
    return len(blob.names or ()) + len(blob.lacks)


_FACTS: weakref.WeakKeyDictionary[Library, TraceFacts] = weakref.WeakKeyDictionary()
_FACTS_LOCK = threading.Lock()


def facts_of(library: Library) -> TraceFacts:
    """The library object's trace facts, brought in step with its history."""
    with _FACTS_LOCK:
        facts = _FACTS.get(library)
        if facts is None:
            facts = _FACTS[library] = TraceFacts()
    facts.sync(library.history_generation())
    return facts
