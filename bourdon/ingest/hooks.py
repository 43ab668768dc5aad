"""Install, remove and inspect bourdon's hooks in each agent's own settings file.

The hook files themselves live in the repository's ``hooks/`` folder (ready to copy by hand,
zero logic: they only call ``bourdon hook ...``). This module merges them into the agent's
settings file and takes them out again:

- **the right bourdon, the right library**: each command is run by ``prefix`` (the CLI
  passes the absolute path of the running ``bourdon`` and ``--library <absolute path>``)
  instead of a bare ``bourdon``, which an agent's PATH may not have;
- **idempotent**: installing twice gives the same file as installing once; a handler that an
  older bourdon installed for the same call (a bare ``bourdon hook ...``, another path or
  library) is upgraded in place, never doubled, and one it installed on an event bourdon no
  longer uses (``Target.retired``: Cursor's prompt hook, Gemini CLI's AfterAgent export) is
  taken out;
- **only where the agent is**: ``require_agent`` refuses a home without the agent's own folder
  (no ``~/.codex``: Codex was never installed), so no settings file is made for nobody;
- **kind to the user's file**: other hooks and unknown keys are kept, as is the file's
  indentation; a file that is not plain JSON (comments, trailing commas, duplicate keys) is
  refused with a clear error and left untouched;
- **reversible**: each install that changes something first copies the file to
  ``<file>.bourdon-backup-<timestamp>``; uninstall removes exactly bourdon's entries, and the
  containers (``hooks``, an event list, Cursor's ``version``) that install created, so the file
  is semantically what it was before. A file that install created is removed. What install
  created is remembered in ``<state_dir>/hooks-installed.json`` (``$BOURDON_HOME``).

The caller passes the home folder and the state folder (no environment is read here). Where
each agent's file is, and bourdon's hook file for it: ``hookfiles``; the JSON of settings files
and their two shapes of hook lists: ``settingsjson``.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from bourdon.errors import BourdonError, InputError, NotFoundError
from bourdon.ingest import hookplugin, hookrecords
from bourdon.ingest.hookfiles import Target, agent_home, fragment, hook_command, target
from bourdon.ingest.settingsjson import (
    dump_settings,
    group_of,
    handlers_of,
    has_command,
    parse_settings,
    retired_in,
    same_call,
    strip_ours,
)
from bourdon.store.durable import atomic_write

STATE_FILE: Final = hookrecords.STATE_FILE
BACKUP: Final = ".bourdon-backup-"

INSTALLED: Final = "installed"
NOT_INSTALLED: Final = "not installed"
PARTIAL: Final = "partial"
UNREADABLE: Final = "unreadable"  # the settings file could not be read (status of every agent)


@dataclass
class Status:
    """Whether bourdon's hooks are in an agent's settings file."""

    agent: str
    path: Path
    state: str
    exists: bool
    present: list[str] = field(default_factory=list)  # "Event: command"
    missing: list[str] = field(default_factory=list)
    outdated: list[str] = field(default_factory=list)  # an older bourdon's, install takes out

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "settings": str(self.path),
            "state": self.state,
            "exists": self.exists,
            "present": self.present,
            "missing": self.missing,
            "outdated": self.outdated,
        }


@dataclass
class Change:
    """What install or uninstall did (or, in a dry run, would do) to a settings file."""

    agent: str
    action: str  # install | uninstall
    path: Path
    changed: bool
    before: str | None  # the file's text before (None: it did not exist)
    after: str | None  # the file's text after (None: it does not exist)
    dry_run: bool = False
    backup: Path | None = None
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    notice: str = ""  # what the user still has to do in the agent (Codex: trust the hooks)
    created_files: list[Path] = field(default_factory=list)  # beside it: a plugin's manifest

    def diff(self) -> str:
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=f"{self.path} (before)",
            tofile=f"{self.path} (after)",
        )
        return "".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "action": self.action,
            "settings": str(self.path),
            "changed": self.changed,
            "dry_run": self.dry_run,
            "backup": str(self.backup) if self.backup else None,
            "added": self.added,
            "removed": self.removed,
            "file_exists": self.after is not None,
            "notice": self.notice or None,
        }


# -- status, install, uninstall -----------------------------------------------------------


def wanted(agent: str, prefix: Sequence[str] | None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event, handler) of bourdon's hook file for ``agent``, commands as installed."""
    key = target(agent).command_key
    for event, entry in handlers_of(fragment(agent), target(agent)):
        yield event, {**entry, key: hook_command(entry[key], prefix)}


