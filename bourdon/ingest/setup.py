"""``bourdon setup``'s plan, its application, and its undo.

``plan`` says, file by file, what registering bourdon's MCP server would change in each
agent's own configuration (``mcpconfig``): created, updated, unchanged, or unreadable (a file
that cannot be parsed is reported and left alone; the others go on). ``apply`` writes the
plan through a ``Session``, which first keeps a copy of each file it is about to change
(``<state_dir>/setup-backups/``) and, when saved, the digest of what setup left
(``<state_dir>/setup-state.json``); the export hooks go through the same session
(``bourdon.ingest.hooks``).

``undo`` puts every file back: a file still as setup left it gets its original bytes again (or
is removed, if setup created it); a file changed since (the user added a server, say) keeps
those changes and loses only bourdon's entries, and the step says so. Running setup twice
changes nothing the second time, so the state file keeps the first original of each file.
The caller passes the state folder (``$BOURDON_HOME``); no environment is read here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import hashlib
import json
import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bourdon.errors import BourdonError, InputError
from bourdon.ingest import mcpconfig
from bourdon.ingest.agents import Agent
from bourdon.store.durable import atomic_write

STATE_FILE: Final = "setup-state.json"
BACKUPS: Final = "setup-backups"

CREATED: Final = "created"
UPDATED: Final = "updated"
UNCHANGED: Final = "unchanged"
UNREADABLE: Final = "unreadable"

SERVER: Final = "server"  # the file holds bourdon's MCP server entry
HOOKS: Final = "hooks"  # the file holds bourdon's export hooks
OTHER: Final = "other"  # a file setup wrote for another reason (the hooks' state, a backup)


@dataclass
class FileChange:
    """What setup does (or would do) to one file."""

    agent: str
    path: Path
    kind: str  # SERVER or HOOKS
    before: str | None  # None: the file does not exist
    after: str | None
    entries: list[str] = field(default_factory=list)
    error: str | None = None
    form: dict[str, str] | None = None  # a server entry's file syntax and key, for undo

    @property
    def state(self) -> str:
        if self.error is not None:
            return UNREADABLE
        if self.before == self.after:
            return UNCHANGED
        return CREATED if self.before is None else UPDATED

    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                (self.after or "").splitlines(keepends=True),
                fromfile=f"{self.path} (before)",
                tofile=f"{self.path} (after)",
            )
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "path": str(self.path),
            "kind": self.kind,
            "state": self.state,
            "entries": self.entries,
            "error": self.error,
        }


def read_text(path: Path) -> str | None:
    """A configuration file's text, None when it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text; bourdon changed nothing") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None


def plan(agents: Sequence[Agent], command: Sequence[str]) -> list[FileChange]:
    """For each agent, its configuration file with bourdon's server running ``command``."""
    changes = []
    label = f"{mcpconfig.NAME}: {shlex.join(command)}"
    for agent in agents:
        form = {"syntax": agent.syntax, "key": agent.key}
        change = FileChange(agent.id, agent.config, SERVER, None, None, [label], form=form)
        try:
            change.before = read_text(agent.config)
            change.after = mcpconfig.register(agent, change.before, command)
        except BourdonError as exc:
            change.error = exc.message
            change.after = change.before
        changes.append(change)
    return changes


def apply(changes: Sequence[FileChange], session: Session) -> None:
    """Write each change that changes something, remembering the file first."""
    for change in changes:
        if change.state in (CREATED, UPDATED) and change.after is not None:
            session.touch(change.path, change.agent, change.kind, change.form)
            session.write(change.path, change.after)


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


