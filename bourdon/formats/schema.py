"""Validation of manifests: strict for what bourdon writes, lenient for what it reads.

``schemas/l5.schema.json`` is the language-neutral source of truth for what bourdon *writes*.
Code adds what a JSON Schema cannot say well: ids matched whole (``check_agent_id``), text free
of control characters, and readable messages. Validation of a write is incremental: rows and
fields already on disk that a write keeps unchanged are not checked again, so a small merge into
a 1,000-entity manifest costs what the change costs, and what another Bourdon writer put there
(``origin: committed``, ``skills``, a ``source`` string, a row that does not validate) is written
back as it was instead of blocking the write.

*Reading* (``read_manifest``) accepts every manifest the Bourdon L5 schema accepts, plus our own
fields: unknown fields are allowed, bounds the Bourdon schema does not set are relaxed. A row
that still does not validate is left out of the served view and reported as a ``ReadProblem``
naming the file, the row and the field; the rest of the manifest is served. Only a broken top
level (not a mapping, no valid agent id or type, a bad visibility policy, a row section that is
not a list) makes the whole manifest unreadable.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, Final, NamedTuple

from jsonschema import Draft202012Validator, FormatChecker

from bourdon.errors import InputError, SchemaError
from bourdon.formats import yamlio
from bourdon.formats.resources import schema_path
from bourdon.model import (
    ENTITIES,
    ROW_SECTIONS,
    WORKSTREAMS,
    Manifest,
    Visibility,
    check_agent_id,
    row_key,
    row_visibility,
)

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
    passed = [m for m in (trusted, also) if m]
    skeleton = {k: v for k, v in data.items() if k not in ROW_SECTIONS or not isinstance(v, list)}
    found = _problems(_top_validator(), skeleton, "") + _text_problems(skeleton, "")
    if found and passed:
        # Fields kept unchanged from a manifest already on disk were accepted when read (an
        # other writer's ``skills``, ``agent.spec_version_compat``): only changes are checked.
        probe = _changed(skeleton, passed, _TOP_REQUIRED)
        agents = [m["agent"] for m in passed if isinstance(m.get("agent"), Mapping)]
        if isinstance(probe.get("agent"), Mapping):
            probe["agent"] = _changed(probe["agent"], agents, ("id", "type"))
        found = _problems(_top_validator(), probe, "") + _text_problems(probe, "")
    problems += found
    known = {id(row) for m in passed for s in ROW_SECTIONS for row in _rows(m, s)}
    counterparts: dict[tuple[str, ...], list[Mapping[str, Any]]] | None = None
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
            found = _problems(_row_validator(section), row, path) + _text_problems(row, path)
            if found and passed and isinstance(row, Mapping):
                # A row the write changed: what it kept of its row on disk was accepted when
                # read (``origin``, a ``source`` string, a field that never validated).
                if counterparts is None:
                    counterparts = _by_key(passed)
                before = counterparts.get((section, *row_key(section, row)), [])
                if before:
                    probe = _changed(row, before, _ROW_REQUIRED[section])
                    found = _problems(_row_validator(section), probe, path)
                    found += _text_problems(probe, path)
            problems += found
        if len(problems) >= MAX_PROBLEMS:
            break
    _raise_if_any(_with_agent_id_in_words(problems, data))
    return Manifest(data)


def _with_agent_id_in_words(problems: list[str], data: Mapping[str, Any]) -> list[str]:
    """Say a bad agent id once, in words, instead of echoing the schema's regular expression."""
    agent = data.get("agent")
    if isinstance(agent, dict) and isinstance(agent.get("id"), str):
        try:
            check_agent_id(agent["id"])
        except InputError as exc:
            problems = [p for p in problems if not p.startswith("/agent/id:")]
            problems.insert(0, f"/agent/id: {exc.message}")
    return problems


def _raise_if_any(problems: list[str]) -> None:
    if problems:
        problems = sorted(set(problems), key=problems.index)[:MAX_PROBLEMS]
        more = "" if len(problems) == 1 else f" (and {len(problems) - 1} more)"
        raise SchemaError(f"{problems[0]}{more}", problems=problems)