def require_agent(agent: str, home: Path, env: Mapping[str, str] | None = None) -> None:
    """Refuse (``NotFoundError``) when the agent's own folder (in ``home``, or where ``env``
    moves it) is not there: bourdon does not create ``~/.codex/hooks.json`` for a Codex that
    was never installed."""
    folder = agent_home(agent, home, env)
    if not folder.is_dir():
        name = target(agent).title or agent
        raise NotFoundError(
            f"{name} is not installed here ({folder} does not exist); bourdon changed nothing. "
            f"Install {name} first, or pass --force to write its hooks anyway"
        )


def status(agent: str, path: Path, prefix: Sequence[str] | None = None) -> Status:
    """Installed (every bourdon entry present, as this ``prefix`` would write it, and none on
    an event bourdon no longer uses), partial (some, or an outdated one left) or not installed
    (none)."""
    spec = target(agent)
    data, _ = _load(path)
    present: list[str] = []
    missing: list[str] = []
    for event, entry in wanted(agent, prefix):
        command = entry[spec.command_key]
        label = f"{event}: {command}"
        (present if data and has_command(data, spec, event, command) else missing).append(label)
    outdated = retired_in(data, spec) if data else []
    if not missing and not outdated:
        state = INSTALLED
    else:
        state = PARTIAL if present or outdated else NOT_INSTALLED
    return Status(agent, path, state, data is not None, present, missing, outdated)


