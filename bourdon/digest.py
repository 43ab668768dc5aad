"""The canonical digest of a manifest (DESIGN section 3).

``sha256:`` + the hex SHA-256 of the canonical JSON of the manifest without ``last_updated``:
keys sorted, no insignificant white space, UTF-8. Two manifests with the same content have the
same digest whatever their key order or timestamp; ``digest8`` is the first 8 hex characters.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, Final

from bourdon.errors import InputError

PREFIX: Final = "sha256:"
_DIGEST = re.compile(r"(?:sha256:)?([0-9a-f]{8,64})")


RowCache = dict[int, tuple[Any, str]]


def _encode(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(data: Mapping[str, Any], cache: RowCache | None = None) -> bytes:
    """The bytes the digest is taken over.

    The same bytes as ``json.dumps(data without last_updated, sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)``. With ``cache``, the JSON of each row of a
    top-level list is remembered by the row's identity, as ``yamlio.dump`` does for YAML.
    """
    parts = []
    for key in sorted(data):
        if key == "last_updated":
            continue
        value = data[key]
        if cache is not None and isinstance(value, list):
            encoded = "[" + ",".join(_row_json(row, cache) for row in value) + "]"
        else:
            encoded = _encode(value)
        parts.append(f"{_encode(key)}:{encoded}")
    return ("{" + ",".join(parts) + "}").encode("utf-8", "surrogatepass")


def _row_json(row: Any, cache: RowCache) -> str:
    hit = cache.get(id(row))
    if hit is not None and hit[0] is row:
        return hit[1]
    text = _encode(row)
    if isinstance(row, dict):
        cache[id(row)] = (row, text)
    return text


def digest(data: Mapping[str, Any], cache: RowCache | None = None) -> str:
    """``sha256:<64 hex>`` of the manifest's content."""
    return PREFIX + hashlib.sha256(canonical_json(data, cache)).hexdigest()


def digest8(full: str) -> str:
    """The short form shown in history: the first 8 hex characters."""
    return full.removeprefix(PREFIX)[:8]


def parse_digest(value: object, what: str = "digest") -> str:
    """Normalise a full digest or a prefix of at least 8 hex characters to bare lower-case hex.

    Accepts ``sha256:<hex>`` or ``<hex>``; raises ``InputError`` on anything else.
    """
    if isinstance(value, str):
        match = _DIGEST.fullmatch(value.strip().lower())
        if match:
            return match.group(1)
    raise InputError(
        f"{what} {value!r} is not a digest; pass 'sha256:<64 hex>' or at least its first 8 hex "
        "characters"
    )


def is_current(current: str | None, expected: str) -> bool:
    """Whether ``current`` (a full digest, or ``None`` for no manifest) is the one ``expected``
    names: ``expected`` is bare hex from ``parse_digest``, a full digest or a prefix of one."""
    return current is not None and current.removeprefix(PREFIX).startswith(expected)
