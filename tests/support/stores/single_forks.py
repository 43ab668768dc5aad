"""The smallest store of Roo Code, Kilo Code and Qwen Code: one session in a given folder.

Like ``single.py`` for the readers registered as entry points: ``write_session(agent, home,
cwd)`` writes it under ``home`` and returns the store folder to hand a reader as
``ReaderContext.store``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.support.stores.single import EPOCH_MS, PROMPT, SESSION, STAMP


def _write(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data, encoding="utf-8")


def _task(root: Path, cwd: str) -> Path:
    item = {"id": str(EPOCH_MS), "number": 1, "ts": EPOCH_MS, "task": PROMPT, "workspace": cwd}
    _write(root / "tasks" / str(EPOCH_MS) / "history_item.json", json.dumps(item))
    return root


def _roo_code(home: Path, cwd: str) -> Path:
    return _task(home / ".vscode-mock" / "global-storage", cwd)


def _kilo_code(home: Path, cwd: str) -> Path:
    return _task(home / ".kilocode" / "cli" / "global", cwd)


def _qwen_code(home: Path, cwd: str) -> Path:
    root = home / ".qwen"
    record = {
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": SESSION,
        "timestamp": STAMP,
        "type": "user",
        "cwd": cwd,
        "message": {"role": "user", "parts": [{"text": PROMPT}]},
    }
    _write(
        root / "projects" / "some-folder" / "chats" / f"{SESSION}.jsonl", json.dumps(record) + "\n"
    )
    return root


WRITERS: dict[str, Callable[[Path, str], Path]] = {
    "roo-code": _roo_code,
    "kilo-code": _kilo_code,
    "qwen-code": _qwen_code,
}


def write_session(agent: str, home: Path, cwd: str) -> Path:
    """One session of ``agent`` whose working folder is ``cwd``; the store folder it wrote."""
    return WRITERS[agent](home, cwd)