class Session:
    """The files one or more setups changed, their originals, and what setup left in them."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.path = state_dir / STATE_FILE
        self.backups = state_dir / BACKUPS
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = {}
        self.files: dict[str, dict[str, Any]] = dict(loaded.get("files") or {})
        self.dirs: list[str] = list(loaded.get("dirs") or [])
        self._raw = self._render() if loaded else None

    def touch(self, path: Path, agent: str, kind: str, form: dict[str, str] | None = None) -> None:
        """Remember ``path`` as it is now, before setup first changes it (``form``: how its
        server entry is written, so undo and doctor read it without guessing)."""
        key = str(path.absolute())
        record = self.files.get(key)
        if record is not None:
            if kind not in record["kinds"]:
                record["kinds"].append(kind)
            if form:
                record["form"] = form
            return
        original = _read_bytes(path)
        backup = None
        if original is not None:
            self.backups.mkdir(parents=True, exist_ok=True)
            backup = f"{len(self.files):03d}-{path.name}"
            (self.backups / backup).write_bytes(original)
        self.files[key] = {"agent": agent, "kinds": [kind], "backup": backup, "final": None}
        if form:
            self.files[key]["form"] = form

    def created(self, path: Path, agent: str) -> None:
        """Remember a file setup caused to exist (a backup the hooks' install made)."""
        self.files.setdefault(
            str(path.absolute()), {"agent": agent, "kinds": [OTHER], "backup": None, "final": None}
        )

    def write(self, path: Path, text: str) -> None:
        missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
        for folder in reversed(missing):
            self.dirs.append(str(folder.absolute()))
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path.resolve() if path.is_symlink() else path, text.encode("utf-8"),
                     keep_mode=True)  # fmt: skip

    def save(self) -> None:
        """Record what setup left in each file (nothing is written when nothing changed)."""
        for key, record in self.files.items():
            record["final"] = _digest(_read_bytes(Path(key)))
        text = self._render()
        if text == self._raw or not self.files:
            return
        self.state_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, text.encode("utf-8"))
        self._raw = text

    def _render(self) -> str:
        return json.dumps({"files": self.files, "dirs": self.dirs}, indent=2, sort_keys=True) + "\n"


@dataclass
class UndoStep:
    """What undo did to one file."""

    agent: str
    path: Path
    action: str  # restored | removed | entries removed | gone | kept
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"path": str(self.path)}


def undo(state_dir: Path, uninstall_hooks: Any) -> list[UndoStep]:
    """Put back every file setup changed; from a file changed since, take out only bourdon's
    entry, and its hooks with ``uninstall_hooks(agent, path)``."""
    session = Session(state_dir)
    steps: list[UndoStep] = []
    # The files setup wrote for its own sake (the hooks' state) go last.
    order = sorted(session.files.items(), key=lambda kv: OTHER in kv[1]["kinds"])
    for key, record in order:
        path = Path(key)
        current = _read_bytes(path)
        backup = record["backup"]
        original = (session.backups / backup).read_bytes() if backup else None
        agent = record["agent"]
        if _digest(current) == record["final"]:
            if original is None:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                steps.append(UndoStep(agent, path, "removed", "setup had created it"))
            else:
                atomic_write(path, original, keep_mode=True)
                steps.append(UndoStep(agent, path, "restored"))
            continue
        if current is None:
            steps.append(UndoStep(agent, path, "gone", "removed since setup; nothing to undo"))
            continue
        if OTHER in record["kinds"]:
            steps.append(UndoStep(agent, path, "kept", "changed since setup"))
            continue
        _take_out(path, record, uninstall_hooks)
        steps.append(
            UndoStep(
                agent,
                path,
                "entries removed",
                "changed since setup: only bourdon's entries were taken out, the rest kept",
            )
        )
    for folder in sorted(session.dirs, key=len, reverse=True):
        with contextlib.suppress(OSError):
            Path(folder).rmdir()  # only when empty
    shutil.rmtree(session.backups, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        session.path.unlink()
    return steps


def spec(agent_id: str, path: Path, record: dict[str, Any]) -> Agent | None:
    """The agent as setup wrote its server entry into ``path`` (None: no entry there)."""
    form = record.get("form")
    if SERVER not in record["kinds"] or not isinstance(form, dict):
        return None
    return Agent(agent_id, agent_id, path, str(form["syntax"]), key=str(form["key"]))


def _take_out(path: Path, record: dict[str, Any], uninstall_hooks: Any) -> None:
    agent_id = record["agent"]
    agent = spec(agent_id, path, record)
    if agent is not None:
        raw = read_text(path)
        if raw is not None:
            after = mcpconfig.unregister(agent, raw)
            if after is None:
                path.unlink()
            elif after != raw:
                atomic_write(path, after.encode("utf-8"), keep_mode=True)
    if HOOKS in record["kinds"] and path.exists():
        uninstall_hooks(agent_id, path)


def registrations(state_dir: Path) -> list[Agent]:
    """Each agent setup registered bourdon with, its ``config`` the file it wrote."""
    session = Session(state_dir)
    found = (spec(r["agent"], Path(key), r) for key, r in session.files.items())
    return [agent for agent in found if agent is not None]
