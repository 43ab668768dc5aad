"""Where each fact of a health report is read from: a manifest's row counts, staged writes,
peers, members, remotes, the branch, the object store, and what interrupted writes left behind.

Each gatherer answers what it found, or the message of the error that stopped it (a ``str``),
so one unreadable file never hides the rest of the report.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bourdon.access.trust import MemberRegistry
from bourdon.digest import digest8
from bourdon.errors import BourdonError
from bourdon.federation.peers import PeerList
from bourdon.formats.reading import ReadProblem
from bourdon.model import LOCAL_DIR, ROW_SECTIONS, row_visibility
from bourdon.replicate.state import remote_states
from bourdon.store.git.process import pid_alive
from bourdon.store.recovery import lock_verdict

if TYPE_CHECKING:
    from bourdon.access.registryfile import Member
    from bourdon.federation.peers import Peer
    from bourdon.replicate.state import RemoteState
    from bourdon.store.git.repo import GitRepo
    from bourdon.store.library import Library
    from bourdon.store.staging import StagedWrite

LEVELS: Final = ("public", "team", "private")


def raw_agent(
    data: Mapping[str, Any],
    manifest_digest: str | None,
    skipped: Iterable[ReadProblem] = (),
) -> dict[str, Any]:
    """One manifest's facts: type, versions, row counts by section and visibility (of the rows
    served), and the rows left out (``reading.read_manifest``)."""
    agent = data.get("agent")
    agent = agent if isinstance(agent, Mapping) else {}
    policy = data.get("visibility_policy")
    policy = policy if isinstance(policy, Mapping) else {}
    skipped = tuple(skipped)
    left_out = {(p.section, p.row) for p in skipped}
    counts = {section: dict.fromkeys(LEVELS, 0) for section in ROW_SECTIONS}
    for section in ROW_SECTIONS:
        rows = data.get(section)
        for i, row in enumerate(rows if isinstance(rows, list) else []):
            if isinstance(row, Mapping) and (section, i) not in left_out:
                counts[section][str(row_visibility(row, policy))] += 1
    return {
        "skipped": skipped,
        "type": agent.get("type"),
        "spec_version": data.get("spec_version"),
        "last_updated": data.get("last_updated"),
        "digest8": digest8(manifest_digest) if manifest_digest else None,
        # Shaped once for both audiences: with private rows counted, and without.
        "seen": {private: _seen(counts, private) for private in (True, False)},
    }


def _seen(counts: Mapping[str, Mapping[str, int]], private: bool) -> dict[str, Any]:
    levels = LEVELS if private else LEVELS[:2]
    rows = {section: sum(counts[section][lv] for lv in levels) for section in ROW_SECTIONS}
    by_level = {lv: sum(counts[section][lv] for section in ROW_SECTIONS) for lv in levels}
    return {"rows": rows, "total": sum(rows.values()), "by_visibility": by_level}


def staged(library: Library) -> list[StagedWrite] | str:
    try:
        return library.staged()
    except BourdonError as exc:
        return exc.message


def peers(home: Path) -> list[Peer] | str:
    try:
        return PeerList(home).peers()
    except BourdonError as exc:
        return exc.message


def members(registry: MemberRegistry) -> list[Member] | str | None:
    if not registry.path.exists():
        return None
    try:
        return registry.members()
    except BourdonError as exc:
        return exc.message


def remotes(root: Path, repo: GitRepo) -> list[RemoteState] | str:
    try:
        return remote_states(root, repo)
    except BourdonError as exc:
        return exc.message


def branch(repo: GitRepo) -> str:
    return repo.branch.removeprefix("refs/heads/")


def leftovers(root: Path, repo: GitRepo, now: float | None = None) -> list[dict[str, Any]]:
    """What interrupted writes left behind: an intent or a pid file of a process that is gone,
    git lock files older than ``recovery.STALE_AFTER``, each with whether a live git process
    may hold it (``git_lock_held``, ``git_lock_unknown``) or none does (``git_lock``). Looks
    only; opening the library with ``Library.open`` (any bourdon command) is what repairs."""
    now = time.time() if now is None else now
    local = root / LOCAL_DIR
    found: list[dict[str, Any]] = []
    intent = _json(local / "intent.json")
    if intent is not None:
        pid = intent.get("pid") if isinstance(intent, dict) else None
        if not pid_alive(pid):
            paths = intent.get("paths") if isinstance(intent, dict) else None
            found.append(
                {
                    "kind": "intent",
                    "path": f"{LOCAL_DIR}/intent.json",
                    "pid": pid,
                    "paths": paths if isinstance(paths, list) else [],
                }
            )
    with contextlib.suppress(OSError, ValueError):
        pid = int((local / "write.pid").read_text(encoding="ascii"))
        if not pid_alive(pid):
            found.append({"kind": "write_pid", "path": f"{LOCAL_DIR}/write.pid", "pid": pid})
    users: list[int] | None = []
    asked = False
    with contextlib.suppress(OSError):
        for lock in repo.stale_locks():
            if lock_verdict(lock, None, now) == "young":
                continue
            if not asked:
                users, asked = repo.git_users(), True
            path = lock.relative_to(root).as_posix()
            if users is None:
                found.append({"kind": "git_lock_unknown", "path": path})
            elif users:
                found.append({"kind": "git_lock_held", "path": path, "pids": users})
            else:
                found.append({"kind": "git_lock", "path": path})
    return found


def object_store(repo: GitRepo) -> dict[str, Any] | str:
    """Loose objects (estimated as git does), packs, the last pack's time, a run under way:
    a few stats (``git.packing``), cheap enough for every ``memory_status``."""
    try:
        state = repo.object_store()
    except (OSError, BourdonError) as exc:
        return str(exc)
    return {
        "loose_estimate": state.loose,
        "packs": state.packs,
        "last_packed_at": state.last_packed,
        "packing": state.packing,
        "loose_limit": state.loose_limit,
    }


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}  # there, but unreadable: still a leftover