def load_manifest(raw: bytes | str, *, what: str = "manifest") -> Manifest:
    """Parse and validate manifest bytes; every failure names ``what``."""
    data = yamlio.load(raw, what=what)
    try:
        return validate(data)
    except SchemaError as exc:
        problems = [f"{what}: {p}" for p in exc.problems]
        more = "" if len(problems) == 1 else f" (and {len(problems) - 1} more)"
        raise SchemaError(problems[0] + more, problems=problems) from None


_TOP_REQUIRED: Final = ("spec_version", "agent", "last_updated")
_ROW_REQUIRED: Final = {
    "known_entities": ("name",),
    "recent_sessions": ("date",),
    "known_workstreams": ("name",),
    "notes": ("date", "text"),
}
_MISSING: Final = object()


def _changed(
    value: Mapping[str, Any], before: Iterable[Mapping[str, Any]], required: Iterable[str]
) -> dict[str, Any]:
    """``value`` without the fields it kept unchanged from one of ``before`` (required fields
    stay, so their absence is still seen)."""
    keep = set(required)
    olds = list(before)
    return {
        k: v
        for k, v in value.items()
        if k in keep or all(old.get(k, _MISSING) != v for old in olds)
    }


def _by_key(manifests: Iterable[Mapping[str, Any]]) -> dict[tuple[str, ...], list[Any]]:
    found: dict[tuple[str, ...], list[Any]] = {}
    for manifest in manifests:
        for section in ROW_SECTIONS:
            for row in _rows(manifest, section):
                if isinstance(row, Mapping):
                    found.setdefault((section, *row_key(section, row)), []).append(row)
    return found


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


# -- reading: what the Bourdon L5 schema accepts, plus our own fields ----------------------

# List fields whose items the Bourdon L5 schema (spec 0.1) leaves unbounded while our writes
# bound them, and lists it does not cap: a manifest another writer made may hold either.
_FREE_ITEMS: Final = {
    "visibility_policy": ("private_tags", "team_tags"),
    "entity": ("aliases", "tags"),
    "session": ("project_focus", "files_touched", "tags"),
    "workstream": ("related_entities", "tags"),
    "note": ("related_entities", "tags"),
}
_UNCAPPED: Final = {
    "visibility_policy": ("private_tags", "team_tags"),
    "entity": ("tags",),
    "session": ("project_focus", "tags"),
    "workstream": ("tags",),
    "note": ("tags",),
}
# A broken field here leaves the manifest served (and the problem reported): it is only shown.
_SHOWN_ONLY: Final = frozenset({"last_updated"})
_ROW_DEFS: Final = tuple(_SECTION_DEFS.values())


@cache
def read_schema() -> dict[str, Any]:
    """The rules manifests are *read* with: ours, opened to what the Bourdon schema accepts.

    Unknown fields are allowed everywhere, the reference implementation's own fields are
    described (``origin``, ``supersedes``, ``superseded_by``, ``skills``,
    ``agent.spec_version_compat``), ``source`` may be any value (a string names the producer),
    and the bounds of ``_FREE_ITEMS`` / ``_UNCAPPED`` are lifted. Fields bourdon interprets
    keep their type, so every served value has the shape the index expects.
    """
    read = copy.deepcopy(schema())
    _open(read)
    props, defs = read["properties"], read["$defs"]
    props["agent"]["properties"]["spec_version_compat"] = {"type": "string"}
    props["skills"] = {"type": "array"}  # kept as written; bourdon does not serve skills
    props["capabilities"]["items"].pop("minLength", None)
    defs["source"] = {}
    for name in _ROW_DEFS:
        defs[name]["properties"]["origin"] = {"enum": ["committed"]}
    names = {"type": "string", "minLength": 1, "maxLength": 128}
    defs["entity"]["properties"]["supersedes"] = {"type": "array", "items": names, "maxItems": 16}
    defs["entity"]["properties"]["superseded_by"] = names
    defs["session"]["properties"]["session_id"].pop("maxLength", None)
    defs["session"]["properties"]["key_actions"]["items"].pop("minLength", None)
    defs["note"]["properties"]["text"].pop("minLength", None)
    owners = {"visibility_policy": props["visibility_policy"], **defs}
    for owner, keys in _FREE_ITEMS.items():
        for key in keys:
            owners[owner]["properties"][key]["items"] = {"type": "string"}
    for owner, keys in _UNCAPPED.items():
        for key in keys:
            owners[owner]["properties"][key].pop("maxItems", None)
    return read


