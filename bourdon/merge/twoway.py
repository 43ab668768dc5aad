"""What a commit does to a manifest: ``merge`` or ``replace`` (pure, no I/O).

A *change* has the manifest's shape: an optional ``agent`` block, ``capabilities``,
``visibility_policy`` and any of the four row sections. ``merge`` unions it into the current
manifest:

- rows are matched by ``model.row_key`` (entities and workstreams by name ignoring case, sessions
  by date + cwd + session id, notes by date + text);
- in a matched row, list fields are unioned (new items last; over the limit, the oldest items
  the change does not name are dropped, so merging the same change twice changes nothing) and
  scalars are overwritten; a bare string in a list field is one item, never split into
  characters; a ``null`` in the change leaves the field alone;
- rows the change does not mention are kept as the very same objects, so validation can skip them.

``replace`` keeps the agent's identity (with every field of its ``agent`` block) and writes only
what the change gives.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bourdon.model import (
    AGENT_FIELDS,
    ENTITIES,
    LIST_FIELDS,
    NOTES,
    ROW_SECTIONS,
    SPEC_VERSION,
    WORKSTREAMS,
    list_limit,
    produced_by,
    row_key,
    row_visibility,
)


@dataclass
class MergeStats:
    """How many rows a commit added, updated and removed, per section."""

    added: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROW_SECTIONS, 0))
    updated: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROW_SECTIONS, 0))
    removed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROW_SECTIONS, 0))

    @property
    def total_added(self) -> int:
        return sum(self.added.values())

    @property
    def total_updated(self) -> int:
        return sum(self.updated.values())

    @property
    def total_removed(self) -> int:
        return sum(self.removed.values())


class RowKeys:
    """Each row's ``row_key``, once per write; rows are held by identity and must not change."""

    __slots__ = ("_held", "_known")

    def __init__(self) -> None:
        self._known: dict[str, dict[int, tuple[str, ...]]] = {}
        self._held: list[Mapping[str, Any]] = []

    def of(self, section: str, row: Mapping[str, Any]) -> tuple[str, ...]:
        known = self._known.get(section) or self._known.setdefault(section, {})
        key = known.get(id(row))
        if key is None:
            key = known[id(row)] = row_key(section, row)
            self._held.append(row)
        return key


