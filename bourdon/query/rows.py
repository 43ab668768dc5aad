"""The rows of the index: each manifest split into typed rows, their visibility decided once.

``AgentView.build`` turns one served manifest into ``EntityRow``, ``SessionRow``,
``WorkstreamRow`` and ``NoteRow`` tuples, leaving out the rows ``schema.read_manifest`` reported
(``skipped``). Queries read these tuples, never the YAML.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bourdon.digest import digest
from bourdon.formats.reading import ReadProblem
from bourdon.model import (
    ENTITIES,
    NOTES,
    ROW_SECTIONS,
    SESSIONS,
    WORKSTREAMS,
    Manifest,
    row_visibility,
)


def _strings(value: object) -> tuple[str, ...]:
    # Manifests are validated, so list fields hold strings; a bare string is one item.
    if isinstance(value, list):
        return tuple(value)
    return (value,) if isinstance(value, str) else ()


_VALIDITY = frozenset({"valid_from", "valid_to", "supersedes"})
_UNBOUNDED: tuple[None, None, tuple[str, ...]] = (None, None, ())  # most rows have no bounds


def _validity(row: Mapping[str, Any]) -> tuple[str | None, str | None, tuple[str, ...]]:
    return _date(row.get("valid_from")), _date(row.get("valid_to")), _strings(row.get("supersedes"))


def _date(value: object) -> str | None:
    # A validated date is a YYYY-MM-DD string; anything else (an empty field) sets no bound.
    return value if isinstance(value, str) and value else None


class EntityRow(NamedTuple):
    agent: str
    name: str
    type: str | None
    aliases: tuple[str, ...]
    summary: str | None
    tags: tuple[str, ...]
    visibility: int
    last_touched: str | None
    # Validity and succession (bourdon.query.validity); last, with defaults, so rows made
    # by position elsewhere keep working.
    valid_from: str | None = None
    valid_to: str | None = None
    supersedes: tuple[str, ...] = ()


class SessionRow(NamedTuple):
    agent: str
    date: str
    cwd: str | None
    session_id: str | None
    project_focus: tuple[str, ...]
    key_actions: tuple[str, ...]
    files_touched: tuple[str, ...]
    visibility: int
    position: int  # how many earlier sessions of this agent share date, cwd and id

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        """Total order of sessions, newest first when sorted in reverse."""
        return (self.date, self.agent, self.cwd or "", self.session_id or "", self.position)


class WorkstreamRow(NamedTuple):
    agent: str
    name: str
    status: str
    summary: str | None
    started: str | None
    last_touched: str | None
    related_entities: tuple[str, ...]
    tags: tuple[str, ...]
    visibility: int
    valid_from: str | None = None
    valid_to: str | None = None


class NoteRow(NamedTuple):
    agent: str
    date: str
    text: str
    related_entities: tuple[str, ...]
    tags: tuple[str, ...]
    visibility: int
    position: int
    valid_from: str | None = None
    valid_to: str | None = None

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.date, self.agent, self.text[:80], self.position)


@dataclass
class AgentView:
    """One agent's manifest, split into rows with their visibility decided once."""

    agent_id: str
    data: Mapping[str, Any]
    entities: list[EntityRow] = field(default_factory=list)
    sessions: list[SessionRow] = field(default_factory=list)
    workstreams: list[WorkstreamRow] = field(default_factory=list)
    notes: list[NoteRow] = field(default_factory=list)
    skipped: tuple[ReadProblem, ...] = ()  # rows kept in the file but not served
    _digest: str | None = None

    @property
    def agent(self) -> Mapping[str, Any]:
        agent = self.data.get("agent")
        return agent if isinstance(agent, Mapping) else {}

    @property
    def served_data(self) -> Mapping[str, Any]:
        """The manifest without the rows left out (``data`` holds them: digests count them)."""
        if not self.skipped:
            return self.data
        left_out = {(p.section, p.row) for p in self.skipped}
        out = dict(self.data)
        for section in ROW_SECTIONS:
            rows = out.get(section)
            if isinstance(rows, list):
                out[section] = [r for i, r in enumerate(rows) if (section, i) not in left_out]
        return out

    @property
    def digest(self) -> str:
        """The manifest's digest, computed when first asked (start-up does not need it)."""
        if self._digest is None:
            self._digest = digest(self.data)
        return self._digest

    @classmethod
    def build(
        cls, agent_id: str, data: Mapping[str, Any], skipped: tuple[ReadProblem, ...] = ()
    ) -> AgentView:
        policy = Manifest(data).policy
        view = cls(agent_id, data, skipped=skipped)
        left_out: dict[str, set[int]] = {}
        for problem in skipped:
            if problem.section is not None and problem.row is not None:
                left_out.setdefault(problem.section, set()).add(problem.row)

        def _rows(data: Mapping[str, Any], section: str) -> list[dict[str, Any]]:
            return _served(data, section, left_out.get(section))

        plain = not policy.get("private_tags") and not policy.get("team_tags")
        default = int(row_visibility({}, policy))
        levels = {"public": 0, "team": 1, "private": 2}

        def vis(row: Mapping[str, Any]) -> int:
            # The common case (no tag rules) without a call per row; same answer as
            # row_visibility, which decides everything else.
            if plain:
                return levels.get(row.get("visibility"), default)  # type: ignore[arg-type]
            return int(row_visibility(row, policy))

        get = dict.get
        view.entities = [
            EntityRow(
                agent_id,
                row["name"],
                get(row, "type"),
                _strings(get(row, "aliases")),
                get(row, "summary"),
                _strings(get(row, "tags")),
                vis(row),
                get(row, "last_touched"),
                *(_UNBOUNDED if row.keys().isdisjoint(_VALIDITY) else _validity(row)),
            )
            for row in _rows(data, ENTITIES)
        ]
        view.sessions = [
            SessionRow(
                agent_id,
                get(row, "date") or "",
                get(row, "cwd"),
                get(row, "session_id"),
                _strings(get(row, "project_focus")),
                _strings(get(row, "key_actions")),
                _strings(get(row, "files_touched")),
                vis(row),
                repeat,
            )
            for row, repeat in _numbered(
                _rows(data, SESSIONS), lambda r: (r.get("date"), r.get("cwd"), r.get("session_id"))
            )
        ]
        view.workstreams = [
            WorkstreamRow(
                agent_id,
                row["name"],
                get(row, "status") or "active",
                get(row, "summary"),
                get(row, "started"),
                get(row, "last_touched"),
                _strings(get(row, "related_entities")),
                _strings(get(row, "tags")),
                vis(row),
                _date(get(row, "valid_from")),
                _date(get(row, "valid_to")),
            )
            for row in _rows(data, WORKSTREAMS)
        ]
        view.notes = [
            NoteRow(
                agent_id,
                get(row, "date") or "",
                get(row, "text") or "",
                _strings(get(row, "related_entities")),
                _strings(get(row, "tags")),
                vis(row),
                repeat,
                _date(get(row, "valid_from")),
                _date(get(row, "valid_to")),
            )
            for row, repeat in _numbered(
                _rows(data, NOTES), lambda r: (r.get("date"), r.get("text"))
            )
        ]
        return view


def _numbered(
    rows: list[dict[str, Any]], identity: Callable[[dict[str, Any]], object]
) -> Iterator[tuple[dict[str, Any], int]]:
    """Each row with how many earlier rows had the same identity (0 for almost every row).

    Pagination keys end with this number, not the row's position: a position would count
    the rows before it, hidden ones included.
    """
    seen: dict[object, int] = {}
    for row in rows:
        ident = identity(row)
        count = seen.get(ident, 0)
        seen[ident] = count + 1
        yield row, count


def _served(
    data: Mapping[str, Any], section: str, left_out: set[int] | None
) -> list[dict[str, Any]]:
    rows = data.get(section)
    if not isinstance(rows, list):
        return []
    if not left_out:
        return [r for r in rows if isinstance(r, dict)]
    return [r for i, r in enumerate(rows) if i not in left_out and isinstance(r, dict)]