def _open(node: object) -> None:
    if isinstance(node, dict):
        if node.get("additionalProperties") is False:
            del node["additionalProperties"]
            node.pop("patternProperties", None)
        for value in node.values():
            _open(value)
    elif isinstance(node, list):
        for value in node:
            _open(value)


@cache
def _read_top_validator() -> Draft202012Validator:
    return Draft202012Validator(read_schema(), format_checker=_formats)


@cache
def _read_row_validator(section: str) -> Draft202012Validator:
    full = read_schema()
    sub = {"$defs": full["$defs"], **full["$defs"][_SECTION_DEFS[section]]}
    return Draft202012Validator(sub, format_checker=_formats)


@dataclass(frozen=True)
class ReadProblem:
    """A row (or a shown-only field) left out of the served view, and why.

    ``name`` is the row's name only when the row is not private; ``level`` is the row's
    visibility as far as it can be told (private when it cannot), so a report shows the
    problem only to callers who may see such a row. The reason never quotes a value.
    """

    section: str | None  # None: a field of the manifest itself
    row: int | None
    field: str | None  # None: the row as a whole
    reason: str
    name: str | None = None
    level: int = int(Visibility.PRIVATE)

    def where(self) -> str:
        parts = []
        if self.section is not None:
            named = f" (name {self.name!r})" if self.name else ""
            parts.append(f"{self.section}[{self.row}]{named}")
        if self.field is not None:
            parts.append(f"field {self.field!r}")
        return ": ".join(parts)

    def message(self, what: str) -> str:
        """``agents/x.l5.yaml: known_entities[3] (name 'x'): field 'last_touched': <why>``."""
        return f"{what}: {self.where()}: {self.reason}"

    def to_json(self) -> list[Any]:
        return [self.section, self.row, self.field, self.reason, self.name, self.level]

    @classmethod
    def from_json(cls, value: list[Any]) -> ReadProblem:
        section, row, field, reason, name, level = value
        return cls(section, row, field, reason, name, int(level))


class Reading(NamedTuple):
    """A manifest as read: all of it (written back as it is), and what is not served."""

    data: dict[str, Any]
    problems: tuple[ReadProblem, ...]


def read_manifest(raw: bytes | str, *, what: str = "manifest") -> Reading:
    """Parse manifest bytes as bourdon reads them (leniently; see the module docstring).

    Raises ``ManifestError``/``SchemaError`` (naming ``what``) only when the top level is
    broken; a row that does not validate is returned among ``problems`` instead.
    """
    data = yamlio.load(raw, what=what)
    try:
        return read_data(data)
    except SchemaError as exc:
        problems = [f"{what}: {p}" for p in exc.problems]
        more = "" if len(problems) == 1 else f" (and {len(problems) - 1} more)"
        raise SchemaError(problems[0] + more, problems=problems) from None


def read_data(data: object) -> Reading:
    """``read_manifest`` for a parsed value."""
    if not isinstance(data, dict):
        raise SchemaError(f"a manifest must be a mapping, got {_kind(data)}")
    # An empty value (``notes:`` with nothing after it) reads as an absent field.
    skeleton = {
        k: v
        for k, v in data.items()
        if (k not in ROW_SECTIONS or not isinstance(v, list))
        and (v is not None or k in _TOP_REQUIRED)
    }
    fatal: list[str] = []
    shown: list[ReadProblem] = []
    for error in sorted(_read_top_validator().iter_errors(skeleton), key=lambda e: list(e.path)):
        top = str(error.path[0]) if error.path else None
        if top in _SHOWN_ONLY and len(error.path) == 1 and isinstance(error.instance, str):
            shown.append(ReadProblem(None, None, top, _reason(error), level=Visibility.TEAM))
        else:
            fatal.append(f"{''.join(f'/{p}' for p in error.path) or '/'}: {_say(error)}")
    fatal += _text_problems(skeleton, "")
    _raise_if_any(_with_agent_id_in_words(fatal, data))
    policy = Manifest(data).policy
    problems = list(shown)
    for section in ROW_SECTIONS:
        rows = data.get(section)
        if isinstance(rows, list):
            problems += _row_problems(section, rows, policy)
    return Reading(data, tuple(problems))