def normalize_row(
    row: Mapping[str, Any], source: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A row as it is stored: list fields as lists without repeats, nulls dropped, ``source`` set.

    >>> normalize_row({"name": "x", "tags": "infra", "summary": None})
    {'name': 'x', 'tags': ['infra']}
    """
    out: dict[str, Any] = {}
    for key, value in row.items():
        if value is None:
            continue
        out[key] = _as_list(value) if key in LIST_FIELDS else value
    if source is not None and "source" not in out:
        out["source"] = dict(source)
    return out


def merge(
    base: Mapping[str, Any] | None,
    change: Mapping[str, Any],
    *,
    mode: str = "merge",
    source: Mapping[str, Any] | None = None,
    keys: RowKeys | None = None,
) -> tuple[dict[str, Any], MergeStats]:
    """Apply ``change`` to ``base`` (``None`` for a new agent); return the result and counts.

    ``source`` is stamped on every row of the change that does not carry one; ``keys``: shared.
    """
    keys = RowKeys() if keys is None else keys
    if mode not in ("merge", "replace"):
        raise ValueError(f"mode must be 'merge' or 'replace', got {mode!r}")
    base = base or {}
    stats = MergeStats()
    result: dict[str, Any] = dict(base) if mode == "merge" else _identity_of(base)
    result.setdefault("spec_version", SPEC_VERSION)
    result["agent"] = _merge_agent(base.get("agent"), change.get("agent"))

    for key, value in change.items():
        if key in ("agent", "spec_version", "last_updated") or key in ROW_SECTIONS or value is None:
            continue
        if key == "capabilities":
            result[key] = union_lists(
                result.get(key) if mode == "merge" else None, value, None, key
            )
        elif key == "visibility_policy" and isinstance(value, Mapping):
            result[key] = _merge_row(result.get(key) or {}, normalize_row(value), None)
        else:
            result[key] = value

    for section in ROW_SECTIONS:
        given = change.get(section)
        if given is None:
            continue
        if not isinstance(given, list):
            result[section] = given  # left for validation to name the problem
            continue
        current = list(base.get(section) or []) if mode == "merge" else []
        merged = _merge_rows(current, given, source, section, stats, keys)
        if mode == "replace":
            _recount_replaced(base.get(section), merged, section, stats, keys)
        if merged or section in result or mode == "replace":
            result[section] = merged

    if mode == "replace":
        for section in ROW_SECTIONS:
            kept = {
                keys.of(section, r) for r in result.get(section) or [] if isinstance(r, Mapping)
            }
            stats.removed[section] = sum(
                1
                for r in base.get(section) or []
                if isinstance(r, Mapping) and keys.of(section, r) not in kept
            )
    return result, stats


def _recount_replaced(
    old: object, new: list[Any], section: str, stats: MergeStats, keys: RowKeys
) -> set[tuple[str, ...]]:
    """In replace mode, a row that was there before is updated (or unchanged), not added;
    returns the keys of the rows of ``old`` that ``new`` lacks."""
    key = keys.of
    before: dict[tuple[str, ...], Mapping[str, Any]] = {}
    for r in old if isinstance(old, list) else ():
        if type(r) is dict or isinstance(r, Mapping):  # the type first: the ABC check is slow
            before[key(section, r)] = r
    added = updated = 0
    after: set[tuple[str, ...]] = set()
    for row in new:
        if type(row) is dict or isinstance(row, Mapping):
            after.add(k := key(section, row))
            previous = before.get(k)
            if previous is None:
                added += 1
            elif previous != row:
                updated += 1
    stats.added[section], stats.updated[section] = added, updated
    return before.keys() - after


def _identity_of(base: Mapping[str, Any]) -> dict[str, Any]:
    # A replace is the caller's explicit "this is the whole manifest now", as in the Bourdon
    # reference: top-level fields it does not give (``skills``, ``x-...``) go with the rest.
    keep = ("spec_version", "last_updated")
    return {k: base[k] for k in keep if k in base}


def _merge_agent(old: object, new: object) -> dict[str, Any]:
    agent = dict(old) if isinstance(old, Mapping) else {}
    if isinstance(new, Mapping):
        for key, value in new.items():
            if value is None:
                continue
            if key == "type" and agent.get("type"):
                continue  # an existing agent keeps its type; the reference ignores it on merge
            agent[key] = value
    return {
        k: agent[k] for k in (*AGENT_FIELDS, *sorted(set(agent) - set(AGENT_FIELDS))) if k in agent
    }


def _merge_rows(
    current: list[Any],
    given: list[Any],
    source: Mapping[str, Any] | None,
    section: str,
    stats: MergeStats,
    keys: RowKeys,
) -> list[Any]:
    position = {keys.of(section, r): i for i, r in enumerate(current) if isinstance(r, Mapping)}
    original = list(current)
    touched: set[int] = set()
    fresh: set[int] = set()  # positions added by this change
    for raw in given:
        if not (type(raw) is dict or isinstance(raw, Mapping)):
            current.append(raw)  # left for validation to name the problem
            continue
        row = normalize_row(raw, source)
        key = keys.of(section, row)
        at = position.get(key)
        if at is None:
            if section == WORKSTREAMS and "status" not in row:
                row["status"] = "active"  # the reference's default, for new workstreams only
            position[key] = len(current)
            fresh.add(len(current))
            current.append(row)
            stats.added[section] += 1
            continue
        merged = _merge_row(current[at], row, section)
        if merged != current[at]:
            current[at] = merged
            touched.add(at)
    # A row changed twice by one change, or changed and changed back, counts once or not at all.
    stats.updated[section] += sum(
        1 for at in touched if at not in fresh and current[at] != original[at]
    )
    return current


def _merge_row(
    old: Mapping[str, Any], new: Mapping[str, Any], section: str | None
) -> dict[str, Any]:
    out = dict(old)
    for key, value in new.items():
        if key == "name" and "name" in old:
            continue  # names match ignoring case; the row keeps the spelling it was created with
        if key in LIST_FIELDS:
            out[key] = union_lists(old.get(key), value, section, key)
        else:
            out[key] = value
    return out


def union_lists(old: object, new: object, section: str | None, key: str) -> list[Any]:
    """Old items, then the new ones not there yet; over the limit, the oldest old items go.

    The change's own items always survive (only its newest ``limit`` if it has more), so
    merging the same change again finds them all present and changes nothing.
    """
    limit = list_limit(section, key)
    incoming = _as_list(new)
    if limit is not None and len(incoming) > limit:
        incoming = incoming[-limit:]
    items = _as_list(old) if old is not None else []
    items += [item for item in incoming if item not in items]
    if limit is None or len(items) <= limit:
        return items
    excess = len(items) - limit
    kept = []
    for item in items:
        if excess and item not in incoming:
            excess -= 1
            continue
        kept.append(item)
    return kept


def _as_list(value: object) -> list[Any]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        if len(value) < 2:
            return list(value)  # nothing to compare: the loop below, without its cost
        unique: list[Any] = []
        for item in value:
            if item not in unique:
                unique.append(item)
        return unique
    return [value]  # left for validation to name the problem


@dataclass
class RowChanges:
    """Rows added, removed and changed between two manifests, by section, named by their key."""

    added: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in ROW_SECTIONS})
    removed: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in ROW_SECTIONS})
    changed: dict[str, list[str]] = field(default_factory=lambda: {s: [] for s in ROW_SECTIONS})
    agent_changed: bool = False

    @property
    def empty(self) -> bool:
        return not self.agent_changed and not any(
            rows for part in (self.added, self.removed, self.changed) for rows in part.values()
        )

    def to_dict(self) -> dict[str, Any]:
        def keep(part: dict[str, list[str]]) -> dict[str, list[str]]:
            return {section: rows for section, rows in part.items() if rows}

        return {
            "added": keep(self.added),
            "removed": keep(self.removed),
            "changed": keep(self.changed),
            "agent_changed": self.agent_changed,
        }


def compare(
    old: Mapping[str, Any] | None, new: Mapping[str, Any] | None, level: int | None = None
) -> RowChanges:
    """What changed from ``old`` to ``new`` (either may be ``None``), row by row.

    With ``level``, rows above that visibility (by each manifest's own policy) are left out,
    for callers who may not see them.
    """
    old, new = old or {}, new or {}
    changes = RowChanges(agent_changed=old.get("agent") != new.get("agent"))
    for section in ROW_SECTIONS:
        before = _keyed(section, old.get(section), _policy(old), level)
        after = _keyed(section, new.get(section), _policy(new), level)
        changes.added[section] = [label(section, r) for k, r in after.items() if k not in before]
        changes.removed[section] = [label(section, r) for k, r in before.items() if k not in after]
        changes.changed[section] = [
            label(section, r) for k, r in after.items() if k in before and before[k] != r
        ]
    return changes


def _keyed(
    section: str, rows: object, policy: Mapping[str, Any], level: int | None
) -> dict[tuple[str, ...], Any]:
    if not isinstance(rows, list):
        return {}
    return {
        row_key(section, r): r
        for r in rows
        if isinstance(r, Mapping) and (level is None or row_visibility(r, policy) <= level)
    }


def _policy(data: Mapping[str, Any]) -> Mapping[str, Any]:
    policy = data.get("visibility_policy")
    return policy if isinstance(policy, Mapping) else {}


def label(section: str, row: Mapping[str, Any]) -> str:
    """A row as people recognise it: its name, or its date and place or text."""
    if section in (ENTITIES, WORKSTREAMS):
        return str(row.get("name", ""))
    if section == NOTES:
        text = " ".join(str(row.get("text", "")).split())
        return f"{row.get('date') or '(no date)'} | {text[:60]}{'...' if len(text) > 60 else ''}"
    parts = [str(row.get(k) or "") for k in ("date", "cwd", "session_id")]
    return " | ".join(p for p in parts if p) or "(no date)"


def regenerate(
    base: Mapping[str, Any] | None,
    fresh: Mapping[str, Any],
    source: Mapping[str, Any],
    *,
    keys: RowKeys | None = None,
) -> tuple[dict[str, Any], MergeStats]:
    """Replace what one reader on one machine contributed, keep everything else.

    ``fresh`` is a reader's whole view of its store, in the manifest's shape. Rows of
    ``base`` whose ``source`` is this reader on this machine are dropped and replaced by
    ``fresh``; rows committed by others (ours or ``origin: committed``), from other machines,
    or of a producer named only by a string, survive (DESIGN section 3; ``model.produced_by``).
    ``keys``: the write's row keys, when its other steps key the same rows too.
    """
    keys = RowKeys() if keys is None else keys
    base = base or {}
    kept: dict[str, Any] = dict(base)
    for section in ROW_SECTIONS:
        rows = base.get(section)
        if isinstance(rows, list):
            kept[section] = [r for r in rows if not produced_by(r, source)]
    result, stats = merge(kept, fresh, source=source, keys=keys)
    for section in ROW_SECTIONS:
        old, rows = base.get(section), result.get(section)
        gone = _recount_replaced(old, rows if isinstance(rows, list) else [], section, stats, keys)
        if not isinstance(old, list | None) or not isinstance(rows, list | None):
            # A section that is not a list is read as it always was (some fail to iterate).
            before = {keys.of(section, r) for r in old or [] if isinstance(r, Mapping)}
            gone = before - {keys.of(section, r) for r in rows or [] if isinstance(r, Mapping)}
        stats.removed[section] = len(gone)
    return result, stats
