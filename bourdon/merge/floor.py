"""Visibility only goes up: the floor every write but the operator's explicit lowering keeps.

A row's *effective* visibility is what ``model.row_visibility`` decides from the row and its
manifest's policy (a private tag, its own ``visibility``, a team tag, the default). A write may
change any of those, so the floor is checked on the result: each row of ``result`` whose key a
reference manifest holds is at least as strict as it was there (by that manifest's policy). A
row that came out lower is pinned with an explicit ``visibility`` at the old level, which no
policy can lower again (only a private tag can raise it further).

``lowered`` names what a write lowered, for the commit trailers of the operator's explicit
choice (``bourdon commit --allow-lower-visibility``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bourdon.merge.twoway import RowKeys, label
from bourdon.model import ROW_SECTIONS, Visibility, row_key, row_visibility

Key = tuple[str, tuple[str, ...]]


def levels(
    manifest: Mapping[str, Any] | None, keys: RowKeys | None = None
) -> dict[Key, Visibility]:
    """Each row's effective visibility in ``manifest``, by section and row key."""
    if not manifest:
        return {}
    key = (RowKeys() if keys is None else keys).of
    policy = _policy(manifest)
    out: dict[Key, Visibility] = {}
    for section in ROW_SECTIONS:
        for row in _rows(manifest, section):
            out[(section, key(section, row))] = row_visibility(row, policy)
    return out


def keep_floor(
    result: dict[str, Any], *references: Mapping[str, Any] | None, keys: RowKeys | None = None
) -> dict[str, Any]:
    """``result`` with every row at least as strict as in each of ``references``.

    Rows of ``result`` that are fine stay the very same objects. ``keys``: the write's row
    keys, when its other steps key the same rows.
    """
    keys = RowKeys() if keys is None else keys
    if len(references) == 1 and references[0] and _policy(references[0]) == _policy(result):
        return _keep_floor_of_changes(result, references[0], keys)
    floor: dict[Key, Visibility] = {}
    for reference in references:
        for key, level in levels(reference, keys).items():
            floor[key] = max(level, floor.get(key, Visibility.PUBLIC))
    if not floor:
        return result
    policy = _policy(result)
    for section in ROW_SECTIONS:
        rows = result.get(section)
        if not isinstance(rows, list):
            continue
        out, changed = [], False
        for row in rows:
            if isinstance(row, Mapping):
                least = floor.get((section, keys.of(section, row)))
                if least is not None and row_visibility(row, policy) < least:
                    row, changed = {**row, "visibility": str(least)}, True
            out.append(row)
        if changed:
            result[section] = out
    return result


def _keep_floor_of_changes(
    result: dict[str, Any], before: Mapping[str, Any], keys: RowKeys
) -> dict[str, Any]:
    """``keep_floor`` against one manifest of the same policy, looking only at what changed.

    The merge keeps unchanged rows as the very same objects, and under the same policy such a
    row has the same visibility: only rows that are new objects can have come out lower, and
    only rows of ``before`` that are no longer in ``result`` can hold their floor. A write
    touches a few rows, so a commit costs what it changed, not the whole manifest.
    """
    policy, key = _policy(result), keys.of
    for section in ROW_SECTIONS:
        rows = result.get(section)
        if not isinstance(rows, list):
            continue
        was = _rows(before, section)
        held, had = {id(r) for r in rows}, {id(r) for r in was}
        floor = {key(section, r): row_visibility(r, policy) for r in was if id(r) not in held}
        if not floor:
            continue
        out, changed = [], False
        for row in rows:
            if id(row) not in had and (type(row) is dict or isinstance(row, Mapping)):
                least = floor.get(key(section, row))
                if least is not None and row_visibility(row, policy) < least:
                    row, changed = {**row, "visibility": str(least)}, True
            out.append(row)
        if changed:
            result[section] = out
    return result


def lowered(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> list[str]:
    """Rows ``after`` holds at a lower visibility than ``before``: ``known_entities 'x':
    private -> public``, in the manifest's order."""
    was = levels(before)
    policy = _policy(after)
    out = []
    for section in ROW_SECTIONS:
        for row in _rows(after, section):
            old = was.get((section, row_key(section, row)))
            new = row_visibility(row, policy)
            if old is not None and new < old:
                out.append(f"{section} {label(section, row)!r}: {old} -> {new}")
    return out


def _rows(manifest: Mapping[str, Any], section: str) -> list[Mapping[str, Any]]:
    rows = manifest.get(section)
    if not isinstance(rows, list):
        return []
    return [r for r in rows if type(r) is dict or isinstance(r, Mapping)]  # the ABC check is slow


def _policy(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    policy = manifest.get("visibility_policy")
    return policy if isinstance(policy, Mapping) else {}
