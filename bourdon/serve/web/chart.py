"""Small inline SVG charts for the pages: bars or a line over labelled points, no library.

``svg`` turns one ``Series`` into an ``<svg role="img">`` whose ``<title>`` names it and whose
``<desc>`` states every number, so a screen reader hears what the bars show. Every piece of
text is escaped here (labels may come from manifests), and colours come from CSS classes: the
web view's CSP forbids inline styles.

>>> series = Series("sessions-week", "Sessions per week", ("session", "sessions"),
...                 (("2026-11-23", 2), ("2026-11-30", 5)))
>>> "2026-11-30: 5 sessions" in svg(series)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from markupsafe import Markup, escape

from bourdon.serve.web.filters import plural

WIDTH: Final = 600
HEIGHT: Final = 150
LEFT, RIGHT, TOP, BOTTOM = 40, 8, 8, 20  # room for the axis labels


@dataclass(frozen=True)
class Series:
    """Points to draw: ``ident`` is unique on its page (the ids of ``<title>`` and ``<desc>``),
    ``unit`` is the counted word, singular and plural."""

    ident: str
    title: str
    unit: tuple[str, str]
    points: Sequence[tuple[str, int]]
    shape: Literal["bars", "line"] = "bars"
    note: str = ""  # a sentence after the numbers in <desc>: what is and is not counted


def describe(series: Series) -> str:
    """The numbers in words: ``Sessions per week: 2026-11-23: 2 sessions; 2026-11-30: ...``."""
    one, many = series.unit
    if not series.points:
        said = f"no {many}"
    else:
        said = "; ".join(f"{label}: {plural(n, one, many)}" for label, n in series.points)
    return f"{series.title}: {said}." + (f" {series.note}" if series.note else "")


def svg(series: Series) -> Markup:
    """The chart of ``series``, to be put inline in a page (already escaped)."""
    ident = escape(series.ident)
    body = _bars(series.points) if series.shape == "bars" else _line(series.points)
    top = max((n for _, n in series.points), default=0)
    labels = [_text("tick", LEFT - 4, TOP + 4, f"{top:,}", "end")]
    labels.append(_text("tick", LEFT - 4, HEIGHT - BOTTOM, "0", "end"))
    if series.points:
        labels.append(_text("tick", LEFT, HEIGHT - 4, series.points[0][0], "start"))
    if len(series.points) > 1:
        labels.append(_text("tick", WIDTH - RIGHT, HEIGHT - 4, series.points[-1][0], "end"))
    axis = f'<path class="axis" d="M{LEFT} {TOP}V{HEIGHT - BOTTOM}H{WIDTH - RIGHT}" fill="none"/>'
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-{series.shape}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-labelledby="{ident}-title {ident}-desc">'
        f'<title id="{ident}-title">{escape(series.title)}</title>'
        f'<desc id="{ident}-desc">{escape(describe(series))}</desc>'
        f"{axis}{body}{''.join(labels)}</svg>"
    )


def sparkline(series: Series, width: int = 96, height: int = 24) -> Markup:
    """A tiny line of ``series`` without axes, for a table cell; its numbers in ``<title>``."""
    values = [n for _, n in series.points]
    if len(values) == 1:  # one week: a flat line across, as a single point draws nothing
        values *= 2
    top = max(values, default=0) or 1
    step = width / max(len(values) - 1, 1)
    points = " ".join(
        f"{i * step:.1f},{height - 2 - (height - 4) * n / top:.1f}" for i, n in enumerate(values)
    )
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sparkline" viewBox="0 0 {width} '
        f'{height}" width="{width}" height="{height}" role="img">'
        f"<title>{escape(describe(series))}</title>"
        f'<polyline class="line" fill="none" points="{points}"/></svg>'
    )


def _plot(points: Sequence[tuple[str, int]]) -> tuple[float, float, int]:
    """The width of one point's slot, the plot's height, and the largest value (at least 1)."""
    slot = (WIDTH - LEFT - RIGHT) / max(len(points), 1)
    return slot, HEIGHT - TOP - BOTTOM, max((n for _, n in points), default=0) or 1


def _bars(points: Sequence[tuple[str, int]]) -> str:
    slot, tall, top = _plot(points)
    bars = []
    for i, (_, n) in enumerate(points):
        h = tall * n / top
        bars.append(
            f'<rect class="bar" x="{LEFT + i * slot + slot * 0.1:.1f}" '
            f'y="{TOP + tall - h:.1f}" width="{slot * 0.8:.1f}" height="{h:.1f}"/>'
        )
    return "".join(bars)


def _line(points: Sequence[tuple[str, int]]) -> str:
    slot, tall, top = _plot(points)
    xy = " ".join(
        f"{LEFT + (i + 0.5) * slot:.1f},{TOP + tall - tall * n / top:.1f}"
        for i, (_, n) in enumerate(points)
    )
    return f'<polyline class="line" fill="none" points="{xy}"/>' if points else ""


def _text(cls: str, x: float, y: float, text: str, anchor: str) -> str:
    return f'<text class="{cls}" x="{x}" y="{y}" text-anchor="{anchor}">{escape(text)}</text>'
