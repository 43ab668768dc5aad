"""Replication through any git remote: fetch, integrate, publish, push; never interactive.

What a remote holds is one branch, ``bourdon/published``: the library's live manifests filtered
to the visibility the remote is configured for (``team`` by default). That branch has a history
of its own, made only of filtered commits, so no private row, staged write or ``.bourdon/``
file is ever in an object the remote can reach.

One sync with a remote:

1. **fetch** its published branch (``refs/bourdon/incoming/<name>``);
2. **integrate** each agent the remote changed since the last agreed state (``refs/bourdon/
   synced/<name>``): ``Library.integrate`` merges three-way, row by row, as one commit per agent
   whose second parent is the remote's commit;
3. **publish**: a commit on top of the remote's, holding the filtered manifests that differ;
4. **push** it as a fast-forward. If the remote moved on meanwhile, start again at 1, at most
   ``attempts`` times.

Each step leaves the library consistent if the process dies: integration commits go through the
library's write protocol, the published commit is only objects until the push, and the refs
move last, so the next sync redoes whatever was not finished.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Final

import filelock

from bourdon.access.visibility import filter_manifest
from bourdon.digest import digest
from bourdon.errors import (
    BourdonError,
    BusyError,
    GitError,
    InputError,
    ManifestError,
    NotFoundError,
)
from bourdon.formats import yamlio
from bourdon.merge.threeway import merge3
from bourdon.merge.twoway import compare
from bourdon.model import AGENTS_DIR, LOCAL_DIR, ROW_SECTIONS, SUFFIX, Visibility, check_agent_id
from bourdon.replicate import state as syncstate
from bourdon.replicate.state import (
    BRANCH,
    VISIBILITY_KEY,
    check_remote_name,
    incoming_ref,
    synced_ref,
)
from bourdon.store.durable import atomic_write
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance

ATTEMPTS: Final = 5
TIMEOUT: Final = 120.0

Progress = Callable[[str], None]


@dataclass
class Received:
    """One agent the remote changed, as integrated here (or as it would be, in a dry run)."""

    agent_id: str
    added: int
    changed: int
    removed: int
    version: str | None = None  # the integration commit; None in a dry run or for a no-op


@dataclass
class Sent:
    """One agent's published manifest that differs from the remote's."""

    agent_id: str
    rows: int  # rows in the published manifest
    withheld: int  # rows of the live manifest above the remote's visibility, never sent


@dataclass
class SyncReport:
    remote: str
    dry_run: bool
    visibility: str
    attempts: int = 0
    remote_commit: str | None = None  # the remote's published state as fetched
    pushed: str | None = None  # the published commit the remote now holds, if one was sent
    received: list[Received] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # remote files not taken

    @property
    def up_to_date(self) -> bool:
        return not self.received and not self.sent

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "up_to_date": self.up_to_date}


# -- remotes ---------------------------------------------------------------------------------


def add_remote(library: Library, name: str, url: str, visibility: str = "team") -> None:
    """Add a git remote that exchanges only the published branch."""
    check_remote_name(name)
    level = Visibility.parse(visibility, "visibility")
    if level >= Visibility.PRIVATE:
        raise InputError("a remote receives at most team rows: private rows never leave")
    if not url or url.startswith("-") or "\n" in url:
        raise InputError(f"{url!r} is not a git remote URL or path")
    repo = library.repo
    if name in repo.remotes():
        raise InputError(f"remote {name!r} exists already; see 'bourdon remote list'")
    repo.config_set(f"remote.{name}.url", url)
    # A hand-run 'git fetch NAME' or 'git push NAME' in the library exchanges the published
    # branch too, never the working branch (which holds private rows and staged writes).
    repo.config_set(f"remote.{name}.fetch", f"+refs/heads/{BRANCH}:{incoming_ref(name)}")
    repo.config_set(f"remote.{name}.push", f"{synced_ref(name)}:refs/heads/{BRANCH}")
    repo.config_set(f"remote.{name}.{VISIBILITY_KEY}", str(level))


def remove_remote(library: Library, name: str) -> None:
    repo = library.repo
    if check_remote_name(name) not in repo.remotes():
        raise NotFoundError(f"no remote {name!r}; see 'bourdon remote list'")
    repo.config_remove_section(f"remote.{name}")
    for ref in (incoming_ref(name), synced_ref(name)):
        repo.delete_ref(ref)
    with contextlib.suppress(OSError):
        syncstate.state_path(library.root, name).unlink()


def remote_names(library: Library, only: str | None = None) -> list[str]:
    names = sorted(library.repo.remotes())
    if only is None:
        return names
    if check_remote_name(only) not in names:
        raise NotFoundError(f"no remote {only!r}; add it with 'bourdon remote add {only} URL'")
    return [only]


# -- sync ------------------------------------------------------------------------------------


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
    say(f"fetching {name}")
    theirs = repo.fetch(name, BRANCH, incoming_ref(name), timeout)
    report.remote_commit = theirs
    base = repo.read_ref(synced_ref(name))
    report.sent, report.skipped = [], []  # what was received in a lost round stays received
    received = len(report.received)
    merged: dict[str, dict[str, Any]] = {}
    head_before = library.head()
    digests = _PublishedCache(library)
    for agent_id, before, after in _incoming(library, base, theirs, report, digests):
        if report.dry_run:
            current = _current(library, agent_id)
            result = merge3(before, current, after) if current is not None else dict(after)
            merged[agent_id] = result
            report.received.append(_received(agent_id, current, result, None))
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
                )
            )
    if theirs and theirs != base and not report.dry_run:
        repo.set_ref(synced_ref(name), theirs)  # all of it is integrated now
    changes = _outgoing(library, level, theirs, merged, report, library.head(), digests)
    if not changes or report.dry_run:
        return True
    say(f"pushing {len(changes)} manifest(s) to {name}")
    own = None
    if len(report.received) > received:
        own = _original(library, level, base, head_before, machine, digests)
    subject = f"publish {len(changes)} agent(s) from {machine}"
    commit = library.write_published(changes, theirs, subject, machine, merged=own)
    if not repo.push(name, commit, BRANCH, timeout):
        return False
    report.pushed = commit
    repo.set_ref(incoming_ref(name), commit)
    repo.set_ref(synced_ref(name), commit)
    return True


def _original(
    library: Library,
    level: Visibility,
    base: str | None,
    head: str | None,
    machine: str,
    digests: _PublishedCache,
) -> str | None:
    """A published commit of this library's state before it integrated the remote's.

    When both sides changed since ``base``, the commit sent is a merge of the remote's state
    and this one, so the remote's history (and every library that syncs with it) keeps both
    originals next to the integration, as git keeps both sides of a merge.
    """
    scratch = SyncReport("", False, str(level))
    before = _outgoing(library, level, base, {}, scratch, head, digests)
    if not before:
        return None
    subject = f"publish {len(before)} agent(s) from {machine}, before integrating"
    return library.write_published(before, base, subject, machine)


def _incoming(
    library: Library,
    base: str | None,
    theirs: str | None,
    report: SyncReport,
    digests: _PublishedCache,
) -> Iterator[tuple[str, dict[str, Any] | None, dict[str, Any]]]:
    """(agent, base version, remote version) of each agent the remote changed since ``base``."""
    if theirs is None or theirs == base:
        return
    before = _agent_files(library, base)
    for filename, blob in _agent_files(library, theirs).items():
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
        yield agent_id, older, after


def _outgoing(
    library: Library,
    level: Visibility,
    theirs: str | None,
    overlay: dict[str, dict[str, Any]],
    report: SyncReport,
    head: str | None,
    cache: _PublishedCache,
) -> dict[str, bytes]:
    """``path -> bytes`` of each manifest at ``head``, published, that ``theirs`` lacks."""
    there = _agent_files(library, theirs)
    here = _agent_files(library, head)
    changes: dict[str, bytes] = {}
    for filename in sorted({*here, *_overlay_files(overlay)}):
        agent_id = filename[: -len(SUFFIX)]
        blob, key = here.get(filename), f"{level}:{here.get(filename)}"
        remote = _RemoteDigest(library, theirs, agent_id, there.get(filename), cache)
        if agent_id not in overlay and remote.holds(cache.get(key)):
            continue  # published already, unchanged since
        try:
            data = overlay.get(agent_id) or library.manifest_at(head, agent_id)
        except ManifestError as exc:
            report.skipped.append({"file": f"{AGENTS_DIR}/{filename}", "reason": exc.message})
            continue
        if data is None:
            continue
        published = filter_manifest(data, level)
        published_digest = digest(published)
        if blob and agent_id not in overlay:
            cache.put(key, published_digest)
        if remote.holds(published_digest):
            continue
        raw = yamlio.dump(published)
        changes[f"{AGENTS_DIR}/{filename}"] = raw
        cache.put(f"blob:{library.repo.blob_id(raw)}", published_digest)  # the remote's, soon
        rows = sum(len(published.get(s) or []) for s in ROW_SECTIONS)
        total = sum(len(data.get(s) or []) for s in ROW_SECTIONS)
        report.sent.append(Sent(agent_id, rows, total - rows))
    cache.save()
    return changes


class _RemoteDigest:
    """The digest of the remote's version of one agent, looked up only when needed."""

    def __init__(
        self,
        library: Library,
        theirs: str | None,
        agent_id: str,
        blob: str | None,
        cache: _PublishedCache,
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


def _overlay_files(overlay: dict[str, dict[str, Any]]) -> list[str]:
    return [f"{agent_id}{SUFFIX}" for agent_id in overlay]


def _agent_files(library: Library, commit: str | None) -> dict[str, str]:
    """``file name -> blob id`` of the manifests in ``agents/`` at ``commit``."""
    if commit is None:
        return {}
    found = library.repo.read(f"{commit}:{AGENTS_DIR}")
    if not found or found[1] != "tree":
        return {}
    out = {}
    for name, (mode, oid) in library.repo.tree_entries(found[0]).items():
        text = name.decode("utf-8", "replace")
        if text.endswith(SUFFIX) and mode != b"40000":
            out[text] = oid
    return out


def _current(library: Library, agent_id: str) -> dict[str, Any] | None:
    try:
        return library.manifest_at(library.head(), agent_id)
    except ManifestError:
        return None


def _received(
    agent_id: str, current: dict[str, Any] | None, result: dict[str, Any], version: str | None
) -> Received:
    changes = compare(current, result)
    return Received(
        agent_id,
        sum(map(len, changes.added.values())),
        sum(map(len, changes.changed.values())),
        sum(map(len, changes.removed.values())),
        version,
    )


def _provenance(name: str, machine: str) -> Provenance:
    return Provenance(caller=f"sync:{name}", machine=machine)


class _PublishedCache:
    """The digest each live blob has once published: an unchanged agent is not filtered again.

    ``<level>:<live blob id> -> published digest`` and ``blob:<remote blob id> -> digest``, in
    ``.bourdon/sync/published.json``.
    """

    def __init__(self, library: Library) -> None:
        self.path = library.root / LOCAL_DIR / "sync" / "published.json"
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        self.known: dict[str, str] = data if isinstance(data, dict) else {}
        self.dirty = False

    def get(self, key: str) -> str | None:
        return self.known.get(key)

    def put(self, key: str, value: str) -> None:
        if self.known.get(key) != value:
            self.known[key] = value
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        if len(self.known) > 10_000:  # old blobs only; what is live gets filtered again
            self.known = dict(list(self.known.items())[-5_000:])
        text = json.dumps(self.known, sort_keys=True)
        with contextlib.suppress(OSError):
            atomic_write(self.path, text.encode("utf-8"))


def watch(
    library_opener: Callable[[], Library],
    names: list[str] | None,
    *,
    interval: float,
    rounds: int | None,
    on_result: Callable[[str, SyncReport | None, BourdonError | None], None],
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
                for name in names or remote_names(library):
                    try:
                        on_result(name, sync(library, name), None)
                    except BourdonError as exc:
                        on_result(name, None, exc)
        done += 1
        if rounds is None or done < rounds:
            sleep(interval)
