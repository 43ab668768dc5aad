"""Bounds and pages of the list tools: limits, dates, cursors, keyset pages.

Bounds are clamped, never rejected. A cursor is the key of the last row served, so a row
written between two pages never shows twice or not at all; the ``since`` window it was opened
with travels inside it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any, Final, Protocol, TypeVar

from bourdon.access.visibility import Access
from bourdon.errors import InputError
from bourdon.query.answer import meta, optional_agent
from bourdon.query.index import Index

DEFAULT_LIMIT: Final = 20
MAX_LIMIT: Final = 100
DEFAULT_SINCE_DAYS: Final = 14

T = TypeVar("T")

# The position a cursor of each kind carries: the key of the last row served (``rows.py``).
_SESSION_KEY: Final = (str, str, str, str, int)  # date, agent, cwd, session id, position
CURSOR_KEYS: Final[dict[str, tuple[type, ...]]] = {
    "sessions": _SESSION_KEY,
    "summary": _SESSION_KEY,
    "notes": (str, str, str, int),  # date, agent, text, position
}


def clamp_limit(limit: object, default: int = DEFAULT_LIMIT, most: int = MAX_LIMIT) -> int:
    if limit is None:
        return default
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InputError(f"limit must be a whole number from 1 to {most}, got {limit!r}")
    return max(1, min(most, limit))


def parse_since(since: object, what: str = "since") -> str | None:
    """An ISO date or date-time, as the ``YYYY-MM-DD`` it starts on; ``None`` stays ``None``."""
    if since is None or since == "":
        return None
    if isinstance(since, str):
        text = since.strip()
        for parse in (date.fromisoformat, datetime.fromisoformat):
            try:
                parsed = parse(text)
            except ValueError:
                continue
            return (parsed.date() if isinstance(parsed, datetime) else parsed).isoformat()
    return _bad(what, since)


def _bad(what: str, value: object) -> str:
    raise InputError(
        f"{what} {value!r} is not a date; pass an ISO date such as '2026-11-01' "
        "or a date-time such as '2026-11-01T09:00:00Z'"
    )


def encode_cursor(kind: str, after: Sequence[Any], since: str | None) -> str:
    payload = json.dumps(
        {"v": 1, "k": kind, "after": list(after), "since": since}, separators=(",", ":")
    )
    return base64.urlsafe_b64encode(payload.encode("utf-8")).decode("ascii").rstrip("=")


def decode_cursor(cursor: object, kind: str) -> tuple[tuple[Any, ...], str | None]:
    """The position after which a page starts, and the window it was opened with."""
    bad = InputError(
        f"cursor {str(cursor)[:40]!r} is not one this server gave out; pass the next_cursor of "
        "the previous page unchanged, or omit cursor to start from the first page"
    )
    if not isinstance(cursor, str) or len(cursor) > 2048:
        raise bad
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError):
        raise bad from None
    if not isinstance(data, dict) or data.get("v") != 1 or data.get("k") != kind:
        raise bad
    after, since = data.get("after"), data.get("since")
    if not isinstance(after, list) or not _position(after, CURSOR_KEYS.get(kind)):
        raise bad
    if not (since is None or _date(since)):
        raise bad
    return tuple(after), since


def _position(after: list[Any], shape: tuple[type, ...] | None) -> bool:
    """Whether ``after`` is a key rows of the cursor's kind can be compared with."""
    if shape is None or len(after) != len(shape):
        return False
    return all(
        type(value) is kind and not (isinstance(value, str) and len(value) > 1024)
        for value, kind in zip(after, shape, strict=True)
    )


def _date(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return date.fromisoformat(value).isoformat() == value
    except ValueError:
        return False


def page(
    rows: Iterable[T],
    key: Callable[[T], tuple[Any, ...]],
    after: tuple[Any, ...] | None,
    limit: int,
) -> tuple[list[T], bool]:
    """Keyset pagination over rows sorted newest first: the rows after ``after``, at most limit.

    Keys, not offsets: a session written between two pages never makes a row show twice or
    not at all.
    """
    out: list[T] = []
    more = False
    for row in rows:
        if after is not None and list(key(row)) >= list(after):
            continue
        if len(out) == limit:
            more = True
            break
        out.append(row)
    return out, more


def window(since: object, cursor: object, kind: str) -> tuple[str | None, tuple[Any, ...] | None]:
    """The ``since`` date and cursor position of a paginated call (DESIGN: 14-day default)."""
    if cursor not in (None, ""):
        after, opened_since = decode_cursor(cursor, kind)
        chosen = parse_since(since) if since not in (None, "") else opened_since
        return chosen, after
    chosen = parse_since(since)
    if chosen is None:
        chosen = (datetime.now(UTC).date() - timedelta(days=DEFAULT_SINCE_DAYS)).isoformat()
    return chosen, None


class _Dated(Protocol):
    @property
    def agent(self) -> str: ...

    @property
    def date(self) -> str: ...

    @property
    def visibility(self) -> int: ...

    @property
    def key(self) -> tuple[Any, ...]: ...


D = TypeVar("D", bound=_Dated)


def dated_page(
    index: Index,
    rows: list[D],
    kind: str,
    since: str | None,
    agent: str | None,
    access: Access,
    limit: int | None,
    cursor: str | None,
) -> tuple[str | None, list[D], str | None, bool, dict[str, Any]]:
    """One page of dated rows (sessions or notes), newest first, as both list tools serve it:
    the 14-day default window, the agent filter, keyset cursors. Undated rows never appear in
    a window."""
    agent_id = optional_agent(index, agent, access)
    size = clamp_limit(limit)
    start, after = window(since, cursor, kind)
    wanted = (
        r
        for r in rows
        if access.allows(r)
        and (agent_id is None or r.agent == agent_id)
        and r.date
        and (start is None or r.date >= start)
    )
    chosen, more = page(wanted, lambda r: r.key, after, size)
    next_cursor = encode_cursor(kind, chosen[-1].key, start) if more and chosen else None
    facts = meta(index, access, limit=size, since_applied=start, returned=len(chosen))
    return agent_id, chosen, next_cursor, more, facts
