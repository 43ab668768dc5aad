"""The checks strict validation (``schema``) and lenient reading (``reading``) share.

The RFC 3339 ``date-time`` format (jsonschema leaves it unchecked without an optional
package), text free of control characters, and readable one-line messages for schema errors
that name the path and the rule, never the value. Problems are collected as ``/path: what``
strings and raised together as one ``SchemaError``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from bourdon.errors import InputError, SchemaError
from bourdon.model import check_agent_id

if TYPE_CHECKING:  # jsonschema is imported when a manifest is validated, not at start-up
    from jsonschema import Draft202012Validator, FormatChecker

MAX_PROBLEMS: Final = 20
MAX_KEY: Final = 256  # YAML readers refuse implicit keys over 1,024 characters
SECTION_DEFS: Final = {
    "known_entities": "entity",
    "recent_sessions": "session",
    "known_workstreams": "workstream",
    "notes": "note",
}
TOP_REQUIRED: Final = ("spec_version", "agent", "last_updated")
# Control characters other than tab, LF and CR, lone surrogates and non-characters.
BAD_TEXT: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")

_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


@cache
def formats() -> FormatChecker:
    """jsonschema's format checks, with RFC 3339 ``date-time`` checked (see ``_is_date_time``)."""
    from jsonschema import FormatChecker

    checker = FormatChecker()
    checker.checks("date-time", raises=ValueError)(_is_date_time)
    return checker


def _is_date_time(value: object) -> bool:
    # jsonschema leaves date-time unchecked unless an optional package is present. RFC 3339:
    # extended form, a 'T', seconds and an offset ('Z' or '+02:00'); then the calendar check.
    if not isinstance(value, str):
        return True
    if "T" not in value.upper():
        raise ValueError("a date-time needs a 'T' between date and time")
    if not re.search(r"([Zz]|[+-][0-9]{2}:[0-9]{2})$", value):
        raise ValueError("a date-time needs a time zone offset such as 'Z' or '+02:00'")
    if not _RFC3339.fullmatch(value):
        raise ValueError("use RFC 3339, such as '2026-11-30T09:15:00Z'")
    datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    return True


def with_agent_id_in_words(problems: list[str], data: Mapping[str, Any]) -> list[str]:
    """Say a bad agent id once, in words, instead of echoing the schema's regular expression."""
    agent = data.get("agent")
    if isinstance(agent, dict) and isinstance(agent.get("id"), str):
        try:
            check_agent_id(agent["id"])
        except InputError as exc:
            problems = [p for p in problems if not p.startswith("/agent/id:")]
            problems.insert(0, f"/agent/id: {exc.message}")
    return problems


def raise_if_any(problems: list[str]) -> None:
    """One ``SchemaError`` for every problem found (the first in its message), if any."""
    if problems:
        problems = sorted(set(problems), key=problems.index)[:MAX_PROBLEMS]
        more = "" if len(problems) == 1 else f" (and {len(problems) - 1} more)"
        raise SchemaError(f"{problems[0]}{more}", problems=problems)


def rows_of(manifest: Mapping[str, Any] | None, section: str) -> list[Any]:
    """The rows of one section, ``[]`` when it is missing or not a list."""
    rows = manifest.get(section) if manifest else None
    return rows if isinstance(rows, list) else []


def schema_problems(validator: Draft202012Validator, instance: object, prefix: str) -> list[str]:
    """What ``validator`` finds wrong in ``instance``, as ``/path: what`` below ``prefix``."""
    found = []
    for error in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.path))):
        path = prefix + "".join(f"/{part}" for part in error.path)
        found.append(f"{path or '/'}: {say(error)}")
    return found


def say(error: Any) -> str:
    """One readable line for a jsonschema error that names the rule broken, never the value.

    The path before it says which file, row and field; the value itself may be private (a row's
    text, the name of a private tag), and a message can travel to callers over the network.
    """
    value, limit, rule = error.instance, error.validator_value, error.validator
    if rule == "maxLength":
        return f"is {len(value):,} characters long; the limit is {limit:,}"
    if rule == "maxItems":
        return f"has {len(value):,} items; the limit is {limit:,}"
    if rule == "minLength":
        return "should be non-empty" if limit == 1 else f"is shorter than {limit:,} characters"
    if rule == "minItems":
        return f"has fewer than {limit:,} items"
    if rule == "required":
        missing = [k for k in limit if isinstance(value, dict) and k not in value]
        return f"{missing[0]!r} is a required property" if missing else "misses a field"
    if rule == "type":
        wanted = limit if isinstance(limit, str) else " or ".join(limit)
        return f"is not of type {wanted!r} (it is {kind_of(value)})"
    if rule == "enum":
        return "is not one of " + ", ".join(repr(v) for v in limit)
    if rule == "const":
        return f"must be {limit!r}"
    if rule == "pattern":
        return f"does not match {limit}"
    if rule == "format":
        cause = _cause(error)
        if limit == "date":
            return "is not a 'date' (YYYY-MM-DD)" + (f": {cause}" if cause else "")
        return f"is not a valid {limit}" + (f": {cause}" if cause else "")
    if rule in ("anyOf", "oneOf"):  # a session's date: a date, or "" when none was known
        formats = [e for e in error.context or () if e.validator == "format"]
        if formats:
            return say(formats[0])
    if rule == "additionalProperties":  # names the fields (keys), not their values
        message: str = error.message
        return message if len(message) <= 240 else message[:237] + "..."
    return f"breaks the schema's {rule!r} rule"


def _cause(error: Any) -> str:
    """Why a format check failed, unless saying so would quote the value."""
    cause = " ".join(str(error.cause or "").split())
    shown = str(error.instance)
    return "" if not cause or (shown and shown in cause) or repr(shown) in cause else cause


def text_problems(value: object, path: str) -> list[str]:
    """Control characters (and over-long keys) anywhere in ``value``, as ``/path: what``."""
    found: list[str] = []
    stack: list[tuple[object, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            bad = BAD_TEXT.search(item)
            if bad:
                found.append(f"{where or '/'}: contains the control character {bad.group()!r}")
        elif isinstance(item, dict):
            for key in item:
                if not isinstance(key, str) or len(key) > MAX_KEY:
                    found.append(f"{where or '/'}: has a key longer than {MAX_KEY} characters")
                elif BAD_TEXT.search(key):
                    found.append(f"{where or '/'}: has a key with a control character")
            stack.extend((v, f"{where}/{k}") for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{where}/{i}") for i, v in enumerate(item))
    return found


def kind_of(value: object) -> str:
    """What a value is, for a message: ``nothing``, ``str``, ``list``..."""
    return "nothing" if value is None else type(value).__name__


def naming(what: str, exc: SchemaError) -> SchemaError:
    """``exc`` again, every problem prefixed with the file (``what``) it is in."""
    problems = [f"{what}: {p}" for p in exc.problems]
    more = "" if len(problems) == 1 else f" (and {len(problems) - 1} more)"
    return SchemaError(problems[0] + more, problems=problems)
