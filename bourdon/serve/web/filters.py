"""Jinja filters the templates share: numbers, dates and plurals as people read them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jinja2
from markupsafe import Markup, escape

from bourdon.serve.web import links

MARK = "**"  # how search_federation marks the matched words of a snippet


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


def highlight(snippet: Any) -> Markup:
    """A search snippet as HTML: its text escaped, then each ``**word**`` wrapped in <mark>.

    >>> str(highlight("the **<b>** tag"))
    'the <mark>&lt;b&gt;</mark> tag'
    """
    parts = str(snippet or "").split(MARK)
    # Odd pieces sit between two marks; escape() is applied to every piece before wrapping.
    return Markup("").join(
        Markup("<mark>{}</mark>").format(part) if i % 2 else escape(part)
        for i, part in enumerate(parts)
    )


def marked(snippet: Any) -> list[str]:
    """The words a snippet marks, in order (``"a **b** c **d**"`` -> ``["b", "d"]``)."""
    return [w for w in str(snippet or "").split(MARK)[1::2] if w.strip()]


def shown(value: Any) -> str:
    """A field's value as a line of text: lists joined, mappings as ``key: value``, nothing
    as ``-``."""
    if value is None or value in ("", [], {}):
        return "-"
    if isinstance(value, list | tuple):
        return ", ".join(shown(v) for v in value)
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {shown(v)}" for k, v in value.items())
    return str(value)


def install(env: jinja2.Environment) -> None:
    env.filters.update(plural=plural, day=day, moment=moment, highlight=highlight, shown=shown)
    env.globals.update(url=links.url)
