"""The rows a caller passes to ``commit_to_federation``: how tools/list describes them, and how
they are checked before they are merged.

The description is read from the L5 schema (``schemas/l5.schema.json``, ``$defs``): each
field with its type, limits (lengths, item counts, date format, allowed values) and a sentence
saying what it is for. Rows are read leniently: fields the schema does not name are accepted
by the tool's input schema (``additionalProperties``) and passed to the writer, which keeps the
caller's own ``x-`` fields and names anything else it refuses.

Each row is checked on its own before the merge, so a problem is reported at the caller's
index (``notes[2].text``), never at an index into the merged manifest. A note or session
without a date is given today's date (the server's local date), and the answer says so in
``meta.warnings``.
"""

from __future__ import annotations

import copy
import datetime
import re
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any, Final

from bourdon.errors import InputError
from bourdon.formats import checks
from bourdon.formats.schema import schema
from bourdon.model import ENTITIES, LIST_FIELDS, NOTES, SESSIONS, WORKSTREAMS

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

# The tool's parameter for each section, and the L5 definition its rows follow.
PARAMETERS: Final = {
    ENTITIES: "entities",
    SESSIONS: "sessions",
    WORKSTREAMS: "workstreams",
    NOTES: "notes",
}
DEFINITIONS: Final = {
    ENTITIES: "entity",
    SESSIONS: "session",
    WORKSTREAMS: "workstream",
    NOTES: "note",
}
DATED: Final = (SESSIONS, NOTES)
# jsonschema's words for a field neither named by the schema nor an x- field.
UNKNOWN: Final = re.compile(r"^'([^']*)' does not match any of the regexes")
# Set by the writer, never by the caller: left out of the description (still accepted).
WRITER_FIELDS: Final = ("source", "superseded_by")

VISIBILITY = (
    "Who may read the row: public, team or private (personal, financial or credential-like); "
    "omitted: the agent's default policy."
)
DATE_DEFAULT = "YYYY-MM-DD; omitted: today's date, said in meta.warnings."
FIELDS: Final[dict[str, dict[str, str]]] = {
    "entity": {
        "name": "The entity's name: a project, person, library, file or decision.",
        "type": "What kind of entity it is, in a word (project, person, library, decision).",
        "aliases": "Other names the entity goes by, each found by find_entity.",
        "summary": "What the other agents should know about it, in a few sentences.",
        "last_touched": "The date it was last worked on (YYYY-MM-DD).",
        "valid_from": "The date from which this is true (YYYY-MM-DD).",
        "valid_to": "The date after which this no longer holds (YYYY-MM-DD).",
        "tags": "Short labels to find it by.",
        "visibility": VISIBILITY,
        "supersedes": "Names of entities this one replaces (a rename, a successor).",
    },
    "session": {
        "date": DATE_DEFAULT + ' Or "" when the date is unknown.',
        "session_id": "The agent's own id of the session.",
        "cwd": "The working folder of the session.",
        "project_focus": "The projects the session worked on, by name.",
        "key_actions": "What was done, one short line each.",
        "files_touched": "Paths of the files the session changed.",
        "tags": "Short labels to find it by.",
        "visibility": VISIBILITY,
    },
    "workstream": {
        "name": "The initiative's name.",
        "status": "Where it stands: active, paused, done or archived; a new one is active.",
        "summary": "What the initiative is and where it stands, in a few sentences.",
        "started": "The date it started (YYYY-MM-DD).",
        "last_touched": "The date it was last worked on (YYYY-MM-DD).",
        "related_entities": "Names of the entities it concerns.",
        "tags": "Short labels to find it by.",
        "visibility": VISIBILITY,
        "valid_from": "The date from which this is true (YYYY-MM-DD).",
        "valid_to": "The date after which this no longer holds (YYYY-MM-DD).",
    },
    "note": {
        "date": DATE_DEFAULT,
        "text": "The fact to remember, in a sentence or two.",
        "related_entities": "Names of the entities it is about.",
        "tags": "Short labels to find it by.",
        "visibility": VISIBILITY,
        "valid_from": "The date from which this is true (YYYY-MM-DD).",
        "valid_to": "The date after which this no longer holds (YYYY-MM-DD).",
    },
}
ROW_DESCRIPTIONS: Final = {
    "entity": "Something to remember: a project, person, library, file or decision.",
    "session": "One working session: when, where, on what, and what was done.",
    "workstream": "An initiative that spans several sessions.",
    "note": "A short dated fact.",
}


