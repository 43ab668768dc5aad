"""Reading manifests out of commits, each blob parsed and validated once per library object.

A write reads the current manifest first, and re-parsing 1,000 rows of YAML each time would
cost more than the write: parsed manifests are kept by blob id with their digests (in memory,
the latest ``CACHE_SIZE``; on disk, ``ManifestCache``). A commit never changes, so sizes are
kept by (commit, path) for good.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from pathlib import Path
from typing import Any, Final

from bourdon.digest import RowCache, digest
from bourdon.errors import InputError, NotFoundError
from bourdon.formats.reading import ReadProblem
from bourdon.store.git.repo import GitRepo
from bourdon.store.manifestcache import ManifestCache

CACHE_SIZE: Final = 256
_VERSION = re.compile(r"[0-9a-f]{4,64}")


class Manifests:
    """The manifests of one repository, read by path and commit."""

    def __init__(self, repo: GitRepo, cache_folder: Path) -> None:
        self.repo = repo
        self.disk_cache = ManifestCache(cache_folder)
        self.row_json: RowCache = {}  # canonical JSON of rows, so digests cost what changed
        self._parsed: OrderedDict[str, tuple[dict[str, Any], str]] = OrderedDict()
        self._sizes: dict[tuple[str, str], int | None] = {}  # (commit, path) -> bytes
        # Blobs of ``_parsed`` holding rows that are not served (``reading.read_manifest``): a
        # write of such a manifest must not hand the index its parsed form as if every row
        # were good.
        self.unserved: set[str] = set()

    def blob(self, path: str, commit: str | None) -> tuple[str, bytes] | None:
        """(blob id, bytes) of ``path`` at ``commit``; ``None`` if it was not there."""
        if commit is None:
            return None
        found = self.repo.read(f"{commit}:{path}")
        if not found or found[1] != "blob":
            return None
        return found[0], found[2]

    def parse(self, blob_id: str, raw: bytes, path: str) -> dict[str, Any]:
        """Parse and validate a manifest blob once; later reads of the same blob are free."""
        cached = self._parsed.get(blob_id)
        if cached is not None:
            self._parsed.move_to_end(blob_id)
            return cached[0]
        reading = self.disk_cache.read(raw, what=path)
        data = reading.data
        self.remember(blob_id, data, digest(data, self.row_json))
        if reading.problems:
            self.unserved.add(blob_id)
        return data

    def served(self, blob_id: str) -> dict[str, Any] | None:
        """The blob's parsed manifest if it is kept and every row of it is served."""
        cached = self._parsed.get(blob_id)
        return cached[0] if cached is not None and blob_id not in self.unserved else None

    def remember(self, blob_id: str, data: dict[str, Any], data_digest: str) -> None:
        """Keep a parsed manifest (one just written, too) with its digest."""
        self._parsed[blob_id] = (data, data_digest)
        self._parsed.move_to_end(blob_id)
        while len(self._parsed) > CACHE_SIZE:
            self.unserved.discard(self._parsed.popitem(last=False)[0])

    def digest_of(self, blob_id: str) -> str:
        """The digest of a blob ``at`` just returned (kept with its parsed form, so asking
        costs no canonical JSON of 1,000 rows)."""
        return self._parsed[blob_id][1]

    def at(self, path: str, commit: str | None) -> tuple[str, dict[str, Any]] | None:
        """(blob id, parsed manifest) of ``path`` at ``commit``; reads the blob only if new."""
        if commit is None:
            return None
        blob_id = self.repo.object_id(commit, path)
        if blob_id is None:
            return None
        cached = self._parsed.get(blob_id)
        if cached is not None:
            self._parsed.move_to_end(blob_id)
            return blob_id, cached[0]
        found = self.blob(path, commit)
        return (found[0], self.parse(found[0], found[1], path)) if found else None

    def data(self, path: str, version: str | None, what: str) -> dict[str, Any]:
        """The manifest at ``version`` (HEAD if ``None``); ``NotFoundError`` naming ``what``."""
        found = self.at(path, self.commit(version))
        if found is None:
            raise missing(what, version)
        return found[1]

    def raw(self, path: str, version: str | None, what: str) -> bytes:
        """The exact bytes of ``path`` at ``version`` (HEAD if ``None``)."""
        found = self.blob(path, self.commit(version))
        if found is None:
            raise missing(what, version)
        return found[1]

    def problems(self, path: str, version: str | None, what: str) -> tuple[ReadProblem, ...]:
        """The rows of the manifest that are kept in the file but not served."""
        return self.disk_cache.read(self.raw(path, version, what), what=path).problems

    def parent_data(self, path: str, commit: str) -> dict[str, Any] | None:
        """The manifest in ``commit``'s first parent, ``None`` if it had none there."""
        found = self.blob(path, f"{commit}~1") if self.repo.read(f"{commit}~1") else None
        return self.parse(found[0], found[1], path) if found else None

    def sizes(self, path: str, versions: list[str]) -> list[int | None]:
        """The size in bytes of ``path`` at each version, each asked of git once."""
        wanted = [v for v in dict.fromkeys(versions) if (v, path) not in self._sizes]
        for version, size in zip(
            wanted, self.repo.sizes([f"{v}:{path}" for v in wanted]), strict=True
        ):
            self._sizes[(version, path)] = size
        return [self._sizes[(v, path)] for v in versions]

    def commit(self, version: str | None) -> str | None:
        """``version`` resolved to a commit id; HEAD when ``None``."""
        return self.resolve(version) if version else self.repo.head()

    def resolve(self, version: str) -> str:
        """The commit a version id (full or at least 4 hex) names."""
        wanted = version.strip().lower()
        if not _VERSION.fullmatch(wanted):
            raise InputError(
                f"version {version!r} is not a version id; pass a commit id from 'bourdon history'"
            )
        found = self.repo.read(f"{wanted}^{{commit}}")
        if not found:
            raise NotFoundError(f"no version {version} in this library")
        return found[0]


def missing(what: str, version: str | None) -> NotFoundError:
    """The error for a manifest that is not there (at ``version``, if given)."""
    if version:
        return NotFoundError(f"{what!r} had no manifest at version {version}")
    return NotFoundError(f"no agent {what!r} in this library; see 'bourdon agents'")
