"""Parsed manifests kept on disk by content, so nothing parses the same YAML twice.

Parsing and validating a 1,000-entity manifest takes tenths of a second; loading its parsed
form as JSON takes a few milliseconds. Entries live in
``<library>/.bourdon/cache/<rules>/<id>.json``: ``<id>`` is the git blob id of the bytes
(computed here, so the key does not depend on git) and ``<rules>`` a fingerprint of the schema
and the reader, so a change of the validation rules never trusts an entry made under the old
ones. An entry holds the whole manifest and the problems of the rows it does not serve
(``reading.read_manifest``); entries are written only for bytes whose top level is readable. The
folder is local and git-ignored; delete it at any time.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any, Final

from bourdon.formats import reading
from bourdon.store.durable import atomic_write

# Manifests this process validated lately (a write, then the index reloading the same file).
_RECENT: OrderedDict[str, reading.Reading] = OrderedDict()
_RECENT_SIZE: Final = 64


def remember_parsed(
    key: str, data: dict[str, Any], problems: tuple[reading.ReadProblem, ...] = ()
) -> None:
    """Keep a manifest this process just validated, for the next reader of the same bytes.

    A write passes the problems of the rows it kept unserved (see ``reading.read_data``)."""
    _RECENT[key] = reading.Reading(data, problems)
    _RECENT.move_to_end(key)
    while len(_RECENT) > _RECENT_SIZE:
        _RECENT.popitem(last=False)


def content_id(raw: bytes) -> str:
    """The id git would give a blob of these bytes (SHA-1 object format)."""
    return hashlib.sha1(b"blob " + str(len(raw)).encode() + b"\0" + raw).hexdigest()


@functools.cache
def rules_fingerprint() -> str:
    """Changes whenever the schema or the YAML reader's limits change."""
    from bourdon.formats import yamlio
    from bourdon.formats.resources import schema_path

    basis = (
        schema_path().read_bytes()
        + repr((yamlio.MAX_BYTES, yamlio.MAX_DEPTH, yamlio.MAX_STRING, reading.__doc__)).encode()
        + json.dumps(reading.read_schema(), sort_keys=True).encode()
    )
    return hashlib.sha256(basis).hexdigest()[:12]


class ManifestCache:
    """Validated manifests by content id, on disk, shared by every process of the library.

    With ``deferred``, new entries are kept in memory until ``flush()``: a server starting on
    a library with no cache answers its first calls before it spends time writing entries
    (it flushes once idle, and on its way out).
    """

    def __init__(self, folder: Path, *, deferred: bool = False) -> None:
        self.folder = folder / rules_fingerprint()
        self.deferred = deferred
        self._pending: list[tuple[str, reading.Reading]] = []

    def load(self, raw: bytes, *, what: str, key: str | None = None) -> dict[str, Any]:
        """The whole manifest in ``raw``; raises ``ManifestError``/``SchemaError`` if its top
        level is broken. Rows that do not validate are in it (see ``read``)."""
        return self.read(raw, what=what, key=key).data

    def read(self, raw: bytes, *, what: str, key: str | None = None) -> reading.Reading:
        """The manifest in ``raw`` with the problems of the rows it does not serve."""
        key = key or content_id(raw)
        found = _RECENT.get(key) or self.get(key)
        if found is None:
            found = reading.read_manifest(raw, what=what)
            self.put(key, found)
        return found

    def has(self, raw: bytes) -> bool:
        """Whether ``read`` of these bytes would load a parsed form, not parse them."""
        key = content_id(raw)
        return key in _RECENT or (self.folder / f"{key}.json").exists()

    def get(self, key: str) -> reading.Reading | None:
        try:
            with open(self.folder / f"{key}.json", encoding="utf-8") as handle:
                entry = json.load(handle)
            return reading.Reading(
                entry["manifest"], tuple(reading.ReadProblem.from_json(p) for p in entry["skipped"])
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None  # not there, or not an entry of ours: read the bytes again

    def put(self, key: str, found: reading.Reading) -> None:
        if self.deferred:
            self._pending.append((key, found))
        else:
            self._write(key, found)

    def flush(self) -> None:
        """Write the entries kept back, and write the next ones as they come (no longer
        ``deferred``: only a start waits). Safe from any thread, at any time."""
        self.deferred = False
        while self._pending:
            try:
                key, found = self._pending.pop()
            except IndexError:  # another thread took the last one
                return
            self._write(key, found)

    def _write(self, key: str, found: reading.Reading) -> None:
        entry = {"manifest": found.data, "skipped": [p.to_json() for p in found.problems]}
        # Parsed YAML is a tree: the encoder need not look for cycles.
        text = json.dumps(entry, ensure_ascii=False, check_circular=False)
        with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
            atomic_write(self.folder / f"{key}.json", text.encode("utf-8"), sync=False)