def row_schema(definition: str) -> dict[str, Any]:
    """The JSON schema of one row as the tool's caller sees it: the L5 definition with its
    references written out, every field described, a date the server may fill in left
    optional, and other fields allowed."""
    defs = schema()["$defs"]
    source = defs[definition]
    properties: dict[str, Any] = {}
    for name, prop in source["properties"].items():
        if name in WRITER_FIELDS:
            continue
        written = copy.deepcopy(defs[prop["$ref"].rsplit("/", 1)[-1]] if "$ref" in prop else prop)
        if definition == "session" and name == "date":
            # The schema's "a date or exactly empty", as one string type every client reads.
            written = {"type": "string", "pattern": r"^(\d{4}-\d{2}-\d{2})?$"}
        if "enum" in written:
            written = {"type": "string", **written}
        written["description"] = FIELDS[definition][name]
        properties[name] = written
    required = [r for r in source.get("required", []) if r != "date"]
    return {
        "type": "object",
        "description": ROW_DESCRIPTIONS[definition],
        "properties": properties,
        "required": required,
        "additionalProperties": True,
    }


def rows_schema(section: str) -> dict[str, Any]:
    """A parameter taking a list of rows of ``section``, or nothing."""
    limit = int(schema()["properties"][section]["maxItems"])
    return {
        "anyOf": [
            {"type": "array", "items": row_schema(DEFINITIONS[section]), "maxItems": limit},
            {"type": "null"},
        ]
    }


@cache
def _validator(section: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    full = schema()
    return Draft202012Validator(
        {"$defs": full["$defs"], **full["$defs"][DEFINITIONS[section]]},
        format_checker=checks.formats(),
    )


def checked_rows(
    section: str,
    rows: object,
    today: datetime.date,
    warnings: list[str],
    problems: list[str],
) -> list[dict[str, Any]]:
    """The caller's rows of ``section``, each checked against the L5 schema on its own.

    A note or session without a date gets ``today`` (one warning per section says which
    rows). What is wrong is added to ``problems``, each naming the caller's own index
    (``raise_if_any`` raises them together, once every section is checked).
    """
    param = PARAMETERS[section]
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        raise InputError(f"{param} must be a list of objects")
    out: list[dict[str, Any]] = []
    dated: list[int] = []
    for i, given in enumerate(rows):
        row = dict(given)
        if section in DATED and (
            row.get("date") is None or (section == NOTES and row["date"] == "")
        ):
            row["date"] = today.isoformat()
            dated.append(i)
        probe = as_merged(row)
        problems += [
            at_index(param, i, p)
            for p in checks.schema_problems(_validator(section), probe, "")
            + checks.text_problems(probe, "")
        ]
        out.append(row)
    if dated:
        which = ", ".join(f"{param}[{i}]" for i in dated)
        warnings.append(f"{which}: no date given; dated today ({today.isoformat()})")
    return out


def raise_if_any(problems: list[str]) -> None:
    """One ``SchemaError`` (400) naming every row at fault, if any is."""
    checks.raise_if_any(problems)


def as_merged(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row as the merge reads it: a ``null`` leaves a field alone, and a bare string in a
    list field is one item (``merge.twoway``)."""
    return {
        k: [v] if k in LIST_FIELDS and isinstance(v, str) else v
        for k, v in row.items()
        if v is not None
    }


def at_index(param: str, index: int, problem: str) -> str:
    """``/text: what`` of row ``index`` as ``notes[2].text: what``."""
    path, _, what = problem.partition(": ")
    unknown = UNKNOWN.match(what)
    if unknown:
        field = unknown.group(1)
        what = f"unknown field {field!r}; a field of your own is kept when named x-{field}"
    where = f"{param}[{index}]"
    for part in (p for p in path.split("/") if p):
        where += f"[{part}]" if part.isdigit() else f".{part}"
    return f"{where}: {what}"
