"""Step 4 of the export: an export never lowers the visibility a row already has.

Rows keep the reader's explicit visibility; the library's own level wins when it is higher (set
by hand, by a private tag, or by another writer), and the policy's default never goes down.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bourdon.model import ROW_SECTIONS, Visibility, row_key, row_visibility


def keep_visibility(fresh: dict[str, Any], current: Mapping[str, Any] | None) -> dict[str, Any]:
    """Never lower a row's visibility: a row the library already holds keeps at least its level.

    Rows keep the reader's explicit visibility; a row whose key the library already has at a
    higher level (set by hand, by a private tag, or by another writer) is raised to that level.
    A reader's policy may add tags but not lower the default.
    """
    if not current:
        return fresh
    policy = current.get("visibility_policy")
    policy = policy if isinstance(policy, Mapping) else {}
    given = fresh.get("visibility_policy")
    if isinstance(given, Mapping):
        given = dict(given)
        old, new = _level(policy.get("default")), _level(given.get("default"))
        if old is not None and (new is None or new < old):
            given["default"] = str(old)
        fresh["visibility_policy"] = given
        after_policy: Mapping[str, Any] = {
            **policy,
            **given,
            "private_tags": _union(policy.get("private_tags"), given.get("private_tags")),
            "team_tags": _union(policy.get("team_tags"), given.get("team_tags")),
        }
    else:
        after_policy = policy
    for section in ROW_SECTIONS:
        rows = fresh.get(section)
        held = current.get(section)
        if not isinstance(rows, list) or not isinstance(held, list):
            continue
        levels = {
            row_key(section, r): row_visibility(r, policy) for r in held if isinstance(r, Mapping)
        }
        out = []
        for row in rows:
            if isinstance(row, Mapping):
                was = levels.get(row_key(section, row))
                if was is not None and row_visibility(row, after_policy) < was:
                    row = {**row, "visibility": str(was)}
            out.append(row)
        fresh[section] = out
    return fresh


def _level(value: object) -> Visibility | None:
    if isinstance(value, str) and value.upper() in Visibility.__members__:
        return Visibility[value.upper()]
    return None


def _union(a: object, b: object) -> list[Any]:
    out: list[Any] = []
    for value in (a, b):
        items = value if isinstance(value, list) else [value] if value is not None else []
        out += [i for i in items if i not in out]
    return out
