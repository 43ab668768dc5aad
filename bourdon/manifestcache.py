"""Parsed manifests kept on disk by content, so nothing parses the same YAML twice.

Parsing and validating a 1,000-entity manifest takes tenths of a second; loading its parsed
form as JSON takes a few milliseconds. Entries live in
``<library>/.bourdon/cache/<rules>/<id>.json``: ``<id>`` is the git blob id of the bytes
(computed here, so the key does not depend on git) and ``<rules>`` a fingerprint of the schema
and the reader, so a change of the validation rules never trusts an entry made under the old
ones. Entries are written only for bytes that passed validation. The folder is local and
git-ignored; delete it at any time.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Final

from bourdon import schema

# Manifests this process validated lately (a write, then the index reloading the same file).
_RECENT: OrderedDict[str, dict[str, Any]] = OrderedDict()
_RECENT_SIZE: Final = 64


def remember_parsed(key: str, data: dict[str, Any]) -> None:
    """Keep a manifest this process just validated, for the next reader of the same bytes."""
    _RECENT[key] = data
    _RECENT.move_to_end(key)
    while len(_RECENT) > _RECENT_SIZE:
        _RECENT.popitem(last=False)


def content_id(raw: bytes) -> str:
    """The id git would give a blob of these bytes (SHA-1 object format)."""
    return hashlib.sha1(b"blob " + str(len(raw)).encode() + b"\0" + raw).hexdigest()


@functools.cache
def rules_fingerprint() -> str:
    """Changes whenever the schema or the YAML reader's limits change."""
    from bourdon import yamlio
    from bourdon.resources import schema_path

    basis = (
        schema_path().read_bytes()
        + repr((yamlio.MAX_BYTES, yamlio.MAX_DEPTH, yamlio.MAX_STRING, schema.__doc__)).encode()
    )
    return hashlib.sha256(basis).hexdigest()[:12]


class ManifestCache:
    """Validated manifests by content id, on disk, shared by every process of the library."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / rules_fingerprint()

    def load(self, raw: bytes, *, what: str, key: str | None = None) -> dict[str, Any]:
        """The validated manifest in ``raw``; raises ``ManifestError``/``SchemaError`` if bad."""
        key = key or content_id(raw)
        data = _RECENT.get(key) or self.get(key)
        if data is None:
            data = dict(schema.load_manifest(raw, what=what).data)
            self.put(key, data)
        return data

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            with open(self.folder / f"{key}.json", encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, data: dict[str, Any]) -> None:
        with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
            self.folder.mkdir(parents=True, exist_ok=True)
            tmp = self.folder / f".{key}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
            os.replace(tmp, self.folder / f"{key}.json")
