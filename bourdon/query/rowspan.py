"""What of a manifest's bytes can decide one entity's row: the spans around each mention.

Tracing walks hundreds of versions of a manifest where most commits changed other rows. In a
block-style file (what bourdon writes) a row is the lines from its ``- `` item to the next item
or top-level key. ``spans`` returns, for each place a followed name is mentioned, that row's
text with the key of its section, and the ``visibility_policy`` block: two versions with the
same spans hold the same candidate rows under the same policy, so the second needs no parse.
Anything this cannot read with certainty (non-ASCII text, escapes, anchors, tags, flow style)
answers ``None``: parse it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from typing import Final

# Escapes, anchors, aliases, tags and flow collections (and a value merely looking like one):
# read by the parser, not here.
_UNSURE: Final = re.compile(rb"\\|[:\-\[,{] *[&*!\[{]")
_KEY: Final = re.compile(rb"\n[^\s#\-]")  # a top-level key's line (after its newline)
_ITEM: Final = re.compile(rb"^( *)- ", re.M)
_POLICY: Final = b"visibility_policy:"


def spans(raw: bytes, names: Iterable[str]) -> tuple[bytes, ...] | None:
    """The row text around every mention of ``names`` (case-insensitive), each with its
    section's key line, and the policy block; ``None`` when the bytes are not plain enough."""
    if not raw.isascii() or b"\\" in raw:
        return None
    keys = [m.start() + 1 for m in _KEY.finditer(raw)]
    if raw[:1] not in (b"", b" ", b"#", b"-", b"\t", b"\n", b"\r"):
        keys.insert(0, 0)
    lower = raw.lower()
    found: set[tuple[int, int, int]] = set()
    for name in names:
        wanted = name.encode("ascii", "replace")
        at = lower.find(wanted)
        while at != -1:
            found.add(_row(raw, at, keys))
            at = lower.find(wanted, at + 1)
    for n, key in enumerate(keys):
        if raw.startswith(_POLICY, key):
            end = keys[n + 1] if n + 1 < len(keys) else len(raw)
            found.add((key, key, end))
    out = tuple(raw[k : raw.find(b"\n", k)] + b"\0" + raw[a:b] for k, a, b in sorted(found))
    # What is outside the spans cannot change the rows in them, so only they must be plain.
    return None if any(_UNSURE.search(text) for text in out) else out


def _row(raw: bytes, at: int, keys: list[int]) -> tuple[int, int, int]:
    """(its section's key, start, end) of the item holding ``at``; the whole section when
    ``at`` is in no item."""
    n = bisect.bisect_right(keys, at) - 1
    section = keys[n] if n >= 0 else 0
    end = keys[n + 1] if n + 1 < len(keys) else len(raw)
    first = _ITEM.search(raw, section, end)
    if first is None or first.start() > at:
        return section, section, end
    opener = b"\n" + first.group(1) + b"- "
    start = raw.rfind(opener, first.start(), at) + 1 or first.start()
    line = raw.rfind(b"\n", 0, at) + 1
    if raw.startswith(opener[1:], line):
        start = line  # the mention is on the item's own first line
    stop = re.compile(rb"\n(?= {0,%d}\S)" % len(first.group(1))).search(raw, at, end)
    return section, start, stop.start() + 1 if stop else end
