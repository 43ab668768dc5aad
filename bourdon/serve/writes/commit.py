"""``commit_to_federation``: a contribution as one commit (or a staged write), and its summary."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from bourdon.access.redact import redacted
from bourdon.digest import digest8
from bourdon.errors import ConflictError, InputError
from bourdon.model import ENTITIES, NOTES, SESSIONS, WORKSTREAMS
from bourdon.serve.writes import clamp
from bourdon.serve.writes.counts import CountsOf, commit_counts, visible_counts
from bourdon.serve.writes.rows import checked_rows, raise_if_any
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance, writer
from bourdon.store.writes import WriteResult


def build_change(
    agent_type: str | None,
    instance: str | None,
    role_narrative: str | None,
    entities: list[dict[str, Any]] | None,
    sessions: list[dict[str, Any]] | None,
    workstreams: list[dict[str, Any]] | None,
    notes: list[dict[str, Any]] | None,
    *,
    today: datetime.date | None = None,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """The tool's parameters as a change in the manifest's shape, each row checked on its own
    (``rows.checked_rows``: problems at the caller's index; undated notes and sessions dated
    ``today``, said in ``warnings``)."""
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
    said = warnings if warnings is not None else []
    problems: list[str] = []
    for section, given in (
        (ENTITIES, entities),
        (SESSIONS, sessions),
        (WORKSTREAMS, workstreams),
        (NOTES, notes),
    ):
        if given is None:
            continue
        rows = checked_rows(section, given, today or datetime.date.today(), said, problems)
        if section == WORKSTREAMS:
            # A missing status means "active" for a new workstream (merge fills it in) and
            # "unchanged" for an existing one.
            rows = [{k: v for k, v in r.items() if not (k == "status" and v is None)} for r in rows]
        change[section] = rows
    raise_if_any(problems)
    return change


def commit_summary(
    result: WriteResult,
    library: Library,
    *,
    level: int | None = None,
    local: bool = True,
    counted: CountsOf | None = None,
) -> dict[str, Any]:
    """The write summary of the reference (its counts, ``path``, ``mode``, ``last_updated``,
    ``digest``) and bourdon's (totals over the sections, versions, ``created``, ``staged``).

    ``local``: the caller is on this machine, so ``path`` is absolute as in the reference; a
    caller over the network gets it relative to the library (no server path leaves it).
    """
    counted = counted or visible_counts(library, result, level)
    out: dict[str, Any] = {
        "agent_id": result.agent_id,
        "path": str(library.root / result.path) if local else result.path,
        "mode": result.op if result.op in ("merge", "replace") else "merge",
        **counted.reference_keys(),
        **counted.summary(),
        "total": sum(counted.totals.values()),
        "counts": counted.totals,
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
    on_clamp: str = "spill",
    warnings: list[str] | None = None,
    today: datetime.date | None = None,
) -> dict[str, Any]:
    """Commit (or stage) ``change``; ``on_clamp`` says what becomes of list items a merge
    drops past their limit (``clamp``). The answer's ``meta.warnings`` carries ``warnings``."""
    clamp.check_mode(on_clamp)
    change = redacted(change)  # before staging or committing: nothing secret reaches git
    evicted = clamp.evictions(library, agent_id, change, mode, level)
    if evicted and on_clamp == "reject":
        raise clamp.refuse(evicted)
    if evicted and on_clamp == "spill":
        change = clamp.with_spill(
            change, clamp.spill_notes(evicted, today or datetime.date.today())
        )
    if staged:
        if mode != "merge":
            raise InputError("a quarantined member can only merge; replace needs a trusted member")
        try:
            result = library.stage(provenance.caller, agent_id, change, provenance, expected_digest)
        except ConflictError as exc:
            raise stale(exc, agent_id, expected_digest, mode=mode) from exc
    else:
        try:
            result = library.commit(
                agent_id, change, mode=mode, expected_digest=expected_digest, provenance=provenance
            )
        except ConflictError as exc:
            raise stale(exc, agent_id, expected_digest, mode=mode) from exc
    source = writer(provenance, library.machine).source()
    counted = commit_counts(library, result, level, change, mode, source)
    out = commit_summary(result, library, level=level, local=local, counted=counted)
    if evicted:
        out["list_items_evicted"] = clamp.public(evicted)
    out["meta"] = {"on_clamp": on_clamp, "warnings": list(warnings or [])}
    return out
