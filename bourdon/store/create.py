"""Creating a library, and adopting a library of the reference Bourdon in place (issue 11).

A reference library (``agents/``, ``versions/``, no git) keeps its folder: its history becomes
commits (``adopt`` plans them, ``replay`` writes them in one fast-import), then its own files
move under ``.bourdon/imported/``. ``.bourdon/adopting.json`` records how far an adoption got,
so one a crash interrupted is finished, or undone and started again (``resume_adoption``).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from bourdon.errors import LibraryError
from bourdon.model import SUFFIX
from bourdon.store import adopt
from bourdon.store.durable import atomic_write, move
from bourdon.store.git.fastimport import ImportedCommit
from bourdon.store.git.repo import GitRepo
from bourdon.store.layout import ADOPTING, AGENTS, LOCAL, STAGING, agent_path
from bourdon.store.provenance import OPERATOR, Provenance, identity, message

# What a new library holds before its first manifest.
_FIRST_FILES: Final = {
    ".gitignore": b"# This machine's lock, caches and recovered files.\n.bourdon/\n",
    f"{AGENTS}/.gitkeep": b"",
    f"{STAGING}/.gitkeep": b"",
}


def check_library(root: Path) -> Path:
    """``root``, if it holds a bourdon library; else a ``LibraryError`` that says what to run."""
    if (root / ADOPTING).exists() or adopt.is_reference_library(root):
        raise LibraryError(
            f"{root} is a library of the reference Bourdon (no git history yet); adopt it "
            f"with 'bourdon init {root}' (add --dry-run to see what it would do first)"
        )
    if not (root / AGENTS).is_dir() or not (root / ".git").exists():
        raise LibraryError(
            f"{root} is not a bourdon library; create one with 'bourdon init {root}'"
        )
    (root / LOCAL).mkdir(exist_ok=True)
    return root


def prepare(root: Path, adoption: adopt.Adoption | None) -> adopt.Adoption | None:
    """Make ``root`` ready for ``GitRepo.init``; return the adoption plan of a reference library.

    Refuses a folder that holds anything but a reference library (or ``.bourdon/``).
    """
    reference = None
    if adopt.is_reference_library(root):
        reference = adoption if adoption is not None else adopt.plan(root)
    if reference is None and root.exists() and any(p.name != LOCAL for p in root.iterdir()):
        raise LibraryError(f"{root} is not empty and is not a library; pick an empty or new folder")
    if reference is not None:
        # Until the branch holds the whole history, an interrupted adoption starts again.
        atomic_write(root / ADOPTING, json.dumps({"state": "replaying"}).encode("utf-8"))
    for folder in (root / AGENTS, root / STAGING, root / LOCAL):
        folder.mkdir(parents=True, exist_ok=True)
    return reference


def first_commit(root: Path, repo: GitRepo, reference: adopt.Adoption | None) -> None:
    """Write and commit the library's skeleton (under the library lock)."""
    for name, data in _FIRST_FILES.items():
        atomic_write(root / name, data)
    repo.commit_files(
        _FIRST_FILES,
        message("init", "library", "create the library", Provenance(), None),
        parent=None,
        author=identity(OPERATOR),
        committer=identity("bourdon"),
        # An adopted history starts when the reference's did, so git log reads in order.
        when=int(reference.states[0].when) if reference and reference.states else None,
    )


def replay(
    root: Path,
    repo: GitRepo,
    plan: adopt.Adoption,
    machine: str,
    progress: Callable[[str], None],
) -> None:
    """Replay a reference library's states as commits in one import, then move its own
    files under ``.bourdon/imported/`` (under the library lock)."""
    repo.import_commits(_commits(root, plan, machine, progress), parent=repo.head())
    record = {"state": "moving", "moved": plan.moved}
    atomic_write(root / ADOPTING, json.dumps(record).encode("utf-8"))
    _move_imported(root, plan.moved)
    if plan.moved:
        progress(f"moved {len(plan.moved)} reference files under {adopt.IMPORTED}/")


def resume_adoption(root: Path) -> None:
    """Finish, or undo so it can start again, an adoption a crash interrupted."""
    try:
        record = json.loads((root / ADOPTING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    if isinstance(record, dict) and record.get("state") == "moving":
        _move_imported(root, [str(n) for n in record.get("moved") or []])
    else:
        # The history was never complete: the repository is this adoption's own, made
        # moments ago, and every reference file is still where it was.
        shutil.rmtree(root / ".git", ignore_errors=True)
        for name in _FIRST_FILES:
            with contextlib.suppress(FileNotFoundError):
                (root / name).unlink()
    (root / ADOPTING).unlink()


def _commits(
    root: Path, plan: adopt.Adoption, machine: str, progress: Callable[[str], None]
) -> Iterator[ImportedCommit]:
    total = len(plan.states)
    for done, state in enumerate(plan.states, start=1):
        who = Provenance(state.caller, state.session, state.transcript, machine)
        extra = {"Reference-Digest": state.reference_digest}
        if state.reference_version:
            extra["Reference-Version"] = state.reference_version
        subject = f"{state.op} {state.agent_id}: adopted from {state.source}"
        yield ImportedCommit(
            {agent_path(state.agent_id): state.raw},
            message(state.op, state.agent_id, subject, who, state.digest, extra),
            identity(state.caller),
            identity("bourdon"),
            int(state.when),
        )
        if done % 100 == 0 or done == total:
            progress(f"replayed {done}/{total} versions")
    # What the reference left live but our history would not: staged writes, each at its
    # file's time, and agents whose live manifest is gone.
    for name in plan.staged:
        caller = name.split("/")[1]
        who = Provenance(caller, machine=machine)
        agent_id = name.split("/")[2][: -len(SUFFIX)]
        text = message("stage", agent_id, f"adopt staged write {name}", who, None)
        when = int((root / name).stat().st_mtime)
        raw = (root / name).read_bytes()
        yield ImportedCommit({name: raw}, text, identity(caller), identity("bourdon"), when)
    gone = {agent_path(a): None for a in plan.agents() if not (root / agent_path(a)).exists()}
    if gone:
        subject = "agents without a live manifest"
        text = message("import", "library", subject, Provenance(machine=machine), None)
        yield ImportedCommit(gone, text, identity(OPERATOR), identity("bourdon"), int(time.time()))


def _move_imported(root: Path, names: list[str]) -> None:
    """Move the reference's own files under ``.bourdon/imported/``, keeping their paths.

    Idempotent: a move an interrupted adoption already made is not made again.
    """
    for name in names:
        source, target = root / name, root / adopt.IMPORTED / name
        if source.exists() or source.is_symlink():
            # Not synced one by one: adopting.json lists them, and a resumed adoption redoes it.
            move(source, target, sync=False)
