"""Doctor's slow checks: the git identity hand commits would use, git's index against HEAD,
and every manifest of ``agents/`` validated at HEAD and on disk (hand edits a write would
refuse to adopt).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bourdon.errors import BourdonError
from bourdon.formats.reading import new_problems, read_manifest
from bourdon.model import AGENTS_DIR, SUFFIX, Manifest
from bourdon.store.git.process import run_git

if TYPE_CHECKING:
    from bourdon.store.library import Library


_IDENTITY_VARS: Final = (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
)


def git_identity(root: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """Who ``git commit`` in the library would record, or that git would refuse to commit.

    bourdon's own commits name their author themselves and never need it; a commit made by
    hand in the library does. ``env`` is the user's environment (git reads GIT_AUTHOR_* too).
    """
    if all(env.get(name) for name in _IDENTITY_VARS):
        return {"ok": True, "ident": f"{env['GIT_COMMITTER_NAME']} <{env['GIT_COMMITTER_EMAIL']}>"}
    # The user's own git configuration, where the identity lives; it fails as `git commit` would.
    said = run_git(root, "var", "GIT_COMMITTER_IDENT", check=False, user_config=True)
    ident = said.decode("utf-8", "replace").strip().rsplit(" ", 2)[0]
    return {"ok": bool(ident), "ident": ident or None}


def git_index(library: Library) -> dict[str, Any]:
    """Paths where git's index differs from HEAD, which a plain ``git commit`` would undo
    (opening the library repairs them unless a git process holds the index)."""
    behind = library.repo.index_differences()
    managed = [p for p in behind or [] if p.startswith(("agents/", "staging/"))]
    return {"readable": behind is not None, "behind": managed}


def push_guard(library: Library) -> dict[str, Any]:
    """Whether the library's pre-push hook guards hand-typed pushes (``store.pushguard``):
    opening the library installed it unless a ``pre-push`` of someone else's is there."""
    from bourdon.store import pushguard

    return {"state": pushguard.ensure(library.repo.git_dir)}


def manifest_problems(library: Library) -> list[dict[str, Any]]:
    """Manifests of ``agents/`` that fail validation at HEAD, or on disk (hand edits)."""
    found: list[dict[str, Any]] = []
    for agent_id in library.agent_ids():
        try:
            library.read(agent_id)
        except BourdonError as exc:
            found.append(
                {
                    "agent": agent_id,
                    "path": f"{AGENTS_DIR}/{agent_id}{SUFFIX}",
                    "where": "head",
                    "problem": exc.message,
                    "last_valid": _last_valid(library, agent_id),
                }
            )
    return found + hand_edit_problems(library)


def hand_edit_problems(library: Library) -> list[dict[str, Any]]:
    """Files of ``agents/`` that differ from HEAD and that a write would refuse to adopt.

    The server serves the files on disk, so ``bourdon status`` looks at them too: one read and
    one hash per file, and a parse only of the files that differ from HEAD."""
    found: list[dict[str, Any]] = []
    head = library.head()
    with contextlib.suppress(OSError):
        for path in sorted((library.root / AGENTS_DIR).glob(f"*{SUFFIX}")):
            rel = f"{AGENTS_DIR}/{path.name}"
            raw = path.read_bytes()
            committed = library.repo.object_id(head, rel) if head else None
            if committed == library.repo.blob_id(raw):
                continue  # the same bytes as HEAD: checked above
            before = _committed_data(library, path.name[: -len(SUFFIX)]) if committed else None
            problem = _invalid(raw, rel, path.name[: -len(SUFFIX)], before)
            if problem:
                found.append(
                    {
                        "agent": path.name[: -len(SUFFIX)],
                        "path": rel,
                        "where": "disk",
                        "problem": problem,
                        "committed": committed is not None,
                    }
                )
    return found


def _invalid(raw: bytes, what: str, agent_id: str, before: Mapping[str, Any] | None) -> str | None:
    """Why a write would refuse to adopt this hand edit (``Library``): a broken top level, or
    a bad row the edit brings (a bad row already committed is only left out, never refused)."""
    try:
        reading = read_manifest(raw, what=what)
        named = Manifest(reading.data).agent_id
    except BourdonError as exc:
        return exc.message
    if named != agent_id:
        return f"{what} holds agent {named!r}; rename the file"
    brought = new_problems(reading, before)
    return brought[0].message(what) if brought else None


def _committed_data(library: Library, agent_id: str) -> Mapping[str, Any] | None:
    try:
        return library.read(agent_id).data
    except BourdonError:
        return None


def _last_valid(library: Library, agent_id: str) -> str | None:
    """The newest earlier version of the agent that still validates, if any."""
    with contextlib.suppress(BourdonError):
        for version in library.history(agent_id, limit=50)[1:]:
            with contextlib.suppress(BourdonError):
                library.read(agent_id, version.version_id)
                return version.version_id
    return None
