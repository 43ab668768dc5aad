"""One agent's rows for its page: those the caller may see, filtered, sorted and paged, and
the weekly counts its charts draw.

Everything here works on the index's rows (``bourdon.query.rows``) after ``Access.allows``
has kept only what the caller may see, so a count, a page or a chart point can never include
a hidden row.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from bourdon.access.visibility import Access
from bourdon.model import fold
from bourdon.query.rows import AgentView
from bourdon.serve.web import memo

PAGE_SIZE: Final = 50
WEEKS: Final = 52  # the charts show at most the last year of weeks with a dated row
KINDS: Final = ("entities", "sessions", "workstreams", "notes")

Row = Any  # an EntityRow, SessionRow, WorkstreamRow or NoteRow


def _last(value: str | None) -> tuple[bool, str]:
    """Sort key that puts rows without the date last when sorted newest first."""
    return (value is not None, value or "")


# Per kind: the sorts offered (the first is the default), as (value, label, key, newest first).
SORTS: Final[dict[str, tuple[tuple[str, str, Callable[[Row], Any], bool], ...]]] = {
    "entities": (
        ("name", "name", lambda r: (fold(r.name), r.name), False),
        ("-last_touched", "last touched, newest first", lambda r: _last(r.last_touched), True),
        ("type", "type", lambda r: (r.type or "", fold(r.name)), False),
    ),
    "sessions": (
        ("-date", "date, newest first", lambda r: r.key, True),
        ("date", "date, oldest first", lambda r: r.key, False),
    ),
    "workstreams": (
        ("name", "name", lambda r: (fold(r.name), r.name), False),
        ("status", "status", lambda r: (r.status, fold(r.name)), False),
        ("-last_touched", "last touched, newest first", lambda r: _last(r.last_touched), True),
    ),
    "notes": (
        ("-date", "date, newest first", lambda r: r.key, True),
        ("date", "date, oldest first", lambda r: r.key, False),
        ("text", "text", lambda r: (fold(r.text), r.key), False),
    ),
}


def _text_of(kind: str, row: Row) -> Iterable[str]:
    """The fields the filter box searches, per kind."""
    if kind == "entities":
        return (row.name, *row.aliases, row.summary or "")
    if kind == "sessions":
        return (*row.project_focus, *row.key_actions)
    if kind == "workstreams":
        return (row.name, row.status)
    return (row.text, *row.tags)


def visible(agent: AgentView, access: Access) -> dict[str, list[Row]]:
    """Each kind's rows the caller may see, in the manifest's order."""

    def make() -> dict[str, list[Row]]:
        return {kind: [r for r in getattr(agent, kind) if access.allows(r)] for kind in KINDS}

    return memo.remember(agent, ("visible", memo.seen_by(access)), make)


def counts(agent: AgentView, access: Access) -> dict[str, Counter[int]]:
    """Each kind's rows the caller may see, counted by visibility (0 public .. 2 private)."""
    rows = visible(agent, access)
    return {kind: Counter(r.visibility for r in rows[kind]) for kind in KINDS}


def chosen_sort(kind: str, asked: str) -> str:
    offered = [value for value, *_ in SORTS[kind]]
    return asked if asked in offered else offered[0]


def select(agent: AgentView, access: Access, kind: str, q: str, sort: str) -> list[Row]:
    """The rows of ``kind`` the caller may see whose searched fields hold ``q`` (any case), in
    ``sort``'s order."""

    def make() -> list[tuple[Row, str]]:
        _, _, key, newest = next(s for s in SORTS[kind] if s[0] == sort)
        ordered = sorted(visible(agent, access)[kind], key=key, reverse=newest)
        # One folded text per row; "\n" between fields, so no match spans two of them.
        return [(r, "\n".join(fold(t) for t in _text_of(kind, r))) for r in ordered]

    ordered = memo.remember(agent, ("sorted", memo.seen_by(access), kind, sort), make)
    needle = fold(q)
    return [r for r, text in ordered if needle in text] if needle else [r for r, _ in ordered]


@dataclass(frozen=True)
class RowPage:
    """One page of ``total`` rows: ``first``..``last`` (1-based), page ``number`` of ``pages``."""

    rows: Sequence[Row]
    number: int
    pages: int
    total: int

    @property
    def first(self) -> int:
        return (self.number - 1) * PAGE_SIZE + 1 if self.total else 0

    @property
    def last(self) -> int:
        return self.first + len(self.rows) - 1 if self.total else 0


def page_of(rows: Sequence[Row], asked: str) -> RowPage:
    """Page ``asked`` (1-based, clamped to the pages there are) of ``rows``."""
    pages = max(1, -(-len(rows) // PAGE_SIZE))
    try:
        number = min(max(int(asked), 1), pages)
    except ValueError:
        number = 1
    start = (number - 1) * PAGE_SIZE
    return RowPage(rows[start : start + PAGE_SIZE], number, pages, len(rows))


# -- the charts ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=8192)  # a library holds a few hundred distinct days
def _week(value: str | None) -> dt.date | None:
    """The Monday of the week of a ``YYYY-MM-DD`` date (or timestamp); None if it is not one."""
    try:
        day = dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None
    return day - dt.timedelta(days=day.weekday())


def _window(weeks: Iterable[dt.date]) -> list[dt.date]:
    """Every week from the first dated one to the last, at most the last ``WEEKS``."""
    known = sorted(set(weeks))
    if not known:
        return []
    end, start = known[-1], max(known[0], known[-1] - dt.timedelta(weeks=WEEKS - 1))
    return [start + dt.timedelta(weeks=i) for i in range((end - start).days // 7 + 1)]


def _by_week(days: Counter[str | None]) -> Counter[dt.date]:
    """Counts by day folded into counts by week: each distinct day is parsed once."""
    weeks: Counter[dt.date] = Counter()
    for day, n in days.items():
        week = _week(day)
        if week is not None:
            weeks[week] += n
    return weeks


def sessions_per_week(sessions: Iterable[Row], weeks: int = WEEKS) -> list[tuple[str, int]]:
    """(Monday, sessions that week) for each week of the window (the last ``weeks`` up to the
    newest dated session), empty weeks included."""
    counts = _by_week(Counter(s.date for s in sessions if s.date))
    window = _window(counts)[-weeks:]
    return [(w.isoformat(), counts[w]) for w in window]


def dated(kind: str, row: Row) -> str | None:
    """The date a row carries: sessions and notes their date, workstreams when they started,
    entities when they were last touched."""
    if kind in ("sessions", "notes"):
        return str(row.date or "") or None
    found = row.started if kind == "workstreams" else row.last_touched
    return str(found) if found else None


@dataclass(frozen=True)
class Timeline:
    """Rows counted by the date they carry, cumulative at the end of each week."""

    points: list[tuple[str, int]]
    undated: int  # rows without a date: not counted
    before: int  # dated rows older than the window: counted in every point


def rows_over_time(rows: dict[str, list[Row]]) -> Timeline:
    days = Counter(dated(kind, row) for kind, kept in rows.items() for row in kept)
    weeks = _by_week(days)
    undated = sum(days.values()) - sum(weeks.values())
    window = _window(weeks)
    before = sum(n for w, n in weeks.items() if window and w < window[0])
    points, running = [], before
    for w in window:
        running += weeks[w]
        points.append((w.isoformat(), running))
    return Timeline(points, undated, before)
