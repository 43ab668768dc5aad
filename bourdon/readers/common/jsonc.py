"""VS Code's settings files: JSON with comments (``//``, ``/* */``) and trailing commas.

Pure like every reader: reads files, never writes, no git, no network.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import ReadStats
from bourdon.readers.common.files import MEMORY_FILE_LIMIT

# A string (kept), a comment (dropped), or a comma before a closing bracket (dropped).
_TOKEN: Final = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def loads_jsonc(text: str) -> Any:
    """Parse JSON with comments and trailing commas; ``ValueError`` when it is not that."""
    return json.loads(_TOKEN.sub(lambda m: m.group(0) if m.group(0)[0] == '"' else "", text))


def load_jsonc(path: Path, stats: ReadStats) -> Any:
    """A small JSONC file, or ``None`` (counted) when missing, too large or not JSONC."""
    try:
        if path.stat().st_size > MEMORY_FILE_LIMIT:
            stats.too_large += 1
            return None
        text = path.read_bytes().decode("utf-8", "replace").lstrip("\ufeff")
    except OSError:
        return None
    stats.files += 1
    try:
        return loads_jsonc(text)
    except (ValueError, RecursionError):
        stats.skipped += 1
        stats.problem(f"{path.name}: not valid JSON with comments")
        return None