def statuses(
    paths: Mapping[str, Path], prefix: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Each agent's status (``paths``: agent -> settings file), as dicts; a file that cannot
    be read is reported as ``unreadable`` with the error, not raised."""
    found = []
    for agent, path in paths.items():
        try:
            found.append(status(agent, path, prefix).to_dict())
        except BourdonError as exc:
            found.append({"agent": agent, "state": UNREADABLE, "error": exc.message})
    return found


def install(
    agent: str,
    path: Path,
    *,
    state_dir: Path,
    dry_run: bool = False,
    prefix: Sequence[str] | None = None,
) -> Change:
    """Merge bourdon's hooks into ``path`` (created if missing); a 2nd install changes nothing.
    ``prefix`` runs each command instead of a bare ``bourdon`` (``hookfiles.hook_command``)."""
    spec = target(agent)
    shipped = fragment(agent)
    data, raw = _load(path)
    result: dict[str, Any] = copy.deepcopy(data) if data is not None else {}
    created: list[list[str]] = []
    if spec.versioned:
        version = result.get("version")
        if version is None:
            result["version"] = shipped.get("version", 1)
            created.append(["version"])
        elif version != shipped.get("version", 1):
            raise InputError(
                f"{path} is a version {version!r} hooks file; bourdon knows version "
                f"{shipped.get('version', 1)} only and changed nothing"
            )
    if "hooks" not in result:
        result["hooks"] = {}
        created.append(["hooks"])
    added = []
    key = spec.command_key
    for event, entry in wanted(agent, prefix):
        command = entry[key]
        if has_command(result, spec, event, command):
            continue
        older = same_call(result, spec, event, command)
        if older is not None:  # installed by another bourdon, or for another library
            older[key] = command
            added.append(f"{event}: {command}")
            continue
        events = result["hooks"]
        if event not in events:
            events[event] = []
            created.append(["hooks", event])
        events[event].append(copy.deepcopy(entry if spec.flat else _group(shipped, event, entry)))
        added.append(f"{event}: {command}")
    record = hookrecords.records(state_dir).get(hookrecords.key(path))
    made = [list(p) for p in record.get("created", [])] if isinstance(record, dict) else None
    removed, emptied = _retire(result, spec, made)
    if not added and not removed:
        return Change(agent, "install", path, False, raw, raw, dry_run)
    after = dump_settings(result, raw)
    change = Change(
        agent, "install", path, True, raw, after, dry_run, added=added, removed=removed,
        notice=spec.notice,
    )  # fmt: skip
    if dry_run:
        return change
    if raw is not None:
        change.backup = _backup(path, raw)
    dirs = hookplugin.missing_dirs(path)
    _write(path, after)
    manifest = hookplugin.add_manifest(spec, path)
    if manifest is not None:
        change.created_files.append(manifest)
    hookrecords.remember(
        state_dir, path, agent, created, file_created=raw is None, backup=change.backup,
        dropped=emptied, dirs=dirs,
    )  # fmt: skip
    return change


def _retire(
    result: dict[str, Any], spec: Target, made: list[list[str]] | None
) -> tuple[list[str], list[list[str]]]:
    """Take the hooks an older bourdon installed on events this one no longer uses out of
    ``result``; an event list left empty goes too when install had created it. Returns what
    went, as "Event: command", and the containers removed."""
    removed: list[str] = []
    emptied: list[list[str]] = []
    hooks = result.get("hooks")
    for event, call in spec.retired:
        entries = hooks.get(event) if isinstance(hooks, dict) else None
        if not isinstance(entries, list):
            continue
        kept = []
        went: list[str] = []
        for item in entries:
            item, gone = strip_ours(item, spec, set(), only=call)
            went += gone
            if item is not None:
                kept.append(item)
        if not went:
            continue
        removed += [f"{event}: {command}" for command in went]
        assert isinstance(hooks, dict)
        hooks[event] = kept
        if not kept and _made(made, ["hooks", event]):
            del hooks[event]
            emptied.append(["hooks", event])
    return removed, emptied


def uninstall(agent: str, path: Path, *, state_dir: Path, dry_run: bool = False) -> Change:
    """Remove exactly bourdon's entries, and what install created; never the user's hooks."""
    spec = target(agent)
    commands = {entry[spec.command_key] for _, entry in handlers_of(fragment(agent), spec)}
    data, raw = _load(path)
    if data is None:
        return Change(agent, "uninstall", path, False, None, None, dry_run)
    record = hookrecords.records(state_dir).get(hookrecords.key(path))
    created = [list(p) for p in record.get("created", [])] if record else None
    result = copy.deepcopy(data)
    removed: list[str] = []
    hooks = result.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            entries = hooks[event]
            if not isinstance(entries, list):
                continue
            kept = []
            for item in entries:
                item, gone = strip_ours(item, spec, commands)
                removed += [f"{event}: {c}" for c in gone]
                if item is not None:
                    kept.append(item)
            hooks[event] = kept
            if not kept and entries and _made(created, ["hooks", event]):
                del hooks[event]
        if not hooks and removed and _made(created, ["hooks"]):
            del result["hooks"]
    if not removed:
        return Change(agent, "uninstall", path, False, raw, raw, dry_run)
    if spec.versioned and "hooks" not in result and created and ["version"] in created:
        result.pop("version", None)
    delete = bool(record and record.get("file_created")) and result == {}
    after = None if delete else dump_settings(result, raw)
    change = Change(agent, "uninstall", path, True, raw, after, dry_run, removed=removed)
    if dry_run:
        return change
    if after is None:
        _real(path).unlink()
        hookplugin.take_away(spec, path, list((record or {}).get("dirs") or []))
    else:
        _write(path, after)
    hookrecords.forget(state_dir, path)
    return change


# -- the JSON -----------------------------------------------------------------------------


def _group(shipped: dict[str, Any], event: str, entry: dict[str, Any]) -> dict[str, Any]:
    """The shipped group of ``entry`` (whose command is as installed), holding only it."""
    for group in shipped["hooks"][event]:
        for handler in group.get("hooks", []):
            if {**handler, "command": entry.get("command")} == entry:
                return {**group_of(shipped, event, handler), "hooks": [entry]}
    return {"hooks": [entry]}


def _made(created: list[list[str]] | None, path: list[str]) -> bool:
    """Whether install created the container at ``path`` (no record: assume it did)."""
    return created is None or path in created


def _load(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The settings file as a dict and as text; (None, None) when it does not exist."""
    try:
        raw = _real(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text; bourdon changed nothing") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    if not raw.strip():
        return {}, raw
    return parse_settings(raw, path), raw


def _real(path: Path) -> Path:
    """The file a symlinked settings file points at (dotfile managers link them)."""
    return path.resolve() if path.is_symlink() else path


def _write(path: Path, text: str) -> None:
    # The user's file keeps its permission bits; a symlinked one is written where it points.
    atomic_write(_real(path), text.encode("utf-8"), keep_mode=True)


def _backup(path: Path, raw: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    backup = path.with_name(f"{path.name}{BACKUP}{stamp}")
    n = 1
    while backup.exists():
        n += 1
        backup = path.with_name(f"{path.name}{BACKUP}{stamp}-{n}")
    real = _real(path)
    backup.write_bytes(real.read_bytes() if real.exists() else raw.encode("utf-8"))
    return backup
