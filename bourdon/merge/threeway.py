"""Integrating a remote's version of a manifest with this library's (pure, no I/O).

A three-way merge, row by row, against *base*: the published state both sides last agreed on
(``None`` before the first sync). For each row key:

- changed on one side only (added, edited or removed): that side's change is taken;
- changed on both sides: the rows are merged field by field, lists item by item (an item
  either side added is kept, an item either side removed goes); where both changed the same
  scalar differently, the row touched last wins (its ``last_touched``, else its ``date``; a tie
  goes to the larger canonical JSON, so both machines pick the same winner and converge), and
  ``last_touched`` becomes the later of the two;
- removed on one side and edited on the other: the edit is kept (nothing edited is lost).

Rows only this library has (private rows never leave it, so they are never in base or theirs)
are kept. Manifest fields outside the row sections are merged the same way, key by key.

A received row's visibility is the stricter of both sides (``floor.keep_floor``): whoever can
push to the remote cannot make a row of this library less private than it is here.

Every row both sides changed differently is reported as a ``Conflict``: which row, which
fields both sides set to different values, and which side's values won; a clash of
``visibility`` is reported apart, won by the stricter side.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from bourdon.merge.floor import keep_floor
from bourdon.merge.twoway import label, union_lists
from bourdon.model import LIST_FIELDS, ROW_SECTIONS, Visibility, row_key

Row = Mapping[str, Any]
LOCAL, REMOTE = "local", "remote"


@dataclass(frozen=True)
class Conflict:
    """A row (or a manifest field) both sides changed: the fields they set differently, and
    whose values the merge kept (``local`` or ``remote``). A row removed on one side and
    edited on the other names the field ``(removed)``; the edit wins."""

    section: str  # a row section, or "manifest" for fields outside the rows
    row: str  # the row as people recognise it (``label``), or the manifest field
    fields: tuple[str, ...]
    winner: str

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "fields": list(self.fields)}

    def __str__(self) -> str:
        return f"{self.section} {self.row!r} {', '.join(self.fields)}: {self.winner} won"


def merge3(
    base: Mapping[str, Any] | None,
    ours: Mapping[str, Any],
    theirs: Mapping[str, Any],
    conflicts: list[Conflict] | None = None,
) -> dict[str, Any]:
    """This library's manifest with the remote's changes since ``base`` integrated.

    ``conflicts``, when given, receives every row both sides changed differently.
    """
    base = base or {}
    found = conflicts if conflicts is not None else []
    out: dict[str, Any] = {}
    for key in _keys(ours, theirs):
        if key in ROW_SECTIONS or key == "last_updated":
            continue
        value = _field(key, base.get(key), ours.get(key), theirs.get(key), None, None)
        clashed = _scalar_clashes(base.get(key), ours.get(key), theirs.get(key))
        if clashed and key != "capabilities":
            found.append(Conflict("manifest", key, clashed, LOCAL))
        if value is not None:
            out[key] = value
    if "last_updated" in ours:
        out["last_updated"] = ours["last_updated"]
    for section in ROW_SECTIONS:
        rows = _rows(section, base, ours, theirs, found)
        if rows or section in ours or section in theirs:
            out[section] = rows
    return keep_floor(out, ours, theirs)


def _clash(base: object, ours: object, theirs: object) -> bool:
    return ours != base and theirs != base and ours != theirs


def _scalar_clashes(base: object, ours: object, theirs: object, path: str = "") -> tuple[str, ...]:
    """The scalars (``default``, ``instance``...) a manifest field's sides set differently."""
    if not _clash(base, ours, theirs) or isinstance(ours, list) or isinstance(theirs, list):
        return ()
    if isinstance(ours, Mapping) and isinstance(theirs, Mapping):
        sub = base if isinstance(base, Mapping) else {}
        return tuple(
            name
            for k in _keys(ours, theirs)
            if k not in LIST_FIELDS
            for name in _scalar_clashes(sub.get(k), ours.get(k), theirs.get(k), f"{path}{k}.")
        )
    return (path.rstrip(".") or "value",)


