"""How the CLI shows things to people: tables that fit the terminal, counted nouns, short ids,
one-line errors.

Scripts get ``--json`` instead, with every cell whole; nothing here decides what data a command
returns. A table is as wide as the terminal: ``$COLUMNS`` when set, else the terminal's width
when standard output is one; written to a pipe or a file it is not cut (``| grep`` sees whole
cells).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Sequence
from typing import Any, TextIO

ELLIPSIS = "…"
GAP = "  "  # between two columns
NARROWEST = 6  # a column is never cut below this (or its header, if shorter)


def print_json(data: Any, stream: TextIO | None = None) -> None:
    out = stream or sys.stdout
    out.write(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``1 agent``, ``2 agents``, ``0 agents``; ``nouns`` for the irregular (``entries``)."""
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"


def width(stream: TextIO | None = None) -> int | None:
    """The columns a table may use, or ``None`` (no limit) when writing to a pipe or a file."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    out = stream or sys.stdout
    try:
        if not out.isatty():
            return None
    except (AttributeError, ValueError):  # a closed or unusual stream: do not cut
        return None
    return shutil.get_terminal_size().columns


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    stream: TextIO | None = None,
    *,
    columns: int | None = None,
    indent: str = "",
    header: bool = True,
) -> None:
    """An aligned plain-text table that fits ``columns`` (default: :func:`width`).

    When the natural widths do not fit, the widest columns give way first, down to
    ``NARROWEST``; a cell longer than its column ends in ``…``. ``header=False`` prints the
    rows only (``headers`` still name the columns, and set their narrowest width); ``indent``
    starts every line.
    """
    out = stream or sys.stdout
    cells = [[_cell(v) for v in row] for row in rows]
    natural = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    room = columns if columns is not None else width(out)
    widths = fit(natural, headers, None if room is None else room - len(indent))
    last = len(headers) - 1
    for line in [list(headers), *cells] if header else cells:
        padded = [
            cut(value, widths[i]).ljust(widths[i]) if i < last else cut(value, widths[i])
            for i, value in enumerate(line)
        ]
        out.write((indent + GAP.join(padded)).rstrip() + "\n")


def fit(natural: Sequence[int], headers: Sequence[str], columns: int | None) -> list[int]:
    """Column widths within ``columns``: every column wider than a cap ``c`` is cut to ``c``,
    with ``c`` the largest that fits (each column keeps at least its floor)."""
    widths = list(natural)
    if columns is None or not widths:
        return widths
    room = columns - len(GAP) * (len(widths) - 1)
    if sum(widths) <= room:
        return widths
    floors = [
        min(w, max(NARROWEST, min(len(h), NARROWEST * 2)))
        for w, h in zip(widths, headers, strict=True)
    ]

    def capped(cap: int) -> list[int]:
        return [max(floor, min(w, cap)) for w, floor in zip(widths, floors, strict=True)]

    low, high = 0, max(widths)  # sum(capped(high)) > room; find the largest cap that fits
    while low < high:
        mid = (low + high + 1) // 2
        if sum(capped(mid)) <= room:
            low = mid
        else:
            high = mid - 1
    best = capped(low)
    spare = room - sum(best)
    for i, w in enumerate(widths):  # hand out what the integer cap left, widest first
        if spare <= 0:
            break
        if w > best[i]:
            best[i] += 1
            spare -= 1
    return best


def cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, ending in ``…`` when it was longer."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + ELLIPSIS if limit > 0 else ""


def _cell(value: object) -> str:
    if value is None:
        return "-"
    text = str(value)
    return " ".join(text.split())  # a table cell is one line, whatever the data holds


def short(version: str | None) -> str:
    """A commit id as people read it."""
    return version[:12] if version else "-"


def error(message: str) -> None:
    sys.stderr.write(f"bourdon: {' '.join(message.split())}\n")
