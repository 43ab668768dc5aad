"""Replication through any git remote: fetch, integrate, publish, push; never interactive.

What a remote holds is one branch, ``bourdon/published``: the library's live manifests filtered
to the visibility the remote is configured for (``team`` by default). That branch has a history
of its own, made only of filtered commits, so no private row, staged write or ``.bourdon/``
file is ever in an object the remote can reach.

One sync with a remote:

1. **fetch** its published branch (``refs/bourdon/incoming/<name>``);
2. **integrate** each agent the remote changed since the last agreed state (``refs/bourdon/
   synced/<name>``): ``Library.integrate`` merges three-way, row by row, as one commit per agent
   whose second parent is the remote's commit; every row both sides changed is reported
   (``Received.conflicts``) and named in that commit's ``Bourdon-Conflict`` trailers;
3. **publish**: a commit on top of the remote's, holding the filtered manifests that differ;
4. **push** it as a fast-forward. If the remote moved on meanwhile, start again at 1, at most
   ``attempts`` times.

Each step leaves the library consistent if the process dies: integration commits go through the
library's write protocol, the published commit is only objects until the push, and the refs
move last, so the next sync redoes whatever was not finished.

This module runs the rounds; what is received is in ``incoming``, what is sent in ``outgoing``,
the caches between runs in ``published``, the remotes themselves in ``remotes``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any, Final

import filelock

from bourdon.errors import BourdonError, BusyError, GitError
from bourdon.merge.threeway import Conflict, merge3
from bourdon.model import LOCAL_DIR, Visibility
from bourdon.replicate import state as syncstate
from bourdon.replicate.incoming import as_received, current_manifest, incoming
from bourdon.replicate.outgoing import original, outgoing
from bourdon.replicate.published import PublishedCache
from bourdon.replicate.remotes import remote_names
from bourdon.replicate.report import Received, SyncReport
from bourdon.replicate.state import BRANCH, incoming_ref, synced_ref
from bourdon.store.git.rewrite import prune_local
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance

ATTEMPTS: Final = 5
TIMEOUT: Final = 120.0

Progress = Callable[[str], None]
# (remote, its report or None, its error or None): one sync ended.
OnResult = Callable[[str, SyncReport | None, BourdonError | None], None]


def sync(
    library: Library,
    name: str,
    *,
    machine: str | None = None,
    dry_run: bool = False,
    attempts: int = ATTEMPTS,
    timeout: float = TIMEOUT,
    progress: Progress | None = None,
) -> SyncReport:
    """Exchange changes with one remote; see the module's docstring. Records the outcome.

    ``machine`` names this side in the commits it writes (default: the library's machine).
    """
    remote_names(library, name)
    machine = machine or library.machine
    say = progress or (lambda _: None)
    level = syncstate.visibility_of(library.repo, name)
    report = SyncReport(name, dry_run, str(level))
    if not dry_run:
        syncstate.record_attempt(library.root, name)
    try:
        with _one_sync_at_a_time(library, timeout):
            return _sync(library, name, machine, level, report, attempts, timeout, say)
    except BourdonError as exc:
        if not dry_run:
            syncstate.record_failure(library.root, name, exc.message)
        raise


@contextlib.contextmanager
def _one_sync_at_a_time(library: Library, timeout: float) -> Iterator[None]:
    """Two syncs of one library would race on its sync refs; the second waits its turn."""
    path = library.root / LOCAL_DIR / "sync" / "lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(path), thread_local=False)
    try:
        lock.acquire(timeout=timeout)
    except filelock.Timeout:
        raise BusyError(
            f"another sync of this library has run for over {timeout:g} s; try again later"
        ) from None
    try:
        yield
    finally:
        lock.release()


def _sync(
    library: Library,
    name: str,
    machine: str,
    level: Visibility,
    report: SyncReport,
    attempts: int,
    timeout: float,
    say: Progress,
) -> SyncReport:
    """Rounds of fetch-integrate-publish-push until one pushes (or nothing needs sending)."""
    while report.attempts < attempts:
        report.attempts += 1
        if _round(library, name, machine, level, report, timeout, say):
            if not report.dry_run:
                syncstate.record_success(library.root, name, library.head())
            return report
        say(f"{name} moved on while this sync was pushing; integrating again")
    raise GitError(
        f"{name} kept moving: the push was refused {attempts} times; "
        f"run 'bourdon sync {name}' again"
    )


def _round(
    library: Library,
    name: str,
    machine: str,
    level: Visibility,
    report: SyncReport,
    timeout: float,
    say: Progress,
) -> bool:
    """One fetch-integrate-publish-push; ``False`` when the push lost a race."""
    repo = library.repo
    # After a purge the remote holds the old history: it is not fetched back (it would bring
    # the purged objects in again); the rewritten copy of it is the remote's state.
    force = syncstate.purged(library.root, name)
    if force:
        theirs = repo.read_ref(incoming_ref(name))
    else:
        say(f"fetching {name}")
        theirs = repo.fetch(name, BRANCH, incoming_ref(name), timeout)
    report.remote_commit = theirs
    base = repo.read_ref(synced_ref(name))
    report.sent, report.skipped = [], []  # what was received in a lost round stays received
    received = len(report.received)
    merged: dict[str, dict[str, Any]] = {}
    head_before = library.head()
    digests = PublishedCache(library)
    for agent_id, before, after in incoming(library, base, theirs, report, digests):
        conflicts: list[Conflict] = []
        if report.dry_run:
            current = current_manifest(library, agent_id)
            result = (
                merge3(before, current, after, conflicts) if current is not None else dict(after)
            )
            merged[agent_id] = result
            report.received.append(as_received(agent_id, current, result, None, conflicts))
            continue
        assert theirs is not None
        say(f"integrating {agent_id}")
        done = library.integrate(
            agent_id,
            before,
            after,
            remote=name,
            theirs_commit=theirs,
            provenance=_provenance(name, machine),
            conflicts=conflicts,
        )
        if not done.no_op:
            stats = done.stats
            report.received.append(
                Received(
                    agent_id,
                    stats.total_added,
                    stats.total_updated,
                    stats.total_removed,
                    done.version,
                    [c.to_dict() for c in conflicts],
                )
            )
    if theirs and theirs != base and not report.dry_run:
        repo.set_ref(synced_ref(name), theirs)  # all of it is integrated now
    changes = outgoing(library, level, theirs, merged, report, library.head(), digests)
    if report.dry_run:
        return True
    if not changes:
        if force and theirs is not None:
            _force(library, name, theirs, timeout, say)
        if force:
            syncstate.save_state(library.root, name, purged=False)
        return True
    say(f"pushing {len(changes)} manifest{'' if len(changes) == 1 else 's'} to {name}")
    own = None
    if len(report.received) > received:
        own = original(library, level, base, head_before, machine, digests, name)
    subject = f"publish {len(changes)} agent(s) from {machine}"
    commit = library.write_published(changes, theirs, subject, machine, merged=own)
    if force:
        _force(library, name, commit, timeout, say)
        syncstate.save_state(library.root, name, purged=False)
    elif not repo.push(name, commit, BRANCH, timeout):
        return False
    report.pushed = commit
    repo.set_ref(incoming_ref(name), commit)
    repo.set_ref(synced_ref(name), commit)
    return True


def _force(library: Library, name: str, commit: str, timeout: float, say: Progress) -> None:
    """Replace the remote's published branch with the purged history; prune a local remote."""
    say(f"force-updating {name}'s published branch after a purge")
    library.repo.push(name, commit, BRANCH, timeout, force=True)
    url = library.repo.remotes().get(name, "")
    if url and "://" not in url and prune_local(url):
        say(f"pruned the purged objects in {url}")


def _provenance(name: str, machine: str) -> Provenance:
    return Provenance(caller=f"sync:{name}", machine=machine)


def sync_each(
    library: Library,
    names: list[str],
    *,
    on_result: OnResult,
    dry_run: bool = False,
    timeout: float = TIMEOUT,
    progress: Progress | None = None,
) -> None:
    """Sync with each remote of ``names`` in turn; a failure is reported, and the next goes on."""
    for name in names:
        try:
            report = sync(library, name, dry_run=dry_run, timeout=timeout, progress=progress)
        except BourdonError as exc:
            on_result(name, None, exc)
        else:
            on_result(name, report, None)


def watch(
    library_opener: Callable[[], Library],
    names: list[str] | None,
    *,
    interval: float,
    rounds: int | None,
    on_result: OnResult,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Sync every ``interval`` seconds until interrupted (or ``rounds`` rounds).

    A failure is recorded in the remote's state (``bourdon status`` shows it) and reported to
    ``on_result``; the next round tries again.
    """
    done = 0
    while rounds is None or done < rounds:
        try:
            library = library_opener()
        except BourdonError as exc:  # busy, or moved away: say so, and try again next round
            for name in names or ["*"]:
                on_result(name, None, exc)
        else:
            with library:
                sync_each(library, names or remote_names(library), on_result=on_result)
        done += 1
        if rounds is None or done < rounds:
            sleep(interval)
