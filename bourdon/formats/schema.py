"""Strict validation of manifests: what bourdon *writes*.

``schemas/l5.schema.json`` is the language-neutral source of truth for what bourdon writes.
Code adds what a JSON Schema cannot say well: ids matched whole (``check_agent_id``), text free
of control characters, and readable messages (``checks``). Validation of a write is incremental:
rows and fields already on disk that a write keeps unchanged are not checked again, so a small
merge into a 1,000-entity manifest costs what the change costs, and what another Bourdon writer
put there (``origin: committed``, ``skills``, a ``source`` string, a row that does not validate)
is written back as it was instead of blocking the write. What bourdon *reads* is checked more
leniently, by ``reading``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from bourdon.errors import SchemaError
from bourdon.formats import checks, fastcheck, yamlio
from bourdon.formats.resources import schema_path
from bourdon.model import ROW_SECTIONS, Manifest, row_key

if TYPE_CHECKING:  # imported when a manifest is validated, not at start-up
    from jsonschema import Draft202012Validator


@cache
def schema() -> dict[str, Any]:
    """The manifest schema as a dict."""
    with open(schema_path(), encoding="utf-8") as handle:
        loaded: dict[str, Any] = json.load(handle)
    return loaded


@cache
def _top_validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema(), format_checker=checks.formats())


@cache
def _row_validator(section: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    full = schema()
    sub = {"$defs": full["$defs"], **full["$defs"][checks.SECTION_DEFS[section]]}
    return Draft202012Validator(sub, format_checker=checks.formats())


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
        raise SchemaError(f"a manifest must be a mapping, got {checks.kind_of(data)}")
    problems: list[str] = []
    passed = [m for m in (trusted, also) if m]
    skeleton = {k: v for k, v in data.items() if k not in ROW_SECTIONS or not isinstance(v, list)}
    found = _problems(_top_validator(), skeleton, "")
    if found and passed:
        # Fields kept unchanged from a manifest already on disk were accepted when read (an
        # other writer's ``skills``, ``agent.spec_version_compat``): only changes are checked.
        probe = _changed(skeleton, passed, checks.TOP_REQUIRED)
        agents = [m["agent"] for m in passed if isinstance(m.get("agent"), Mapping)]
        if isinstance(probe.get("agent"), Mapping):
            probe["agent"] = _changed(probe["agent"], agents, ("id", "type"))
        found = _problems(_top_validator(), probe, "")
    problems += found
    known = {id(row) for m in passed for s in ROW_SECTIONS for row in checks.rows_of(m, s)}
    counterparts: dict[tuple[str, ...], list[Mapping[str, Any]]] | None = None
    for section in ROW_SECTIONS:
        rows = data.get(section)
        if not isinstance(rows, list):
            continue
        limit = row_limits()[section]
        if len(rows) > limit:
            problems.append(f"/{section}: {len(rows)} rows; the limit is {limit}")
        passes = fastcheck.row_check(section, strict=True)  # a compiled "valid", else ours
        for i, row in enumerate(rows):
            if id(row) in known:
                continue
            if (
                passes is not None
                and isinstance(row, dict)
                and None not in row.values()
                and passes(row)
            ):
                continue  # the common case: a reader's fresh rows, decided in microseconds
            path = f"/{section}/{i}"
            found = _problems(_row_validator(section), row, path)
            if found and passed and isinstance(row, Mapping):
                # A row the write changed: what it kept of its row on disk was accepted when
                # read (``origin``, a ``source`` string, a field that never validated).
                if counterparts is None:
                    counterparts = _by_key(passed)
                before = counterparts.get((section, *row_key(section, row)), [])
                if before:
                    probe = _changed(row, before, _ROW_REQUIRED[section])
                    found = _problems(_row_validator(section), probe, path)
            problems += found
        if len(problems) >= checks.MAX_PROBLEMS:
            break
    checks.raise_if_any(checks.with_agent_id_in_words(problems, data))
    return Manifest(data)


def _problems(validator: Draft202012Validator, value: object, path: str) -> list[str]:
    return checks.schema_problems(validator, value, path) + checks.text_problems(value, path)


def load_manifest(raw: bytes | str, *, what: str = "manifest") -> Manifest:
    """Parse and validate manifest bytes; every failure names ``what``."""
    data = yamlio.load(raw, what=what)
    try:
        return validate(data)
    except SchemaError as exc:
        raise checks.naming(what, exc) from None


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
            for row in checks.rows_of(manifest, section):
                if isinstance(row, Mapping):
                    found.setdefault((section, *row_key(section, row)), []).append(row)
    return found
