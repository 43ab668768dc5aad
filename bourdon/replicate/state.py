"""What this machine knows about each remote of the library: config, refs and the last sync.

A remote is a plain git remote of the library with two settings of bourdon's own in the
library's git configuration: ``remote.<name>.bourdonVisibility`` (the highest visibility the
remote may receive, ``team`` by default) and the fixed branch it exchanges,
``bourdon/published``. Per remote, two local refs are kept:

- ``refs/bourdon/incoming/<name>``: the remote's published branch as last fetched;
- ``refs/bourdon/synced/<name>``: the remote commit both sides last agreed on (integrated here
  and, if anything was sent, pushed there); the base of the next three-way integration.

The outcome of each attempt goes to ``.bourdon/sync/<name>.json``, so ``bourdon status`` can show
an unattended machine's failures instead of losing them.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

from bourdon.errors import InputError
from bourdon.model import AGENTS_DIR, LOCAL_DIR, Visibility
from bourdon.store.durable import atomic_write

if TYPE_CHECKING:
    from bourdon.store.git.repo import GitRepo

BRANCH: Final = "bourdon/published"
VISIBILITY_KEY: Final = "bourdonVisibility"
DEFAULT_VISIBILITY: Final = Visibility.TEAM
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def check_remote_name(name: object) -> str:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name.endswith((".", ".lock")):
        raise InputError(
            f"remote name {name!r} is not valid: use letters, digits, '.', '_' or '-' "
            "(1-64, starting with a letter or digit)"
        )
    return name


def incoming_ref(name: str) -> str:
    return f"refs/bourdon/incoming/{name}"


def synced_ref(name: str) -> str:
    return f"refs/bourdon/synced/{name}"


def state_path(root: Path, name: str) -> Path:
    return root / LOCAL_DIR / "sync" / f"{check_remote_name(name)}.json"


@dataclass(frozen=True)
class RemoteState:
    """One remote as ``bourdon status`` and ``memory_status`` report it."""

    name: str
    url: str  # without the password a URL may carry
    visibility: str  # the highest visibility it receives: "team" or "public"
    last_attempt: str | None  # when a sync with it last started, whatever came of it
    last_sync: str | None  # when a sync with it last completed
    last_error: str | None  # why the last attempt failed; None once a later one succeeded
    last_error_at: str | None
    ahead: int | None  # commits here touching agents/ since the last sync (None: never synced)
    behind: int | None  # fetched remote commits not integrated yet (None: never fetched)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def visibility_of(repo: GitRepo, name: str) -> Visibility:
    value = repo.config_get(f"remote.{name}.{VISIBILITY_KEY}")
    return Visibility.parse(value, "visibility") if value else DEFAULT_VISIBILITY


def load_state(root: Path, name: str) -> dict[str, Any]:
    try:
        data = json.loads(state_path(root, name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_state(root: Path, name: str, **changes: Any) -> dict[str, Any]:
    """Merge ``changes`` into the remote's state file (best effort: it is only a report)."""
    data = {**load_state(root, name), **changes}
    with contextlib.suppress(OSError):
        text = json.dumps(data, indent=2, sort_keys=True) + "\n"
        atomic_write(state_path(root, name), text.encode("utf-8"))
    return data


def record_attempt(root: Path, name: str) -> None:
    save_state(root, name, last_attempt=now())


def record_success(root: Path, name: str, head: str | None) -> None:
    save_state(root, name, last_sync=now(), synced_head=head, last_error=None, last_error_at=None)


def record_failure(root: Path, name: str, error: str) -> None:
    """Keep why a sync failed where ``bourdon status`` shows it; never raises."""
    save_state(root, name, last_error=" ".join(error.split())[:500], last_error_at=now())


def mark_purged(root: Path, name: str, commits: Mapping[str, str]) -> None:
    """A purge rewrote the history this remote holds: its next sync force-updates it."""
    state = load_state(root, name)
    head = state.get("synced_head")
    new_head = commits.get(head) if isinstance(head, str) else None
    save_state(root, name, purged=True, synced_head=new_head)


def purged(root: Path, name: str) -> bool:
    return load_state(root, name).get("purged") is True


def remote_states(root: Path, repo: GitRepo) -> list[RemoteState]:
    """Every remote of the library, with what is known locally; no network access."""
    out = []
    head = repo.head()
    for name, url in sorted(repo.remotes().items()):
        if not _NAME.fullmatch(name):
            continue
        state = load_state(root, name)
        synced_head = state.get("synced_head")
        ahead = None
        if head and isinstance(synced_head, str):
            ahead = 0 if synced_head == head else repo.count_commits(synced_head, head, AGENTS_DIR)
        synced, incoming = repo.read_ref(synced_ref(name)), repo.read_ref(incoming_ref(name))
        behind = None
        if incoming:
            behind = 0 if incoming == synced else repo.count_commits(synced, incoming)
        out.append(
            RemoteState(
                name=name,
                url=safe_url(url),
                visibility=str(visibility_of(repo, name)),
                last_attempt=state.get("last_attempt"),
                last_sync=state.get("last_sync"),
                last_error=state.get("last_error"),
                last_error_at=state.get("last_error_at"),
                ahead=ahead,
                behind=behind,
            )
        )
    return out


def safe_url(url: str) -> str:
    """A URL without the password it may carry (``https://user:token@host``)."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.netloc.rpartition("@")[2]
    except ValueError:
        return url
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


def now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
