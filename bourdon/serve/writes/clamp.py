"""``on_clamp``: what a merge does when it grows a list field past its limit.

The merge itself always keeps a list within its limit by dropping the oldest items the change
does not name (``merge.twoway.union_lists``). Before committing, this module works out which
items that would drop, for the caller's rows only, so the caller chooses, as in the reference:
``spill`` (the default) keeps the dropped items in a note tagged ``bourdon:clamp-spill`` added
to the same commit, ``evict`` lets them go, ``reject`` refuses the write and leaves the
manifest as it was. Either way the answer lists them in ``list_items_evicted``.

The items are worked out against the manifest as read just before the commit; a write that
lands in between may change what the merge drops (the commit's own merge is what counts).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Final

from bourdon.errors import InputError, NotFoundError
from bourdon.merge.twoway import union_lists
from bourdon.model import (
    ENTITIES,
    LIST_FIELDS,
    NOTES,
    ROW_SECTIONS,
    SESSIONS,
    WORKSTREAMS,
    row_key,
    row_visibility,
)
from bourdon.serve.writes.rows import PARAMETERS
from bourdon.store.library import Library

MODES: Final = ("spill", "evict", "reject")
SPILL_TAG: Final = "bourdon:clamp-spill"  # the reference's tag, so its clients find them too
MAX_TEXT: Final = 4000  # a note's text limit (schemas/l5.schema.json)
KIND: Final = {ENTITIES: "entity", SESSIONS: "session", WORKSTREAMS: "workstream", NOTES: "note"}


def check_mode(on_clamp: object) -> str:
    if on_clamp not in MODES:
        raise InputError(f"on_clamp {on_clamp!r} is not one of {', '.join(MODES)}")
    return str(on_clamp)


def evictions(
    library: Library,
    agent_id: str,
    change: Mapping[str, Any],
    mode: str,
    level: int | None = None,
) -> list[dict[str, Any]]:
    """What merging ``change`` into the agent's live memory would drop, one record per list
    field: ``{collection, row_key, row, field, items, limit}`` (``row``: the caller's index).

    Rows above ``level`` (what the caller may see; ``None``: everything) are left out: their
    items are never shown to it, not even as dropped ones."""
    if mode != "merge":
        return []
    try:
        current = library.read(agent_id)
    except NotFoundError:
        return []
    found: list[dict[str, Any]] = []
    for section in ROW_SECTIONS:
        incoming = change.get(section)
        if not isinstance(incoming, list):
            continue
        existing = {row_key(section, r): r for r in current.rows(section) if isinstance(r, Mapping)}
        for index, row in enumerate(incoming):
            old = existing.get(row_key(section, row))
            if old is None or (level is not None and row_visibility(old, current.policy) > level):
                continue
            for field, value in row.items():
                if field not in LIST_FIELDS or value is None or old.get(field) is None:
                    continue
                before = _items(old.get(field)) + _items(value)
                kept = union_lists(old.get(field), value, section, field)
                dropped = [
                    item for item in dict.fromkeys(map(str, before)) if item not in map(str, kept)
                ]
                if dropped:
                    found.append(
                        {
                            "collection": section,
                            "row_key": label(section, old),
                            "row": f"{PARAMETERS[section]}[{index}]",
                            "field": field,
                            "items": dropped,
                            "limit": len(kept),
                            "visibility": old.get("visibility") or row.get("visibility"),
                        }
                    )
    return found


def refuse(evicted: list[dict[str, Any]]) -> InputError:
    """``on_clamp='reject'``: the refusal, naming each list and how many items it would drop."""
    said = "; ".join(
        f"{e['row']}.{e['field']}: the merge would drop {len(e['items'])} item(s) past the limit "
        f"of {e['limit']}"
        for e in evicted[:5]
    )
    return InputError(
        f"{said} (on_clamp='reject'; nothing was written)", list_items_evicted=public(evicted)
    )


def spill_notes(evicted: list[dict[str, Any]], today: datetime.date) -> list[dict[str, Any]]:
    """One note per list that lost items, saying which, tagged ``bourdon:clamp-spill``; it is
    never more visible than the row it came from."""
    notes = []
    for e in evicted:
        text = (
            f"Kept when the {KIND[e['collection']]} {e['row_key']!r} had more {e['field']} than "
            f"its limit of {e['limit']}: " + "; ".join(e["items"])
        )
        note: dict[str, Any] = {
            "date": today.isoformat(),
            "text": text[: MAX_TEXT - 1] + "…" if len(text) > MAX_TEXT else text,
            "tags": [SPILL_TAG],
        }
        if e["collection"] == ENTITIES:
            note["related_entities"] = [e["row_key"]]
        if e["visibility"]:
            note["visibility"] = e["visibility"]
        notes.append(note)
    return notes


def with_spill(change: Mapping[str, Any], notes: list[dict[str, Any]]) -> dict[str, Any]:
    out = dict(change)
    out[NOTES] = [*(change.get(NOTES) or []), *notes]
    return out


def public(evicted: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as the answer gives them (without the visibility used for the notes)."""
    return [{k: v for k, v in e.items() if k != "visibility"} for e in evicted]


def label(section: str, row: Mapping[str, Any]) -> str:
    """How a note names the row: its name, or a session's date and folder, a note's date."""
    if section in (ENTITIES, WORKSTREAMS):
        return str(row.get("name", ""))
    parts = (row.get("date"), row.get("cwd")) if section == SESSIONS else (row.get("date"),)
    return " in ".join(str(p) for p in parts if p)


def _items(value: object) -> list[Any]:
    if isinstance(value, list):
        return value
    return [value]
