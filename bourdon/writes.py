"""The write and history surface: commit, versions, explain, rollback, as wire-shaped dicts.

One function per tool of the Bourdon reference (``commit_to_federation``,
``list_memory_versions``, ``explain_memory_change``, ``rollback_agent_memory``), over the
``Library``. Authorization is decided before these are called (``policy``); they only need to
know whether a write is staged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from bourdon.digest import digest8
from bourdon.errors import InputError
from bourdon.library import Library, Provenance, WriteResult
from bourdon.model import ENTITIES, NOTES, SESSIONS, WORKSTREAMS
from bourdon.reads import clamp_limit

DEFAULT_VERSIONS: Final = 20
MAX_VERSIONS: Final = 100
ASSERTED: Final = "session_id and transcript_ref are asserted by the caller and not verified"


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


def commit_summary(result: WriteResult, library: Library) -> dict[str, Any]:
    """The write summary of the reference: counts, path, agent identity, last_updated."""
    out: dict[str, Any] = {
        "agent_id": result.agent_id,
        "mode": result.op if result.op in ("merge", "replace") else "merge",
        "added": result.stats.total_added,
        "updated": result.stats.total_updated,
        "removed": result.stats.total_removed,
        "total": result.totals.get("total", 0),
        "counts": {k: v for k, v in result.totals.items() if k != "total"},
        "path": result.path,
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
        out["review"] = (
            f"staged for the operator: bourdon staging promote {result.agent_id} "
            f"--from {result.path.split('/')[1]}"
        )
    return out


def commit_to_federation(
    library: Library,
    agent_id: str,
    change: Mapping[str, Any],
    *,
    mode: str,
    expected_digest: str | None,
    provenance: Provenance,
    staged: bool,
) -> dict[str, Any]:
    if staged:
        if mode != "merge":
            raise InputError("a quarantined member can only merge; replace needs a trusted member")
        result = library.stage(provenance.caller, agent_id, change, provenance)
    else:
        result = library.commit(
            agent_id, change, mode=mode, expected_digest=expected_digest, provenance=provenance
        )
    return commit_summary(result, library)


def list_memory_versions(library: Library, agent_id: str, limit: int | None) -> dict[str, Any]:
    size = clamp_limit(limit, DEFAULT_VERSIONS, MAX_VERSIONS)
    versions = library.history(agent_id, limit=size + 1)
    return {
        "agent_id": agent_id,
        "versions": [v.to_dict() for v in versions[:size]],
        "meta": {"limit": size, "truncated": len(versions) > size, "warnings": []},
    }


def explain_memory_change(
    library: Library, agent_id: str, digest: str, level: int | None = None
) -> dict[str, Any]:
    found = library.explain(agent_id, digest, level)
    v = found.version
    return {
        "agent_id": agent_id,
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
        "meta": {"warnings": [ASSERTED]},
    }


def rollback_agent_memory(
    library: Library,
    agent_id: str,
    version_id: str,
    *,
    expected_digest: str | None,
    confirm: bool,
    provenance: Provenance,
    level: int | None = None,
) -> dict[str, Any]:
    """Preview unless ``expected_digest`` or ``confirm`` is given; then restore, undoably.

    ``level`` hides rows above that visibility from the preview (callers over the network).
    """
    current = library.current_digest(agent_id)
    if expected_digest is None and not confirm:
        changes = library.diff(agent_id, library.head() or "", version_id, level)
        return {
            "agent_id": agent_id,
            "version_id": version_id,
            "preview": True,
            "current_digest": current,
            "would_change": changes.to_dict(),
            "next": "call again with expected_digest set to current_digest (or confirm=true) "
            "to restore this version; nothing was written",
        }
    result = library.rollback(
        agent_id, version_id, expected_digest=expected_digest, provenance=provenance
    )
    return {
        "agent_id": agent_id,
        "version_id": version_id,
        "rolled_back": not result.no_op,
        "new_version_id": result.version,
        "digest": result.digest,
        "previous_digest": result.previous_digest,
        "restored": {
            "added": result.stats.total_added,
            "updated": result.stats.total_updated,
            "removed": result.stats.total_removed,
        },
        "undo": f"rollback_agent_memory(agent_id={agent_id!r}, "
        f"version_id={result.previous_version!r})"
        if not result.no_op
        else None,
    }
