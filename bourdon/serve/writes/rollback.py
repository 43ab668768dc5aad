"""``rollback_agent_memory``: restore an archived version as a new, undoable commit, or preview
it."""

from __future__ import annotations

from typing import Any

from bourdon.errors import ConflictError, InputError
from bourdon.serve.writes.commit import stale
from bourdon.serve.writes.counts import visible_counts
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance


def require_digest(expected_digest: str | None) -> None:
    """An ``expected_digest`` that is given must name a digest: an empty one would quietly turn
    the lost-update check off (omit it, or pass ``null``, to write without the check)."""
    if expected_digest is not None and not expected_digest.strip():
        raise InputError(
            "expected_digest is empty; pass the digest you read (current_digest), or omit "
            "expected_digest to write without the lost-update check"
        )


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
    if not isinstance(version_id, str) or not version_id.strip():
        raise InputError(
            "version_id is empty; pass a version_id from list_memory_versions (the version to "
            "restore)"
        )
    require_digest(expected_digest)
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
        "restored": visible_counts(library, result, level).summary(),
        "undo": f"rollback_agent_memory(agent_id={agent_id!r}, "
        f"version_id={result.previous_version!r})"
        if not result.no_op
        else None,
    }