def _row_problems(
    section: str, rows: list[Any], policy: Mapping[str, Any]
) -> Iterable[ReadProblem]:
    validator = _read_row_validator(section)
    limit = row_limits()[section]
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            yield ReadProblem(section, i, None, f"is {_a(row)}, not a mapping of fields")
            continue
        field: str | None = None
        if None in row.values():
            row = {k: v for k, v in row.items() if v is not None}  # empty reads as absent
        if i >= limit:
            # The Bourdon schema caps the section: the rows past the cap are not served.
            reason = f"is past the limit of {limit:,} rows of {section}"
        else:
            error = next(iter(sorted(validator.iter_errors(row), key=lambda e: list(e.path))), None)
            if error is not None:
                field, reason = _field_of(error), _reason(error)
            else:
                bad = _text_problems(row, "")
                if not bad:
                    continue  # the common case: nothing more to compute
                field = bad[0][1:].split("/")[0].split(":")[0] or None
                reason = bad[0].split(": ", 1)[1]  # names the character or the key's length
        level = int(row_visibility(row, policy))
        yield ReadProblem(section, i, field, reason, _shown_name(section, row, level), level)


def _field_of(error: Any) -> str | None:
    if error.path:
        return str(error.path[0])
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return str(missing[0]) if missing else None
    return None


def _shown_name(section: str, row: Mapping[str, Any], level: int) -> str | None:
    """A row's name for a problem message, only for a row that is not private."""
    name = row.get("name")
    if section not in (ENTITIES, WORKSTREAMS) or level >= Visibility.PRIVATE:
        return None
    if not isinstance(name, str) or not 0 < len(name) <= 128 or _BAD_TEXT.search(name):
        return None
    return name


_TYPES: Final = {
    "string": "a string",
    "array": "a list",
    "object": "a mapping",
    "null": "empty",
}


def _reason(error: Any) -> str:
    """What is wrong, without quoting the value (it may be private)."""
    rule, limit, value = error.validator, error.validator_value, error.instance
    if error.validator == "required":
        return "is missing"
    if rule == "type":
        wanted = limit if isinstance(limit, str) else " or ".join(limit)
        return f"must be {_TYPES.get(wanted, wanted)}, not {_a(value)}"
    if rule == "enum":
        return "must be one of " + ", ".join(str(v) for v in limit)
    if rule == "format" or (rule == "anyOf" and isinstance(value, str)):
        return (
            "is not a valid date (YYYY-MM-DD)"
            if limit != "date-time"
            else ("is not an RFC 3339 date-time such as '2026-11-30T09:15:00Z'")
        )
    if rule == "maxLength":
        return f"is {len(value):,} characters long; the limit is {limit:,}"
    if rule == "minLength":
        return "is empty"
    if rule == "maxItems":
        return f"has {len(value):,} items; the limit is {limit:,}"
    if rule == "pattern":
        return f"does not match {limit}"
    return f"breaks the schema's '{rule}' rule"


def _a(value: object) -> str:
    if value is None:
        return "empty"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def new_problems(reading: Reading, before: Mapping[str, Any] | None) -> list[ReadProblem]:
    """The rows of ``reading`` that do not validate and are not, as they are, in ``before``.

    A hand edit that *brings* a bad row is refused before it is committed (the user is there to
    fix it); a bad row already committed (another Bourdon writer's) never blocks a write.
    """
    found = []
    for problem in reading.problems:
        if problem.section is None or problem.row is None:
            continue
        row = reading.data[problem.section][problem.row]
        if row not in _rows(before, problem.section):
            found.append(problem)
    return found