def _rows(
    section: str,
    base: Mapping[str, Any],
    ours: Mapping[str, Any],
    theirs: Mapping[str, Any],
    found: list[Conflict],
) -> list[Any]:
    if theirs.get(section) == base.get(section):
        return list(ours.get(section) or [])
    if ours.get(section) == base.get(section):
        return list(theirs.get(section) or [])
    before, mine, other = (_keyed(section, m.get(section)) for m in (base, ours, theirs))
    out: list[Any] = []
    # The remote's order first, then rows only this library has: both sides end with the same
    # order (a digest counts it), and the published form of this manifest equals the remote's.
    for key in [*other, *(k for k in mine if k not in other)]:
        b, o, t = before.get(key), mine.get(key), other.get(key)
        if t == b or o == t:
            row = o  # the remote did not touch it, or made the same change
        elif o == b:
            row = t  # only the remote changed it (or removed it)
        elif o is None or t is None:
            row = o if t is None else t  # removed on one side, edited on the other: keep the edit
            if row is not None:
                found.append(Conflict(section, label(section, row), ("(removed)",), _side(row, o)))
        else:
            row = merge_rows(section, b, o, t, found)
        if row is not None:
            out.append(row)
    # Rows that are not mappings are not ours to judge: keep this library's as they are.
    out += [r for r in ours.get(section) or [] if not isinstance(r, Mapping)]
    return out


def merge_rows(
    section: str, base: Row | None, ours: Row, theirs: Row, found: list[Conflict] | None = None
) -> dict[str, Any]:
    """One row both sides changed: lists unioned, a scalar clash won by the newer row."""
    newer = theirs if _recency(theirs) > _recency(ours) else ours
    clashes = [
        key
        for key in _keys(ours, theirs)
        if key not in LIST_FIELDS
        and key not in ("name", "last_touched", "source", "visibility")
        and _clash((base or {}).get(key), ours.get(key), theirs.get(key))
    ]
    if clashes and found is not None:
        found.append(Conflict(section, label(section, ours), tuple(clashes), _side(newer, ours)))
    seen = (ours.get("visibility"), theirs.get("visibility"))
    if found is not None and _clash((base or {}).get("visibility"), *seen):
        # Whatever the newer row says, the stricter visibility stays (``keep_floor``).
        stricter = LOCAL if _strictness(seen[0]) >= _strictness(seen[1]) else REMOTE
        found.append(Conflict(section, label(section, ours), ("visibility",), stricter))
    out: dict[str, Any] = {}
    for key in _keys(ours, theirs):
        if key == "name" and "name" in ours:
            out[key] = ours[key]  # names match ignoring case; keep this library's spelling
            continue
        if key == "last_touched":
            # Touched on both sides: as recently as either. The merged row then stays the newer
            # one, so integrating it again picks the same values (a fixed point).
            touched = [str(v) for v in (ours.get(key), theirs.get(key)) if v]
            value: Any = max(touched) if touched else None
        else:
            value = _field(
                key, (base or {}).get(key), ours.get(key), theirs.get(key), section, newer
            )
        if value is not None:
            out[key] = value
    return out


def _field(
    key: str, base: object, ours: object, theirs: object, section: str | None, newer: Row | None
) -> Any:
    if theirs == base or ours == theirs:
        return ours
    if ours == base:
        return theirs
    if key in LIST_FIELDS or key == "capabilities":
        # Three-way too: an item either side removed goes, an item either side added stays.
        mine, other = _items(ours), _items(theirs)
        before = _items(base)
        kept = [item for item in mine if item in other or item not in before]
        added = [item for item in other if item not in before]
        return union_lists(kept, added, section, key)
    if newer is not None:
        return newer.get(key)  # a row's scalar (or its ``source``) as the newer row has it
    if isinstance(ours, Mapping) and isinstance(theirs, Mapping):
        sub = base if isinstance(base, Mapping) else {}
        merged = {
            k: _field(k, sub.get(k), ours.get(k), theirs.get(k), None, None)
            for k in _keys(ours, theirs)
        }
        return {k: v for k, v in merged.items() if v is not None}
    return ours  # a manifest-level scalar both changed: this library's stands


def _strictness(value: object) -> int:
    if isinstance(value, str) and value.upper() in Visibility.__members__:
        return int(Visibility[value.upper()])
    return int(Visibility.PRIVATE) if value is not None else -1


def _side(row: object, ours: object) -> str:
    return LOCAL if row is ours else REMOTE


def _items(value: object) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _recency(row: Row) -> tuple[str, str]:
    when = row.get("last_touched") or row.get("date") or ""
    return str(when), json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)


def _keyed(section: str, rows: object) -> dict[tuple[str, ...], Row]:
    if not isinstance(rows, list):
        return {}
    return {row_key(section, r): r for r in rows if isinstance(r, Mapping)}


def _keys(*maps: Mapping[str, Any]) -> list[str]:
    seen: dict[str, None] = {}
    for each in maps:
        seen.update(dict.fromkeys(each))
    return list(seen)
