"""Staging: quarantined writes waiting in ``staging/<caller>/<agent>.l5.yaml`` for review.

A staged write is committed like any other (so it is in history), but never served until it
is promoted into the live manifest; rejecting it deletes the file in a commit of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bourdon.digest import digest
from bourdon.errors import InputError, NotFoundError
from bourdon.model import ROW_SECTIONS, SUFFIX
from bourdon.store.history import iso
from bourdon.store.layout import STAGING
from bourdon.store.manifests import Manifests

# What promotion passes a staged write through, handed in by a caller above the store (the CLI
# gives secret redaction, which the store cannot import).
Clean = Callable[[dict[str, Any]], dict[str, Any]] | None


@dataclass(frozen=True)
class StagedWrite:
    """A quarantined write waiting in ``staging/<caller>/<agent>.l5.yaml``."""

    caller: str
    agent_id: str
    path: str
    rows: int
    staged_at: str | None
    digest: str


def list_staged(manifests: Manifests) -> list[StagedWrite]:
    """Every write waiting in staging at HEAD, oldest first."""
    repo = manifests.repo
    head = repo.head()
    if head is None:
        return []
    out = []
    for path in repo.list_files(head, STAGING):
        parts = path.split("/")
        if len(parts) != 3 or not parts[2].endswith(SUFFIX):
            continue
        found = manifests.blob(path, head)
        if found is None:
            continue
        data = manifests.parse(found[0], found[1], path)
        last = repo.log(path, 1)
        out.append(
            StagedWrite(
                caller=parts[1],
                agent_id=parts[2][: -len(SUFFIX)],
                path=path,
                rows=sum(len(data.get(s) or []) for s in ROW_SECTIONS),
                staged_at=iso(last[0].time) if last else None,
                digest=digest(data),
            )
        )
    return sorted(out, key=lambda s: (s.staged_at or "", s.path))


def staged_caller(staged: list[StagedWrite], agent_id: str, caller: str | None) -> str:
    """Whose staged write of ``agent_id`` is meant: ``caller`` if it staged one, else the only
    caller that did; several callers, or none, is the user's to resolve."""
    callers = [s.caller for s in staged if s.agent_id == agent_id]
    if caller:
        if caller not in callers:
            raise NotFoundError(
                f"{caller!r} has no staged write for {agent_id!r}; see 'bourdon staging list'"
            )
        return caller
    if not callers:
        raise NotFoundError(f"nothing is staged for {agent_id!r}; see 'bourdon staging list'")
    if len(callers) > 1:
        raise InputError(
            f"several callers staged {agent_id!r} ({', '.join(callers)}); pick one with --from"
        )
    return callers[0]
