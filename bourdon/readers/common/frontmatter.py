"""The one front-matter parser of the readers: the ``---`` block atop memory and rule files.

Claude Code and Codex memory files (``name``, ``description``, ``type``, ``tags``,
``visibility``), Cursor ``.mdc`` rules and Cline rules (``description``) all use it. Readers may
not use bourdon's YAML loader, and these blocks are flat: ``key: value`` lines, values plain or
quoted, lists inline (``[a, b]``) or as ``- item`` lines under their key.

Pure like every reader: reads nothing, writes nothing.
"""

from __future__ import annotations

import re
from typing import Final

Meta = dict[str, str | list[str]]

MAX_LINES: Final = 200  # a "---" further down is a thematic break, not the end of a block
_ITEM: Final = re.compile(r"^\s+-\s+(.*)$")
_PAIR: Final = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")


def front_matter(text: str) -> tuple[Meta, str]:
    """The front matter of ``text`` (keys lower-cased) and the rest, as written.

    Without a closing ``---`` within ``MAX_LINES`` lines there is no front matter: ``({}, text)``.
    """
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return {}, text
    for end in range(1, min(len(lines), MAX_LINES)):
        if lines[end].strip() == "---":
            break
    else:
        return {}, text
    meta: Meta = {}
    last = None
    for line in lines[1:end]:
        item = _ITEM.match(line)
        if item and last is not None:
            current = meta.get(last)
            meta[last] = [*(current if isinstance(current, list) else []), item.group(1).strip()]
            continue
        pair = _PAIR.match(line)
        if pair:
            last, value = pair.group(1).lower(), pair.group(2).strip().strip("'\"")
            if value.startswith("[") and value.endswith("]"):
                meta[last] = [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
            else:
                meta[last] = value
    return meta, "\n".join(lines[end + 1 :])


def listed(meta: Meta, key: str) -> list[str]:
    """The values under ``key``: its list, or its one value; ``[]`` when absent."""
    value = meta.get(key)
    return value if isinstance(value, list) else [value] if isinstance(value, str) else []
