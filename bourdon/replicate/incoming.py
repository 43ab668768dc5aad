"""What a sync receives: each agent the remote changed since the state both sides last agreed
on, as (base, remote) versions to integrate three-way, and the counts of a received change.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from bourdon.access.redact import redacted, redacted_or_none
from bourdon.errors import InputError, ManifestError
from bourdon.merge.threeway import Conflict
from bourdon.merge.twoway import compare
from bourdon.model import AGENTS_DIR, SUFFIX, check_agent_id
from bourdon.replicate.published import PublishedCache, agent_files
from bourdon.replicate.report import Received, SyncReport

if TYPE_CHECKING:
    from bourdon.store.library import Library


def incoming(
    library: Library,
    base: str | None,
    theirs: str | None,
    report: SyncReport,
    digests: PublishedCache,
) -> Iterator[tuple[str, dict[str, Any] | None, dict[str, Any]]]:
    """(agent, base version, remote version) of each agent the remote changed since ``base``."""
    if theirs is None or theirs == base:
        return
    before = agent_files(library, base)
    for filename, blob in agent_files(library, theirs).items():
        if before.get(filename) == blob:
            continue
        agent_id = filename[: -len(SUFFIX)]
        try:
            check_agent_id(agent_id)
            after = library.manifest_at(theirs, agent_id)
        except (InputError, ManifestError) as exc:
            report.skipped.append({"file": f"{AGENTS_DIR}/{filename}", "reason": exc.message})
            continue
        if after is None:
            continue
        if after.get("agent", {}).get("id") != agent_id:
            report.skipped.append(
                {"file": f"{AGENTS_DIR}/{filename}", "reason": "names another agent inside"}
            )
            continue
        digests.put(f"blob:{blob}", library.digest_at(theirs, agent_id) or "")
        older = None
        if filename in before:
            with contextlib.suppress(ManifestError):
                older = library.manifest_at(base, agent_id)
        yield agent_id, redacted_or_none(older), redacted(after)  # what a remote sent is redacted


def current_manifest(library: Library, agent_id: str) -> dict[str, Any] | None:
    try:
        return library.manifest_at(library.head(), agent_id)
    except ManifestError:
        return None


def as_received(
    agent_id: str,
    current: dict[str, Any] | None,
    result: dict[str, Any],
    version: str | None,
    conflicts: list[Conflict] | None = None,
) -> Received:
    changes = compare(current, result)
    return Received(
        agent_id,
        sum(map(len, changes.added.values())),
        sum(map(len, changes.changed.values())),
        sum(map(len, changes.removed.values())),
        version,
        [c.to_dict() for c in conflicts or []],
    )
