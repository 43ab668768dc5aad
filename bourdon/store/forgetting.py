"""What forgetting an entity removes from one manifest, and the tombstones that keep it gone.

Pure: a manifest in, the manifest without the entity out. An entity is matched by its name or
one of its aliases, ignoring case and spacing (``model.fold``); its rows leave ``entities``, and
every mention of it (its name or an alias) leaves the ``related_entities`` of workstreams and
notes and the ``project_focus`` of sessions.

A tombstone is ``blake2b:<hex>``, a keyed BLAKE2b of the folded name, one per line in the
committed file ``agents/.forgotten``: the name itself is never written again, yet a reader's
regenerated rows (``Library.regenerate``) that name a forgotten entity are dropped before they
are merged, so a forgotten entity stays forgotten. The key is fixed, not secret: it keeps the
name out of plain text, it cannot stop someone who guesses the name from confirming it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Final

from bourdon.model import ENTITIES, NOTES, SESSIONS, WORKSTREAMS, fold, row_visibility

FORGOTTEN: Final = "agents/.forgotten"
# A staged forget names what it asks for in this top-level field of the staged file: merging
# the staged rows cannot remove anything, so promotion forgets these names in the live manifest.
FORGET_REQUEST: Final = "x-bourdon-forget"
_KEY: Final = b"bourdon-forget-v1"
# The list fields that mention entities by name, per section.
MENTIONS: Final = {
    WORKSTREAMS: "related_entities",
    NOTES: "related_entities",
    SESSIONS: "project_focus",
}


def tombstone(name: str) -> str:
    """The keyed hash that stands for ``name`` (folded) in ``agents/.forgotten``."""
    return "blake2b:" + hashlib.blake2b(fold(name).encode(), key=_KEY, digest_size=16).hexdigest()


def parse_tombstones(raw: bytes | None) -> set[str]:
    if not raw:
        return set()
    lines = raw.decode("utf-8", "replace").splitlines()
    return {line.strip() for line in lines if line.strip().startswith("blake2b:")}


def format_tombstones(stones: Iterable[str]) -> bytes:
    return "".join(f"{s}\n" for s in sorted(set(stones))).encode("ascii")


def names_of(data: Mapping[str, Any], name: str, level: int | None = None) -> set[str]:
    """The folded names that mean the entity in this manifest: ``name`` and the name and
    aliases of every entity row it matches (of the rows at or below ``level``)."""
    wanted = {fold(name)}
    for row in _rows(data, ENTITIES):
        if _matches(row, wanted) and _seen(data, row, level):
            wanted.add(fold(str(row.get("name", ""))))
            wanted.update(fold(str(a)) for a in _list(row.get("aliases")))
    return wanted - {""}


def forget(
    data: Mapping[str, Any], names: set[str], level: int | None = None
) -> tuple[dict[str, Any], dict[str, int]]:
    """``data`` without the entity rows and mentions of ``names`` (folded); what went, by
    section: entity rows, and mentions in workstreams, notes and sessions.

    With ``level``, rows above that visibility are left as they are: a caller who cannot see a
    row neither removes it nor learns, from a count, that it was there.
    """
    out = dict(data)
    counts = {ENTITIES: 0, WORKSTREAMS: 0, NOTES: 0, SESSIONS: 0}
    entities = _rows(data, ENTITIES)
    kept = [row for row in entities if not (_matches(row, names) and _seen(data, row, level))]
    counts[ENTITIES] = len(entities) - len(kept)
    if counts[ENTITIES]:
        out[ENTITIES] = kept
    for section, key in MENTIONS.items():
        rows, changed = _rows(data, section), False
        new_rows = []
        for row in rows:
            values = _list(row.get(key)) if _seen(data, row, level) else []
            left = [v for v in values if fold(str(v)) not in names]
            if len(left) != len(values):
                counts[section] += len(values) - len(left)
                changed = True
                row = {k: v for k, v in row.items() if k != key} | ({key: left} if left else {})
            new_rows.append(row)
        if changed:
            out[section] = new_rows
    return out, counts


def drop_forgotten(fresh: Mapping[str, Any], stones: set[str]) -> dict[str, Any]:
    """A reader's fresh manifest without the entities whose name or alias is tombstoned."""
    if not stones:
        return dict(fresh)
    names: set[str] = set()
    for row in _rows(fresh, ENTITIES):
        candidates = [str(row.get("name", "")), *(str(a) for a in _list(row.get("aliases")))]
        if any(tombstone(c) in stones for c in candidates):
            names.add(fold(str(row.get("name", ""))))
            names.update(fold(c) for c in candidates)
    for section, key in MENTIONS.items():
        for row in _rows(fresh, section):
            names.update(fold(str(v)) for v in _list(row.get(key)) if tombstone(str(v)) in stones)
    return forget(fresh, names)[0] if names else dict(fresh)


def _seen(data: Mapping[str, Any], row: Mapping[str, Any], level: int | None) -> bool:
    if level is None:
        return True
    policy = data.get("visibility_policy")
    return row_visibility(row, policy if isinstance(policy, Mapping) else None) <= level


def _matches(row: Mapping[str, Any], names: set[str]) -> bool:
    if fold(str(row.get("name", ""))) in names:
        return True
    return any(fold(str(a)) in names for a in _list(row.get("aliases")))


def _rows(data: Mapping[str, Any], section: str) -> list[Mapping[str, Any]]:
    rows = data.get(section)
    return [r for r in rows if isinstance(r, Mapping)] if isinstance(rows, list) else []


def _list(value: object) -> list[Any]:
    if isinstance(value, list):
        return value
    return [value] if isinstance(value, str) else []
