"""Jinja filters the templates share: numbers, dates and plurals as people read them."""

from __future__ import annotations

from typing import Any

import jinja2


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 row``, ``2 rows``, ``1,024 entities`` (``many`` for irregular plurals)."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


def day(value: Any) -> str:
    """The date part of an ISO timestamp (``2026-11-30``), or ``-`` when there is none."""
    text = str(value or "")
    return text[:10] if text else "-"


def moment(value: Any) -> str:
    """An ISO timestamp to the minute, in UTC as written (``2026-11-30 01:38``)."""
    text = str(value or "")
    return text[:16].replace("T", " ") if text else "-"


def install(env: jinja2.Environment) -> None:
    env.filters.update(plural=plural, day=day, moment=moment)
