"""How the CLI shows things to people: aligned tables, short ids, one-line errors.

Scripts get ``--json`` instead; nothing here decides what data a command returns.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO


def print_json(data: Any, stream: TextIO | None = None) -> None:
    out = stream or sys.stdout
    out.write(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], stream: TextIO | None = None
) -> None:
    """An aligned plain-text table; the last column is not padded, so long text just runs on."""
    out = stream or sys.stdout
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    lines = [headers, *cells]
    for line in lines:
        padded = [
            value.ljust(widths[i]) if i < len(headers) - 1 else value
            for i, value in enumerate(line)
        ]
        out.write("  ".join(padded).rstrip() + "\n")


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
