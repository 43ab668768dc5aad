"""The remotes a library replicates to: plain git remotes that exchange the published branch
only, never the working branch (which holds private rows and staged writes).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Final

from bourdon.errors import InputError, NotFoundError
from bourdon.model import Visibility
from bourdon.replicate import state as syncstate
from bourdon.replicate.state import (
    BRANCH,
    VISIBILITY_KEY,
    check_remote_name,
    incoming_ref,
    synced_ref,
)

if TYPE_CHECKING:
    from bourdon.store.git.repo import GitRepo
    from bourdon.store.library import Library

KEEP_HOME_KEY: Final = "bourdonKeepHome"  # "prompts": verbatim prompts and instruction notes


def add_remote(
    library: Library, name: str, url: str, visibility: str = "team", *, keep_home: bool = False
) -> None:
    """Add a git remote that exchanges only the published branch. ``keep_home``: it never
    receives verbatim prompt text or instruction-file notes (``access.homebound``)."""
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
    if keep_home:
        repo.config_set(f"remote.{name}.{KEEP_HOME_KEY}", "prompts")


def keeps_home(repo: GitRepo, name: str) -> bool:
    """Whether the remote keeps verbatim prompts and instruction notes out of what it receives.
    Any value but an absent one keeps them home (a typo never sends more)."""
    value = repo.config_get(f"remote.{name}.{KEEP_HOME_KEY}")
    return value is not None and value.strip().lower() not in ("", "none", "false")


def shares_of(library: Library, name: str) -> dict[str, Any]:
    """What the remote receives from the live manifests, as ``access.homebound.shares``."""
    from bourdon.access.homebound import shares

    head = library.head()
    manifests = []
    for agent_id in library.agent_ids():
        data = library.manifest_at(head, agent_id)
        if data is not None:
            manifests.append((agent_id, data))
    level = syncstate.visibility_of(library.repo, name)
    return shares(manifests, level, keep_home=keeps_home(library.repo, name))


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
