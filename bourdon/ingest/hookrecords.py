"""What ``hooks install`` created, remembered in ``<state_dir>/hooks-installed.json`` (the
file, ``hooks``, an event list, Cursor's ``version``), so that uninstall takes out those
containers and nothing the user had. One record per settings file, keyed by its real path.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from bourdon.store.durable import atomic_write

STATE_FILE: Final = "hooks-installed.json"


def _real(path: Path) -> Path:
    """The file a symlinked settings file points at (dotfile managers link them)."""
    return path.resolve() if path.is_symlink() else path


def key(path: Path) -> str:
    """The record's key: the settings file's real, absolute path."""
    return str(_real(path.expanduser()).absolute())


def records(state_dir: Path) -> dict[str, Any]:
    """Every record (settings file -> what install created); {} when there is none."""
    try:
        data = json.loads((state_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(state_dir: Path, found: dict[str, Any]) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    target_file = state_dir / STATE_FILE
    if not found:
        with contextlib.suppress(FileNotFoundError):
            target_file.unlink()
        return
    text = json.dumps(found, indent=2, sort_keys=True) + "\n"
    atomic_write(target_file, text.encode("utf-8"), keep_mode=True)


def remember(
    state_dir: Path,
    path: Path,
    agent: str,
    created: list[list[str]],
    *,
    file_created: bool,
    backup: Path | None,
    dropped: Sequence[list[str]] = (),
    dirs: Sequence[Path] = (),
) -> None:
    found = records(state_dir)
    where = key(path)
    old = found.get(where) if isinstance(found.get(where), dict) else None
    before = [list(p) for p in old.get("created", [])] if old else []
    kept = [p for p in before if p not in dropped]
    found[where] = {
        "agent": agent,
        "file_created": bool(old.get("file_created")) if old else file_created,
        "created": kept + [p for p in created if p not in kept],
        "installed_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "backup": str(backup) if backup else (old or {}).get("backup"),
        # The folders install made for the file, taken away with it when empty.
        "dirs": list((old or {}).get("dirs") or []) + [str(d) for d in dirs],
    }
    _save(state_dir, found)


def forget(state_dir: Path, path: Path) -> None:
    found = records(state_dir)
    if found.pop(key(path), None) is not None:
        _save(state_dir, found)
