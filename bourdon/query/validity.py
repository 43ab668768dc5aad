"""Whether a row holds today (``valid_from`` / ``valid_to``) and which rows replace which.

A row whose ``valid_to`` is before today is *expired*; one whose ``valid_from`` is after today
is *not yet valid*. Reads still return both, marked; recognition (and so every turn brief)
leaves them out. "Today" is one UTC day, the ``day`` a snapshot of the index was made for
(``Index`` takes the clock; tests inject one): dates compare as ``YYYY-MM-DD`` strings.

``supersedes`` on an entity names the entities it replaces. ``Lifecycle.successor`` finds, for
an older name, the row that replaces it *among the rows a caller may see*: a successor the
caller cannot see is never named, so it cannot show through a ``superseded_by``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime
from typing import Protocol

from bourdon.model import fold
from bourdon.query.rows import EntityRow

Clock = Callable[[], date]


class Dated(Protocol):
    @property
    def valid_from(self) -> str | None: ...

    @property
    def valid_to(self) -> str | None: ...


def utc_today() -> date:
    """The server's clock: the current UTC day."""
    return datetime.now(UTC).date()


def standing(row: Dated, day: str) -> str | None:
    """``"expired"``, ``"not_yet_valid"``, or ``None`` for a row that holds on ``day``."""
    if row.valid_to and row.valid_to < day:
        return "expired"
    if row.valid_from and row.valid_from > day:
        return "not_yet_valid"
    return None


def live(row: Dated, day: str) -> bool:
    """Does the row hold on ``day``? (always, for a row that states no bounds)"""
    return standing(row, day) is None


def marks(rows: Iterable[Dated], day: str) -> dict[str, object]:
    """The keys a read adds to a row, or a group of rows of one name, that no longer (or not
    yet) holds: ``expired`` with the latest ``valid_to``, or ``not_yet_valid`` with the
    earliest ``valid_from``. A group holds while any of its rows does: nothing is added."""
    found = [(row, standing(row, day)) for row in rows]
    if not found or any(state is None for _, state in found):
        return {}
    ended = [row.valid_to for row, state in found if state == "expired" and row.valid_to]
    if ended:
        return {"expired": True, "valid_to": max(ended)}
    starts = [row.valid_from for row, _ in found if row.valid_from]
    return {"not_yet_valid": True, "valid_from": min(starts)}


class Lifecycle:
    """The day one snapshot is for, and its ``supersedes`` links, older name -> newer rows."""

    def __init__(self, rows: Iterable[EntityRow], day: str) -> None:
        self.day = day
        self._successors: dict[str, list[EntityRow]] = {}
        for row in rows:
            for older in row.supersedes:
                if fold(older) != fold(row.name):  # a row never replaces itself
                    self._successors.setdefault(fold(older), []).append(row)

    def successor(
        self, name: str, allows: Callable[[EntityRow], bool], *, holding: bool = False
    ) -> EntityRow | None:
        """The row that replaces ``name`` among those ``allows`` lets through (the most
        recently touched when several do), or ``None``. ``holding``: only rows live today."""
        rows = [
            row
            for row in self._successors.get(fold(name), ())
            if allows(row) and (not holding or live(row, self.day))
        ]
        return max(rows, key=lambda r: (r.last_touched or "", r.name)) if rows else None

    def on(self, day: str) -> Lifecycle:
        """The same links, judged for another day (the rows did not change)."""
        other = Lifecycle((), day)
        other._successors = self._successors
        return other

    @property
    def links(self) -> bool:
        """Does any row state a ``supersedes``? (most libraries: no, and reads skip the work)"""
        return bool(self._successors)
