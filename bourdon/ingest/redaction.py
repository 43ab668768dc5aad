"""Step 3 of the export: every string of the view redacted, each unchanged row only once.

A reader gives back the same rows export after export. A row this library object already
redacted (the same JSON: the same values of the same types, in the same order) is given back as
it came out then, and the secrets it held are counted again, so an export in a library kept
open (a server's) redacts only the rows that changed. The memo lives as long as the library
object: a process that opens the library for one export (a hook) redacts the whole view.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping
from typing import Any, Final

from bourdon.access.redact import Findings, Redactor
from bourdon.model import ROW_SECTIONS

_LIMIT: Final = 20_000  # rows remembered per library; emptied when full
# library object -> a row's JSON -> (the row redacted, the kinds of secret it held)
_MEMOS: weakref.WeakKeyDictionary[object, dict[str, tuple[Any, dict[str, int]]]] = (
    weakref.WeakKeyDictionary()
)


def redact_view(view: Mapping[str, Any], owner: object) -> tuple[dict[str, Any], Findings]:
    """``redact_manifest(view)``: the same copy and the same findings, remembering the rows
    for the next export into the library object ``owner``."""
    memo = _MEMOS.setdefault(owner, {})
    if len(memo) > _LIMIT:
        memo.clear()
    findings = Findings()
    out: dict[str, Any] = {}
    redactor = Redactor()  # one for the view: the same strings come back in many rows
    for key, value in view.items():
        if key not in ROW_SECTIONS or not isinstance(value, list):
            redactor.findings = Findings()
            out[redactor.text(key)] = redactor.value(value)
            findings.kinds.update(redactor.findings.kinds)
            continue
        rows = []
        for row in value:
            red, kinds = _row(row, memo, redactor)
            findings.kinds.update(kinds)
            rows.append(red)
        out[key] = rows  # a section's name is one of ours: nothing in it to redact
    return out, findings


def _row(
    row: object, memo: dict[str, tuple[Any, dict[str, int]]], redactor: Redactor
) -> tuple[Any, dict[str, int]]:
    try:
        text = json.dumps(row, ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON: redacted each time
        text = None
    hit = memo.get(text) if text is not None else None
    if hit is not None:
        return hit
    redactor.findings = Findings()  # what this row holds, counted on its own
    done = (redactor.value(row), dict(redactor.findings.kinds))
    if text is not None:
        memo[text] = done
    return done
