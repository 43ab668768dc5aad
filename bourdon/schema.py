"""Validation of manifests against ``schemas/l5.schema.json``, with errors that name the path.

The schema is the language-neutral source of truth for the shape. Code adds what a JSON Schema
cannot say well: ids matched whole (``check_agent_id``), text free of control characters, and
readable messages. Validation is incremental: rows already known to be valid (the unchanged rows
of a manifest that was validated when it was written) are skipped, so a small merge into a
1,000-entity manifest costs what the change costs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import Any, Final

from jsonschema import Draft202012Validator, FormatChecker

from bourdon import yamlio
from bourdon.errors import InputError, SchemaError
from bourdon.model import ROW_SECTIONS, Manifest, check_agent_id
from bourdon.resources import schema_path

MAX_PROBLEMS: Final = 20
MAX_KEY: Final = 256  # YAML readers refuse implicit keys over 1,024 characters
_SECTION_DEFS: Final = {
    "known_entities": "entity",
    "recent_sessions": "session",
    "known_workstreams": "workstream",
    "notes": "note",
}
# Control characters other than tab, LF and CR, lone surrogates and non-characters.
_BAD_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")

_formats = FormatChecker()


_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


@_formats.checks("date-time", raises=ValueError)  # type: ignore[untyped-decorator]
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


@cache
def schema() -> dict[str, Any]:
    """The manifest schema as a dict."""
    with open(schema_path(), encoding="utf-8") as handle:
        loaded: dict[str, Any] = json.load(handle)
    return loaded


@cache
def _top_validator() -> Draft202012Validator:
    return Draft202012Validator(schema(), format_checker=_formats)


@cache
def _row_validator(section: str) -> Draft202012Validator:
    full = schema()
    sub = {"$defs": full["$defs"], **full["$defs"][_SECTION_DEFS[section]]}
    return Draft202012Validator(sub, format_checker=_formats)


@cache
def row_limits() -> dict[str, int]:
    """maxItems of each row section, read from the schema."""
    props = schema()["properties"]
    return {section: int(props[section]["maxItems"]) for section in ROW_SECTIONS}


def validate(
    data: object,
    *,
    trusted: Mapping[str, Any] | None = None,
    also: Mapping[str, Any] | None = None,
) -> Manifest:
    """Check ``data`` and return it as a ``Manifest``; raise ``SchemaError`` naming every path.

    Rows of ``trusted`` and ``also`` (manifests that already passed) that appear unchanged in
    ``data`` (the same objects, as ``merge`` keeps them) are not checked again.
    """
    if not isinstance(data, dict):
        raise SchemaError(f"a manifest must be a mapping, got {_kind(data)}")
    problems: list[str] = []
    skeleton = {k: v for k, v in data.items() if k not in ROW_SECTIONS or not isinstance(v, list)}
    problems += _problems(_top_validator(), skeleton, "")
    problems += _text_problems(skeleton, "")
    known = {
        id(row) for passed in (trusted, also) for s in ROW_SECTIONS for row in _rows(passed, s)
    }
    for section in ROW_SECTIONS:
        rows = data.get(section)
        if not isinstance(rows, list):
            continue
        limit = row_limits()[section]
        if len(rows) > limit:
            problems.append(f"/{section}: {len(rows)} rows; the limit is {limit}")
        for i, row in enumerate(rows):
            if id(row) in known:
                continue
            path = f"/{section}/{i}"
            problems += _problems(_row_validator(section), row, path)
            problems += _text_problems(row, path)
        if len(problems) >= MAX_PROBLEMS:
            break
    agent = data.get("agent")
    if isinstance(agent, dict) and isinstance(agent.get("id"), str):
        try:
            check_agent_id(agent["id"])
        except InputError as exc:
            # Say it once, in words, instead of echoing the schema's regular expression.
            problems = [p for p in problems if not p.startswith("/agent/id:")]
            problems.insert(0, f"/agent/id: {exc.message}")
    if problems:
        problems = sorted(set(problems), key=problems.index)[:MAX_PROBLEMS]
        more = "" if len(problems) == 1 else f" (and {len(problems) - 1} more)"
        raise SchemaError(f"{problems[0]}{more}", problems=problems)
    return Manifest(data)


def load_manifest(raw: bytes | str, *, what: str = "manifest") -> Manifest:
    """Parse and validate manifest bytes; every failure names ``what``."""
    data = yamlio.load(raw, what=what)
    try:
        return validate(data)
    except SchemaError as exc:
        problems = [f"{what}: {p}" for p in exc.problems]
        more = "" if len(problems) == 1 else f" (and {len(problems) - 1} more)"
        raise SchemaError(problems[0] + more, problems=problems) from None


def _rows(manifest: Mapping[str, Any] | None, section: str) -> list[Any]:
    rows = manifest.get(section) if manifest else None
    return rows if isinstance(rows, list) else []


def _problems(validator: Draft202012Validator, instance: object, prefix: str) -> list[str]:
    found = []
    for error in sorted(validator.iter_errors(instance), key=lambda e: list(map(str, e.path))):
        path = prefix + "".join(f"/{part}" for part in error.path)
        found.append(f"{path or '/'}: {_say(error)}")
    return found


def _say(error: Any) -> str:
    """One readable line for a jsonschema error, with long values shortened, not the reason."""
    value, limit = error.instance, error.validator_value
    if error.validator == "maxLength":
        return f"is {len(value):,} characters long; the limit is {limit:,}"
    if error.validator == "maxItems":
        return f"has {len(value):,} items; the limit is {limit:,}"
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    if error.cause is not None:
        return f"{shown} is not a valid {limit}: {error.cause}"
    message: str = error.message
    if len(message) > 200:
        message = message.replace(repr(value), shown)
    return message if len(message) <= 240 else message[:237] + "..."


def _text_problems(value: object, path: str) -> list[str]:
    found: list[str] = []
    stack: list[tuple[object, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            bad = _BAD_TEXT.search(item)
            if bad:
                found.append(f"{where or '/'}: contains the control character {bad.group()!r}")
        elif isinstance(item, dict):
            for key in item:
                if not isinstance(key, str) or len(key) > MAX_KEY:
                    found.append(f"{where or '/'}: has a key longer than {MAX_KEY} characters")
                elif _BAD_TEXT.search(key):
                    found.append(f"{where or '/'}: has a key with a control character")
            stack.extend((v, f"{where}/{k}") for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{where}/{i}") for i, v in enumerate(item))
    return found


def _kind(value: object) -> str:
    return "nothing" if value is None else type(value).__name__
