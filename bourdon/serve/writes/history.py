"""``list_memory_versions`` and ``explain_memory_change``: an agent's undo history, and which
write produced a state, as far as the caller may see them."""

from __future__ import annotations

import functools
import re
from typing import Any, Final

from bourdon.access.visibility import filter_manifest
from bourdon.errors import NotFoundError
from bourdon.formats import yamlio
from bourdon.merge.twoway import RowChanges, compare
from bourdon.model import Visibility
from bourdon.query.paging import clamp_limit
from bourdon.serve.writes.counts import SHORT, hidden
from bourdon.store.history import Version
from bourdon.store.library import Library

DEFAULT_VERSIONS: Final = 20
MAX_VERSIONS: Final = 100
ASSERTED: Final = "session_id and transcript_ref are asserted by the caller and not verified"
# The reference's provenance says "commit" for what bourdon records as a merge or a replace.
COMMIT_OPS: Final = frozenset({"merge", "replace"})


def _sizes(
    library: Library, agent_id: str, versions: list[Version], level: int | None
) -> list[int | None]:
    """Bytes of the manifest at each version; ``None`` where the version removed it.

    A caller who may not see every row gets the size of each version as it may see it (hidden
    rows removed), so a private row's edit does not show as a change of size.
    """
    if level is None or not hidden(level):
        return library.sizes(agent_id, [v.version_id for v in versions])
    return [_visible_size(library, agent_id, v.version_id, level) for v in versions]


@functools.lru_cache(maxsize=4096)  # a version never changes: its filtered size neither
def _visible_size(library: Library, agent_id: str, version_id: str, level: int) -> int | None:
    try:
        data = library.read(agent_id, version_id).data
    except NotFoundError:
        return None
    return len(yamlio.dump(filter_manifest(data, Visibility(level))))


# A write's subject, as ``store.writes.summary`` makes it: ``merge atlas: +2 ~1 -0 rows``.
_COUNTED: Final = re.compile(r"(?P<head>.*): \+\d+ ~\d+ -\d+ rows")


def _subjects(
    library: Library, agent_id: str, versions: list[Version], shown: int, level: int | None
) -> list[str]:
    """The subjects of the first ``shown`` versions; for a caller who may not see every row, a
    subject that counts rows counts only those it may see, so "+1" does not tell it that a
    private row was added. ``versions`` holds the state before the last one shown, if any.
    """
    subjects = [v.subject for v in versions[:shown]]
    if level is None or not hidden(level):
        return subjects
    for i, v in enumerate(versions[:shown]):
        found = _COUNTED.fullmatch(v.subject)
        if found is not None:
            before = versions[i + 1].version_id if i + 1 < len(versions) else None
            added, updated, removed = _visible_change(
                library, agent_id, before, v.version_id, level
            )
            subjects[i] = f"{found['head']}: +{added} ~{updated} -{removed} rows"
    return subjects


@functools.lru_cache(maxsize=4096)  # two versions never change: what changed between them neither
def _visible_change(
    library: Library, agent_id: str, before: str | None, after: str, level: int
) -> tuple[int, int, int]:
    try:
        if before is not None:
            changes = library.diff(agent_id, before, after, level)
        else:
            changes = compare(None, library.read(agent_id, after).data, level)
    except NotFoundError:
        return (0, 0, 0)
    return tuple(  # type: ignore[return-value]
        sum(len(rows) for rows in part.values())
        for part in (changes.added, changes.changed, changes.removed)
    )


def list_memory_versions(
    library: Library, agent_id: str, limit: int | None, level: int | None = None
) -> dict[str, Any]:
    size = clamp_limit(limit, DEFAULT_VERSIONS, MAX_VERSIONS)
    versions = library.history(agent_id, limit=size + 1)
    live = library.current_digest(agent_id)
    shown = versions[:size]
    subjects = _subjects(library, agent_id, versions, len(shown), level)
    rows = [
        {
            "agent_id": agent_id,
            **v.to_dict(),
            "subject": subjects[i],
            # The reference's snapshot fields: when (UTC, to the second) and how big.
            "taken_at": v.time,
            "size_bytes": bytes_at,
            # The reference lists only replaced states, so its clients undo the last write by
            # rolling back to the first entry: here that is the first one not marked current.
            "current": i == 0 and v.digest == live,
        }
        for i, (v, bytes_at) in enumerate(
            zip(shown, _sizes(library, agent_id, shown, level), strict=True)
        )
    ]
    return {
        "agent_id": agent_id,
        "versions": rows,
        "count": len(rows),
        "meta": {"limit": size, "truncated": len(versions) > size, "warnings": []},
    }


def _change_counts(changes: RowChanges) -> dict[str, int]:
    """The reference's ``counts`` of a write: only the kinds of change that happened."""
    out: dict[str, int] = {}
    for kind, part in (
        ("added", changes.added),
        ("updated", changes.changed),
        ("removed", changes.removed),
    ):
        for section, rows in part.items():
            if rows:
                out[f"{SHORT[section]}_{kind}"] = len(rows)
    return out


def _base_digest(library: Library, agent_id: str, version_id: str) -> str | None:
    """The digest of the state a version replaced (``None`` for the first one)."""
    versions = library.history(agent_id, limit=None)
    ids = [v.version_id for v in versions]
    at = ids.index(version_id) if version_id in ids else len(ids)
    return versions[at + 1].digest if at + 1 < len(versions) else None


def explain_memory_change(
    library: Library, agent_id: str, digest: str, level: int | None = None
) -> dict[str, Any]:
    """The write that produced ``digest``: bourdon's keys, and the reference's ``found`` and
    ``write`` (its provenance record). A digest no write produced is ``found: false``, as in the
    reference, not an error; an unknown agent is still a 404."""
    try:
        found = library.explain(agent_id, digest, level)
    except NotFoundError:
        library.history(agent_id, limit=1)  # raises for an agent that never had a manifest
        return {
            "agent_id": agent_id,
            "digest": digest,
            "found": False,
            "detail": "no recorded write produced that state",
            "meta": {"warnings": []},
        }
    v = found.version
    return {
        "agent_id": agent_id,
        "found": True,
        "digest": v.digest,
        "digest8": v.digest8,
        "version_id": v.version_id,
        "op": v.op,
        "caller": v.caller,
        "session_id": v.session,
        "transcript_ref": v.transcript,
        "stager": v.stager,
        "time": v.time,
        "changes": found.changes.to_dict(),
        "again_in": found.again_in,
        # An adopted state: the digest the reference itself knew it by (sha256 of the bytes).
        **({"reference_digest": v.reference_digest} if v.reference_digest else {}),
        "write": {
            "ts": v.time,
            "agent_id": agent_id,
            "op": "commit" if v.op in COMMIT_OPS else v.op,
            "caller": v.caller,
            "session_id": v.session,
            "transcript_ref": v.transcript,
            # A promoted write was a quarantined member's: the reference's taint floor.
            "taint_floor": "quarantined" if v.stager else "trusted",
            "base_digest": _base_digest(library, agent_id, v.version_id),
            "new_digest": v.digest,
            "counts": _change_counts(found.changes),
        },
        "meta": {"warnings": [ASSERTED]},
    }
