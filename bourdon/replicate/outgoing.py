"""What a sync sends: each live manifest, filtered to the remote's visibility, that the remote
does not hold yet (``outgoing``), and this side's own state before it integrated the remote's
(``original``), so a merge keeps both originals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bourdon.access.visibility import filter_manifest
from bourdon.digest import digest
from bourdon.errors import ManifestError
from bourdon.formats import yamlio
from bourdon.model import AGENTS_DIR, ROW_SECTIONS, SUFFIX, Visibility
from bourdon.replicate.published import PublishedCache, agent_files
from bourdon.replicate.remotes import keeps_home
from bourdon.replicate.report import Sent, SyncReport

if TYPE_CHECKING:
    from bourdon.store.library import Library


def original(
    library: Library,
    level: Visibility,
    base: str | None,
    head: str | None,
    machine: str,
    digests: PublishedCache,
    remote: str = "",
) -> str | None:
    """A published commit of this library's state before it integrated the remote's.

    When both sides changed since ``base``, the commit sent is a merge of the remote's state
    and this one, so the remote's history (and every library that syncs with it) keeps both
    originals next to the integration, as git keeps both sides of a merge.
    """
    scratch = SyncReport(remote, False, str(level))
    before = outgoing(library, level, base, {}, scratch, head, digests)
    if not before:
        return None
    subject = f"publish {len(before)} agent(s) from {machine}, before integrating"
    return library.write_published(before, base, subject, machine)


def outgoing(
    library: Library,
    level: Visibility,
    theirs: str | None,
    overlay: dict[str, dict[str, Any]],
    report: SyncReport,
    head: str | None,
    cache: PublishedCache,
) -> dict[str, bytes]:
    """``path -> bytes`` of each manifest at ``head``, published, that ``theirs`` lacks."""
    there = agent_files(library, theirs)
    here = agent_files(library, head)
    changes: dict[str, bytes] = {}
    home = keeps_home(library.repo, report.remote) if report.remote else False
    for filename in sorted({*here, *overlay_files(overlay)}):
        agent_id = filename[: -len(SUFFIX)]
        blob, key = here.get(filename), f"{level}{'+home' if home else ''}:{here.get(filename)}"
        remote = RemoteDigest(library, theirs, agent_id, there.get(filename), cache)
        if agent_id not in overlay and remote.holds(cache.get(key)):
            continue  # published already, unchanged since
        try:
            data = overlay.get(agent_id) or library.manifest_at(head, agent_id)
        except ManifestError as exc:
            report.skipped.append({"file": f"{AGENTS_DIR}/{filename}", "reason": exc.message})
            continue
        if data is None:
            continue
        published = filter_manifest(data, level, keep_home=home)
        published_digest = digest(published)
        if blob and agent_id not in overlay:
            cache.put(key, published_digest)
        if remote.holds(published_digest):
            continue
        raw = yamlio.dump(published)
        changes[f"{AGENTS_DIR}/{filename}"] = raw
        cache.put(f"blob:{library.repo.blob_id(raw)}", published_digest)  # the remote's, soon
        rows, total = _rows(published), _rows(data)
        within = _rows(filter_manifest(data, level)) if home else rows
        report.sent.append(Sent(agent_id, rows, total - within, within - rows))
    cache.save()
    return changes


class RemoteDigest:
    """The digest of the remote's version of one agent, looked up only when needed."""

    def __init__(
        self,
        library: Library,
        theirs: str | None,
        agent_id: str,
        blob: str | None,
        cache: PublishedCache,
    ) -> None:
        self.library, self.theirs, self.agent_id = library, theirs, agent_id
        self.blob, self.cache = blob, cache

    def holds(self, published: str | None) -> bool:
        """Does the remote hold this published content already (``last_updated`` aside)?"""
        if published is None or self.theirs is None or self.blob is None:
            return False
        key = f"blob:{self.blob}"
        found = self.cache.get(key)
        if found is None:
            try:
                found = self.library.digest_at(self.theirs, self.agent_id)
            except ManifestError:
                return False
            if found is not None:
                self.cache.put(key, found)
        return found == published


def overlay_files(overlay: dict[str, dict[str, Any]]) -> list[str]:
    return [f"{agent_id}{SUFFIX}" for agent_id in overlay]


def _rows(data: Mapping[str, Any]) -> int:
    return sum(len(data.get(s) or []) for s in ROW_SECTIONS)
