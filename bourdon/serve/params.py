"""The parameter types the tools share, each with the description a model reads in tools/list.

A closed set is a ``Literal`` (an ``enum`` in the input schema) marked ``SkipValidation``: the
schema tells the model what to pass, and a value outside the set still reaches the tool, whose
own check refuses it as bad input (a 400 naming the allowed values, as before), rather than
the SDK's bare "validation error". The row lists of ``commit_to_federation`` are described by
``rows`` (typed objects read from the L5 schema).

Descriptions are one-line prose of at least three words (``tests/test_tool_descriptions.py``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, SkipValidation, WithJsonSchema

from bourdon import model
from bourdon.model import ENTITIES, NOTES, SESSIONS, WORKSTREAMS
from bourdon.serve.writes import rows

Values = TypeVar("Values")
# A closed set: its enum in the schema, its check left to the tool (a 400 naming the values).
Choice = Annotated[Values, SkipValidation]

# -- what to read -------------------------------------------------------------------------

AccessLevel = Annotated[
    Choice[Literal["public", "team", "private"]],
    Field(
        description=(
            "The widest visibility of rows to read: public, team or private. Most rows are "
            "team; private also needs include_private=true and is shown only to the local "
            "operator."
        )
    ),
]
BriefAccessLevel = Annotated[
    Choice[Literal["public", "team"]],
    Field(description="The widest visibility of rows the brief may use: public or team."),
]
IncludePrivate = Annotated[
    bool,
    Field(
        description=(
            "With access_level='private': show private rows too (the local operator only; "
            "over the network the answer stays at team)."
        )
    ),
]
FederationHop = Annotated[
    int,
    Field(
        description=(
            "How many servers this call has already crossed: peers pass 1 so that nobody "
            "asks further; end clients leave it at 0."
        )
    ),
]
AgentFilter = Annotated[
    str | None,
    Field(
        description="Only this agent's rows, by agent id (codex, claude-code, ...); omit for all."
    ),
]
Since = Annotated[
    str | None,
    Field(
        description=(
            "Only rows dated on or after this ISO date or date-time (YYYY-MM-DD); without it "
            "and without cursor, the last 14 days."
        )
    ),
]
Limit = Annotated[
    int | None,
    Field(description="Rows per page: default 20, at most 100."),
]
Cursor = Annotated[
    str | None,
    Field(
        description="The previous page's next_cursor, for the next page (until has_more is false)."
    ),
]
Prompt = Annotated[str, Field(description="The user's prompt for this turn, as typed.")]
Cwd = Annotated[
    str | None,
    Field(description="The agent's working folder; its project ranks first."),
]

# -- whose memory -------------------------------------------------------------------------

AgentId = Annotated[
    str,
    Field(
        description=(
            "The agent's id: 1-64 lower-case letters, digits, - and _ (codex, claude-desktop)."
        ),
        json_schema_extra={"pattern": "^[a-z0-9][a-z0-9_-]{0,63}$"},
    ),
]
AgentType = Annotated[
    Choice[model.AgentType | None],
    Field(description="What kind of agent this is; needed only when the agent is new."),
]
SessionId = Annotated[
    str | None,
    Field(description="The caller's own session id, recorded with the commit as provenance."),
]
TranscriptRef = Annotated[
    str | None,
    Field(description="Where the caller's transcript lives, recorded as provenance (unverified)."),
]
ExpectedDigest = Annotated[
    str | None,
    Field(
        description=(
            "The manifest digest the caller last read (sha256:...); a write made since is "
            "refused with 409 and the current digest instead of being overwritten."
        )
    ),
]
Mode = Annotated[
    Choice[Literal["merge", "replace"]],
    Field(
        description=(
            "merge unions the rows with the agent's memory; replace writes only what is given "
            "and drops everything else (destructive)."
        )
    ),
]
OnClamp = Annotated[
    Choice[Literal["spill", "evict", "reject"]],
    Field(
        description=(
            "When a merge grows a list field past its limit (a session's key_actions, an "
            "entity's tags): spill keeps the dropped items in a note, evict drops the oldest, "
            "reject refuses the write. Dropped items are listed in list_items_evicted."
        )
    ),
]

# -- which rows ---------------------------------------------------------------------------

WorkstreamStatus = Annotated[
    Choice[Literal["active", "paused", "done", "archived"] | None],
    Field(description="Only workstreams in this status; omit for every status."),
]
Kind = Literal["entity", "session", "workstream", "note"]
RowKind = Annotated[
    Choice[Kind],
    Field(description="The kind of row: entity, session, workstream or note."),
]
RowKindFilter = Annotated[
    Choice[Kind | None],
    Field(description="Only rows of this kind: entity, session, workstream or note."),
]
Relationship = Literal["RELATED_TO", "FOCUSES_ON", "TOUCHES", "MENTIONS"]
BriefFormat = Annotated[
    Choice[Literal["markdown", "json", "xml", "compact", "brief", "yaml"]],
    Field(description="How the brief is written: markdown, json, xml, compact, brief or yaml."),
]

# -- rows to commit (typed objects read from the L5 schema: ``writes.rows``) ---------------

RowList = list[dict[str, Any]] | None


def typed_rows(section: str, what: str, needed: str) -> WithJsonSchema:
    """The schema of a list of ``section`` rows, described as ``what`` and what each needs."""
    return WithJsonSchema(
        {
            **rows.rows_schema(section),
            "description": f"{what} Each needs {needed}; other fields are optional, and fields "
            "of your own (x-...) are kept.",
        }
    )


Entities = Annotated[
    RowList,
    typed_rows(ENTITIES, "Durable facts: projects, people, libraries, decisions.", "a name"),
]
Sessions = Annotated[
    RowList,
    typed_rows(SESSIONS, "What happened in working sessions.", "a date (omitted: today)"),
]
Workstreams = Annotated[
    RowList,
    typed_rows(WORKSTREAMS, "Initiatives spanning several sessions, with their status.", "a name"),
]
Notes = Annotated[
    RowList, typed_rows(NOTES, "Short dated facts.", "a text (its date, omitted, is today)")
]
MaxItems = Annotated[int, Field(description="Most items in the brief, clamped to 1..20.")]
MaxChars = Annotated[int, Field(description="Most characters of the brief, clamped to 320..8000.")]
CodexMaxChars = Annotated[
    int, Field(description="Most characters of the brief, clamped to 200..8000.")
]
