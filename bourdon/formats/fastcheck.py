"""Fast verdicts on the rows of a manifest as read: valid, or "ask jsonschema".

Validating the rows of a 1,000-entity manifest with ``jsonschema`` takes tenths of a second;
``jsonschema_rs`` (compiled) decides the same rules in milliseconds. It only says *valid*:
a row it finds wrong, or cannot judge (a lone surrogate, a key that is not a string), goes
through the ``jsonschema`` path of ``reading`` as before, so every problem reported keeps its
exact text, and the verdict that serves a row is never looser than jsonschema's.

What a row must pass is one schema: the row's definition in ``reading.read_schema()`` and,
beside it, the text rule of ``checks.text_problems`` (no control character in any string or
key, no key over ``checks.MAX_KEY`` characters), said in JSON Schema. Formats are checked by
calling ``checks.formats()``, the very functions jsonschema calls. Without ``jsonschema_rs``
(not installed, or a build for another platform) every row goes the jsonschema path.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from bourdon.formats import checks

jsonschema_rs: Any
try:  # an accelerator only: bourdon reads every manifest correctly without it
    import jsonschema_rs
except ImportError:  # pragma: no cover - the fallback test hides the module instead
    jsonschema_rs = None

RowCheck = Callable[[Any], bool]

# checks.BAD_TEXT without the surrogates: a string holding one cannot reach the compiled
# validator at all (it raises, and the row goes the jsonschema path).
_BAD_TEXT = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]"
_CLEAN: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "not": {"pattern": _BAD_TEXT}},
        {"type": "array", "items": {"$ref": "#/$defs/_clean"}},
        {
            "type": "object",
            "propertyNames": {"maxLength": checks.MAX_KEY, "not": {"pattern": _BAD_TEXT}},
            "additionalProperties": {"$ref": "#/$defs/_clean"},
        },
        {"type": ["null", "boolean", "number"]},
    ]
}


def available() -> bool:
    """Whether rows are judged by the compiled validator (else all by jsonschema)."""
    return jsonschema_rs is not None


@cache
def row_check(section: str, *, strict: bool = False) -> RowCheck | None:
    """``check(row)``: True only if ``row`` (a mapping without empty fields) passes both the
    row schema of ``section`` and the text rule; ``None`` when no compiled validator exists.

    The rules are those manifests are read with, or with ``strict`` the schema writes obey."""
    if jsonschema_rs is None:
        return None
    from bourdon.formats import reading, schema

    full = schema.schema() if strict else reading.read_schema()
    defs = {**full["$defs"], "_clean": _CLEAN}
    row_def = {"$ref": f"#/$defs/{checks.SECTION_DEFS[section]}"}
    sub = {"$defs": defs, "allOf": [row_def, {"$ref": "#/$defs/_clean"}]}
    formats = {name: _format(name) for name in _formats_in(full)}
    try:
        validator = jsonschema_rs.Draft202012Validator(
            sub, formats=formats, validate_formats=True, ignore_unknown_formats=False
        )
    except Exception:  # a schema the compiled validator cannot take: slow path
        return None
    is_valid = validator.is_valid

    def check(row: Any) -> bool:
        try:
            return bool(is_valid(row))
        except Exception:  # a value it cannot convert: let jsonschema judge
            return False

    return check


def _format(name: str) -> Callable[[str], bool]:
    conforms = checks.formats().conforms
    return lambda value: bool(conforms(value, name))


def _formats_in(node: object) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("format"), str):
                found.add(item["format"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found
