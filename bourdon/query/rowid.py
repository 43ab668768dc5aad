"""Stable ids for rows of the index, shared by search, traversal and the turn brief.

An id is ``<kind>:<agent>:<label>:<tag>``, the shape of the reference's search ``doc_id``:
``label`` is the entity or workstream name, or the session's or note's date; ``tag`` tells
rows with the same label apart. It is made from the row's own fields only (never from its
position among other rows, nor from how many rows share its date), so an id says nothing about
rows the caller cannot see, and it stays the same while the row is unchanged. Two rows equal in
every field get the same id: nothing could tell them apart anyway.
"""

from __future__ import annotations

import hashlib
from typing import Final, NamedTuple

from bourdon.errors import InputError
from bourdon.query.rows import EntityRow, NoteRow, SessionRow, WorkstreamRow

KINDS: Final = ("entity", "session", "workstream", "note")

AnyRow = EntityRow | SessionRow | WorkstreamRow | NoteRow


class RowId(NamedTuple):
    kind: str
    agent: str
    label: str
    tag: str

    def __str__(self) -> str:
        return f"{self.kind}:{self.agent}:{self.label}:{self.tag}"


def _tag(*parts: object) -> str:
    text = "\x1f".join("" if p is None else str(p) for p in parts)
    return hashlib.blake2b(text.encode(), digest_size=4).hexdigest()


def kind_of(row: AnyRow) -> str:
    if isinstance(row, EntityRow):
        return "entity"
    if isinstance(row, SessionRow):
        return "session"
    if isinstance(row, WorkstreamRow):
        return "workstream"
    return "note"


def row_id(row: AnyRow) -> RowId:
    if isinstance(row, EntityRow):
        return RowId("entity", row.agent, row.name, _tag(row.name.casefold()))
    if isinstance(row, WorkstreamRow):
        return RowId("workstream", row.agent, row.name, _tag(row.name.casefold()))
    if isinstance(row, SessionRow):
        content = (row.cwd, row.session_id, row.project_focus, row.key_actions, row.files_touched)
        return RowId("session", row.agent, row.date, _tag(*content))
    return RowId("note", row.agent, row.date, _tag(row.text, row.related_entities, row.tags))


def parse_row_id(text: object) -> RowId:
    """The parts of an id; a malformed one is a 400 naming what was wrong."""
    if not isinstance(text, str) or not text.strip():
        raise InputError("a row id is required, e.g. entity:claude-code:Ledgerline:1a2b3c4d")
    kind, sep, rest = text.partition(":")
    agent, sep2, rest = rest.partition(":")
    label, sep3, tag = rest.rpartition(":")
    if not (sep and sep2 and sep3) or kind not in KINDS or not agent or not tag:
        raise InputError(
            f"not a row id: {text!r} (expected <kind>:<agent>:<label>:<tag>, kind one of "
            + ", ".join(KINDS)
            + ")"
        )
    return RowId(kind, agent, label, tag)
