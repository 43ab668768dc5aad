"""The write and history surface: commit, versions, explain, rollback, as wire-shaped dicts.

One function per tool of the Bourdon reference (``commit_to_federation``,
``list_memory_versions``, ``explain_memory_change``, ``rollback_agent_memory``), over the
``Library``. Authorization is decided before these are called (``policy``); they only need to
know whether a write is staged, and the widest visibility the caller may see (``level``:
``None`` for the local operator), so no count in an answer includes a row hidden from it.

Every answer carries the reference's keys with the reference's meaning (issue 11: clients
written for it read ``entities_added``, ``total_notes``, ``found``, ``restored_version``...)
next to bourdon's own.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from bourdon.access.visibility import filter_manifest
from bourdon.digest import digest8
from bourdon.errors import ConflictError, InputError, NotFoundError
from bourdon.formats import yamlio
from bourdon.merge.twoway import RowChanges, compare
from bourdon.model import ENTITIES, NOTES, ROW_SECTIONS, SESSIONS, WORKSTREAMS, Visibility
from bourdon.query.reads import clamp_limit
from bourdon.store.history import Version
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.store.writes import WriteResult

DEFAULT_VERSIONS: Final = 20
MAX_VERSIONS: Final = 100
ASSERTED: Final = "session_id and transcript_ref are asserted by the caller and not verified"
# The reference names its per-section counts by these short names: entities_added, total_notes.
SHORT: Final = {
    ENTITIES: "entities",
    SESSIONS: "sessions",
    WORKSTREAMS: "workstreams",
    NOTES: "notes",
}
# The reference's provenance says "commit" for what bourdon records as a merge or a replace.
COMMIT_OPS: Final = frozenset({"merge", "replace"})


def build_change(
    agent_type: str | None,
    instance: str | None,
    role_narrative: str | None,
    entities: list[dict[str, Any]] | None,
    sessions: list[dict[str, Any]] | None,
    workstreams: list[dict[str, Any]] | None,
    notes: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    """The tool's parameters as a change in the manifest's shape."""
    change: dict[str, Any] = {}
    agent = {
        k: v
        for k, v in (
            ("type", agent_type),
            ("instance", instance),
            ("role_narrative", role_narrative),
        )
        if v is not None
    }
    if agent:
        change["agent"] = agent
    for section, rows in (
        (ENTITIES, entities),
        (SESSIONS, sessions),
        (WORKSTREAMS, workstreams),
        (NOTES, notes),
    ):
        if rows is None:
            continue
        if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
            raise InputError(f"{section} must be a list of objects")
        if section == WORKSTREAMS:
            # A missing status means "active" for a new workstream (merge fills it in) and
            # "unchanged" for an existing one.
            rows = [{k: v for k, v in r.items() if not (k == "status" and v is None)} for r in rows]
        change[section] = rows
    return change


@dataclass(frozen=True)
class CountsOf:
    """Per-section row counts of one write: added, updated, removed, and rows after it."""

    added: dict[str, int]
    updated: dict[str, int]
    removed: dict[str, int]
    totals: dict[str, int]

    def reference_keys(self) -> dict[str, int]:
        """``entities_added`` ... ``notes_updated``, then ``total_entities`` ... ``total_notes``."""
        out: dict[str, int] = {}
        for section, short in SHORT.items():
            out[f"{short}_added"] = self.added.get(section, 0)
            out[f"{short}_updated"] = self.updated.get(section, 0)
        for section, short in SHORT.items():
            out[f"total_{short}"] = self.totals.get(section, 0)
        return out

    def summary(self) -> dict[str, int]:
        """Rows added, updated and removed over the four sections."""
        return {
            "added": sum(self.added.values()),
            "updated": sum(self.updated.values()),
            "removed": sum(self.removed.values()),
        }


def _hidden(level: int | None) -> bool:
    """Whether the caller may not see every row (anyone but the local operator)."""
    return level is not None and level < Visibility.PRIVATE


def _visible_totals(data: Mapping[str, Any], level: int | None) -> dict[str, int]:
    shown = (
        filter_manifest(data, Visibility(level)) if level is not None and _hidden(level) else data
    )
    return {s: len(shown.get(s) or []) for s in ROW_SECTIONS}


def _counts(library: Library, result: WriteResult, level: int | None) -> CountsOf:
    """Rows added, updated and removed by a write, and rows after it, as the caller may see them.

    The merge's own counts are exact for the local operator and for a staged write (a staging
    file holds only the member's own rows). For anyone else the write is compared again with
    the rows above its level left out: "1 updated" must not tell it a private row exists.
    """
    if not _hidden(level) or result.staged:
        stats = result.stats
        totals = {s: result.totals.get(s, 0) for s in ROW_SECTIONS}
        return CountsOf(dict(stats.added), dict(stats.updated), dict(stats.removed), totals)
    after = library.read(result.agent_id, result.version).data
    if result.no_op:
        return CountsOf({}, {}, {}, _visible_totals(after, level))
    before = (
        library.read(result.agent_id, result.previous_version).data
        if result.previous_version and not result.created
        else None
    )
    changes = compare(before, after, level)
    return CountsOf(
        {s: len(r) for s, r in changes.added.items()},
        {s: len(r) for s, r in changes.changed.items()},
        {s: len(r) for s, r in changes.removed.items()},
        _visible_totals(after, level),
    )


def commit_summary(
    result: WriteResult, library: Library, *, level: int | None = None, local: bool = True
) -> dict[str, Any]:
    """The write summary of the reference (its counts, ``path``, ``mode``, ``last_updated``,
    ``digest``) and bourdon's (totals over the sections, versions, ``created``, ``staged``).

    ``local``: the caller is on this machine, so ``path`` is absolute as in the reference; a
    caller over the network gets it relative to the library (no server path leaves it).
    """
    counts = _counts(library, result, level)
    out: dict[str, Any] = {
        "agent_id": result.agent_id,
        "path": str(library.root / result.path) if local else result.path,
        "mode": result.op if result.op in ("merge", "replace") else "merge",
        **counts.reference_keys(),
        **counts.summary(),
        "total": sum(counts.totals.values()),
        "counts": counts.totals,
        "last_updated": result.last_updated,
        "digest": result.digest,
        "digest8": digest8(result.digest),
        "previous_digest": result.previous_digest,
        "version_id": result.version,
        "created": result.created,
        "staged": result.staged,
    }
    if result.no_op:
        out["no_op"] = True
    if result.staged:
        promote = f"bourdon staging promote {result.agent_id} --from {result.path.split('/')[1]}"
        out["review"] = f"staged for the operator: {promote}"
        # The reference's words for the same thing, under the key its clients read.
        out["note"] = (
            f"quarantined write staged for review; an operator must run `{promote}` "
            "before it is served"
        )
    return out


def stale(
    exc: ConflictError, agent_id: str, expected_digest: str | None, **more: Any
) -> ConflictError:
    """The conflict again, carrying what the reference's stale-write answer names.

    The server lifts ``agent_id``, ``expected_digest``, ``current_digest`` (and ``mode``) to the
    top level of the tool error, where clients of the reference read them.
    """
    return ConflictError(
        exc.message,
        exc.current_digest,
        agent_id=agent_id,
        expected_digest=expected_digest,
        **more,
    )


def commit_to_federation(
    library: Library,
    agent_id: str,
    change: Mapping[str, Any],
    *,
    mode: str,
    expected_digest: str | None,
    provenance: Provenance,
    staged: bool,
    level: int | None = None,
    local: bool = True,
) -> dict[str, Any]:
    if staged:
        if mode != "merge":
            raise InputError("a quarantined member can only merge; replace needs a trusted member")
        result = library.stage(provenance.caller, agent_id, change, provenance)
    else:
        try:
            result = library.commit(
                agent_id, change, mode=mode, expected_digest=expected_digest, provenance=provenance
            )
        except ConflictError as exc:
            raise stale(exc, agent_id, expected_digest, mode=mode) from exc
    return commit_summary(result, library, level=level, local=local)


def _sizes(
    library: Library, agent_id: str, versions: list[Version], level: int | None
) -> list[int | None]:
    """Bytes of the manifest at each version; ``None`` where the version removed it.

    A caller who may not see every row gets the size of each version as it may see it (hidden
    rows removed), so a private row's edit does not show as a change of size.
    """
    if level is None or not _hidden(level):
        return library.sizes(agent_id, [v.version_id for v in versions])
    return [_visible_size(library, agent_id, v.version_id, level) for v in versions]


@functools.lru_cache(maxsize=4096)  # a version never changes: its filtered size neither
def _visible_size(library: Library, agent_id: str, version_id: str, level: int) -> int | None:
    try:
        data = library.read(agent_id, version_id).data
    except NotFoundError:
        return None
    return len(yamlio.dump(filter_manifest(data, Visibility(level))))


def list_memory_versions(
    library: Library, agent_id: str, limit: int | None, level: int | None = None
) -> dict[str, Any]:
    size = clamp_limit(limit, DEFAULT_VERSIONS, MAX_VERSIONS)
    versions = library.history(agent_id, limit=size + 1)
    live = library.current_digest(agent_id)
    shown = versions[:size]
    rows = [
        {
            "agent_id": agent_id,
            **v.to_dict(),
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


def wants_preview(dry_run: bool, confirm: bool | None, expected_digest: str | None) -> bool:
    """A plain call rolls back, as in the reference; ``dry_run`` asks for a preview.

    Before issue 11 a call without ``expected_digest`` or ``confirm=true`` only previewed, so a
    caller that still passes ``confirm=false`` explicitly is asking for that preview.
    """
    return dry_run or (confirm is False and expected_digest is None)


def rollback_agent_memory(
    library: Library,
    agent_id: str,
    version_id: str,
    *,
    expected_digest: str | None,
    provenance: Provenance,
    dry_run: bool = False,
    confirm: bool | None = None,
    level: int | None = None,
) -> dict[str, Any]:
    """Restore ``version_id`` as a new, undoable commit; or only preview it (``wants_preview``).

    ``level`` hides rows above that visibility from the preview (callers over the network).
    """
    if wants_preview(dry_run, confirm, expected_digest):
        current = library.current_digest(agent_id)
        changes = library.diff(agent_id, library.head() or "", version_id, level)
        return {
            "agent_id": agent_id,
            "version_id": version_id,
            "preview": True,
            "current_digest": current,
            "would_change": changes.to_dict(),
            "next": "call again without dry_run (with expected_digest set to current_digest, "
            "so a write made meanwhile is not lost) to restore this version; nothing was written",
        }
    try:
        result = library.rollback(
            agent_id, version_id, expected_digest=expected_digest, provenance=provenance
        )
    except ConflictError as exc:
        raise stale(exc, agent_id, expected_digest) from exc
    return {
        "agent_id": agent_id,
        "version_id": version_id,
        # The reference's keys: the version restored, the file, the digests replaced and now.
        "restored_version": version_id,
        "path": result.path,
        "replaced_digest": result.previous_digest,
        "digest": result.digest,
        "rolled_back": not result.no_op,
        "new_version_id": result.version,
        "previous_digest": result.previous_digest,
        "restored": _counts(library, result, level).summary(),
        "undo": f"rollback_agent_memory(agent_id={agent_id!r}, "
        f"version_id={result.previous_version!r})"
        if not result.no_op
        else None,
    }
