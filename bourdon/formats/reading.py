"""Lenient reading of manifests: what bourdon *serves* from what any Bourdon writer wrote.

``read_manifest`` accepts every manifest the Bourdon L5 schema accepts, plus our own fields:
unknown fields are allowed, bounds the Bourdon schema does not set are relaxed. A row that
still does not validate is left out of the served view and reported as a ``ReadProblem``
naming the file, the row and the field; the rest of the manifest is served. Only a broken top
level (not a mapping, no valid agent id or type, a bad visibility policy, a row section that is
not a list) makes the whole manifest unreadable. What bourdon writes is checked strictly, by
``schema``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from bourdon.errors import SchemaError
from bourdon.formats import checks, fastcheck, schema, yamlio
from bourdon.model import ENTITIES, ROW_SECTIONS, WORKSTREAMS, Manifest, Visibility, row_visibility

if TYPE_CHECKING:  # imported when a manifest is validated, not at start-up
    from jsonschema import Draft202012Validator

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
_ROW_DEFS: Final = tuple(checks.SECTION_DEFS.values())


@cache
def read_schema() -> dict[str, Any]:
    """The rules manifests are *read* with: ours, opened to what the Bourdon schema accepts.

    Unknown fields are allowed everywhere, the reference implementation's own fields are
    described (``origin``, ``supersedes``, ``superseded_by``, ``skills``,
    ``agent.spec_version_compat``), ``source`` may be any value (a string names the producer),
    and the bounds of ``_FREE_ITEMS`` / ``_UNCAPPED`` are lifted. Fields bourdon interprets
    keep their type, so every served value has the shape the index expects.
    """
    read = copy.deepcopy(schema.schema())
    _open(read)
    props, defs = read["properties"], read["$defs"]
    props["agent"]["properties"]["spec_version_compat"] = {"type": "string"}
    props["skills"] = {"type": "array"}  # kept as written; bourdon does not serve skills
    props["capabilities"]["items"].pop("minLength", None)
    defs["source"] = {}
    for name in _ROW_DEFS:
        defs[name]["properties"]["origin"] = {"enum": ["committed"]}
    names = {"type": "string", "minLength": 1, "maxLength": 128}
    # One name or a list: the reference writes a list, a hand-written file may say one name.
    defs["entity"]["properties"]["supersedes"] = {
        "anyOf": [names, {"type": "array", "items": names, "maxItems": 16}]
    }
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
    from jsonschema import Draft202012Validator

    return Draft202012Validator(read_schema(), format_checker=checks.formats())


@cache
def _read_row_validator(section: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    full = read_schema()
    sub = {"$defs": full["$defs"], **full["$defs"][checks.SECTION_DEFS[section]]}
    return Draft202012Validator(sub, format_checker=checks.formats())


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
        raise checks.naming(what, exc) from None


def read_data(data: object) -> Reading:
    """``read_manifest`` for a parsed value."""
    if not isinstance(data, dict):
        raise SchemaError(f"a manifest must be a mapping, got {checks.kind_of(data)}")
    # An empty value (``notes:`` with nothing after it) reads as an absent field.
    skeleton = {
        k: v
        for k, v in data.items()
        if (k not in ROW_SECTIONS or not isinstance(v, list))
        and (v is not None or k in checks.TOP_REQUIRED)
    }
    fatal: list[str] = []
    shown: list[ReadProblem] = []
    for error in sorted(_read_top_validator().iter_errors(skeleton), key=lambda e: list(e.path)):
        top = str(error.path[0]) if error.path else None
        if top in _SHOWN_ONLY and len(error.path) == 1 and isinstance(error.instance, str):
            shown.append(ReadProblem(None, None, top, _reason(error), level=Visibility.TEAM))
        else:
            fatal.append(f"{''.join(f'/{p}' for p in error.path) or '/'}: {checks.say(error)}")
    fatal += checks.text_problems(skeleton, "")
    checks.raise_if_any(checks.with_agent_id_in_words(fatal, data))
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
    passes = fastcheck.row_check(section)  # a quick "valid"; any other verdict: jsonschema's
    limit = schema.row_limits()[section]
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
        elif passes is not None and passes(row):
            continue  # the common case, decided in microseconds
        else:
            error = next(iter(sorted(validator.iter_errors(row), key=lambda e: list(e.path))), None)
            if error is not None:
                field, reason = _field_of(error), _reason(error)
            else:
                bad = checks.text_problems(row, "")
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
    if not isinstance(name, str) or not 0 < len(name) <= 128 or checks.BAD_TEXT.search(name):
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
        if row not in checks.rows_of(before, problem.section):
            found.append(problem)
    return found
