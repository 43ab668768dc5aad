"""The smallest native store of each agent: one session, one prompt, in a given folder.

``write_session(agent, home, cwd)`` writes it under the virtual ``home`` and returns the store
folder to hand a reader as ``ReaderContext.store``. It lets one table of folders run through
every reader (tests/readers/test_private_paths.py) without the full generators' noise.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

SESSION = "0b7e6a52-3c1d-4f7a-9e2b-5d8c1a4f6e90"
STAMP = "2026-06-01T10:00:00.000Z"
EPOCH_MS = 1780308000000
PROMPT = "tidy the importer"


def _write(path: Path, data: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data, encoding="utf-8")


def _jsonl(*records: Any) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def _claude_code(home: Path, cwd: str) -> Path:
    root = home / ".claude"
    record = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": SESSION,
        "timestamp": STAMP,
        "cwd": cwd,
        "message": {"role": "user", "content": PROMPT},
    }
    _write(root / "projects" / "-some-folder" / f"{SESSION}.jsonl", _jsonl(record))
    return root


def _codex(home: Path, cwd: str) -> Path:
    root = home / ".codex"
    rollout = (
        root / "sessions" / "2026" / "06" / "01" / f"rollout-2026-06-01T12-00-00-{SESSION}.jsonl"
    )
    _write(
        rollout,
        _jsonl(
            {
                "timestamp": STAMP,
                "type": "session_meta",
                "payload": {"id": SESSION, "cwd": cwd, "timestamp": STAMP},
            },
            {
                "timestamp": STAMP,
                "type": "event_msg",
                "payload": {"type": "user_message", "message": PROMPT},
            },
        ),
    )
    return root


def _cursor(home: Path, cwd: str) -> Path:
    user = home / ".config" / "Cursor" / "User"
    _write(user / "workspaceStorage" / "ws1" / "workspace.json", json.dumps({"folder": cwd}))
    _kv_db(
        user / "workspaceStorage" / "ws1" / "state.vscdb",
        {"ItemTable": {"composer.composerData": {"allComposers": [{"composerId": SESSION}]}}},
    )
    bubble = {"type": 1, "text": PROMPT, "createdAt": STAMP}
    composer = {
        "composerId": SESSION,
        "createdAt": EPOCH_MS,
        "fullConversationHeadersOnly": [{"bubbleId": "b1", "type": 1}],
    }
    _kv_db(
        user / "globalStorage" / "state.vscdb",
        {
            "ItemTable": {},
            "cursorDiskKV": {f"composerData:{SESSION}": composer, f"bubbleId:{SESSION}:b1": bubble},
        },
    )
    return user


def _kv_db(path: Path, tables: dict[str, dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        for table, rows in tables.items():
            conn.execute(f"CREATE TABLE {table} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
            for key, value in rows.items():
                conn.execute(f"INSERT INTO {table} VALUES (?, ?)", (key, json.dumps(value)))
        conn.commit()
    finally:
        conn.close()


def _copilot(home: Path, cwd: str) -> Path:
    user = home / ".config" / "Code" / "User"
    workspace = user / "workspaceStorage" / "ws1"
    _write(workspace / "workspace.json", json.dumps({"folder": cwd}))
    state = {
        "version": 3,
        "sessionId": SESSION,
        "creationDate": EPOCH_MS,
        "requests": [
            {"requestId": "r1", "timestamp": EPOCH_MS, "message": {"text": PROMPT}, "response": []}
        ],
    }
    _write(workspace / "chatSessions" / f"{SESSION}.json", json.dumps(state))
    return user


def _copilot_cli(home: Path, cwd: str) -> Path:
    root = home / ".copilot"
    folder = root / "session-state" / SESSION
    _write(
        folder / "workspace.yaml", f"id: {SESSION}\ncwd: {json.dumps(cwd)}\ncreated_at: {STAMP}\n"
    )
    _write(
        folder / "events.jsonl",
        _jsonl(
            {"type": "user.message", "id": "e1", "timestamp": STAMP, "data": {"content": PROMPT}}
        ),
    )
    return root


def _gemini_cli(home: Path, cwd: str) -> Path:
    root = home / ".gemini"
    _write(root / "projects.json", json.dumps({"projects": {cwd: "some-folder"}}))
    _write(root / "tmp" / "some-folder" / ".project_root", cwd)
    chat = {
        "sessionId": SESSION,
        "projectHash": "some-folder",
        "startTime": STAMP,
        "lastUpdated": STAMP,
        "messages": [{"id": "m1", "timestamp": STAMP, "type": "user", "content": PROMPT}],
    }
    _write(
        root / "tmp" / "some-folder" / "chats" / "session-2026-06-01T10-00-0b7e6a52.json",
        json.dumps(chat),
    )
    return root


def _cline(home: Path, cwd: str) -> Path:
    root = home / ".cline" / "data"
    item = {"id": "1780308000000", "ts": EPOCH_MS, "task": PROMPT, "cwdOnTaskInitialization": cwd}
    _write(root / "state" / "taskHistory.json", json.dumps([item]))
    return root


def _opencode(home: Path, cwd: str) -> Path:
    root = home / ".local" / "share" / "opencode"
    storage = root / "storage"
    session = {"id": "ses_1", "directory": cwd, "title": "", "time": {"created": EPOCH_MS}}
    _write(storage / "session" / "p1" / "ses_1.json", json.dumps(session))
    message = {"id": "msg_1", "sessionID": "ses_1", "role": "user", "time": {"created": EPOCH_MS}}
    _write(storage / "message" / "ses_1" / "msg_1.json", json.dumps(message))
    _write(storage / "part" / "msg_1" / "prt_1.json", json.dumps({"type": "text", "text": PROMPT}))
    return root


def _goose(home: Path, cwd: str) -> Path:
    root = home / ".local" / "share" / "goose" / "sessions"
    meta = {"working_dir": cwd, "description": "", "message_count": 1}
    prompt = {
        "role": "user",
        "created": EPOCH_MS // 1000,
        "content": [{"type": "text", "text": PROMPT}],
    }
    _write(root / "20260601_1.jsonl", _jsonl(meta, prompt))
    return root


def _continue_dev(home: Path, cwd: str) -> Path:
    root = home / ".continue"
    index = [
        {
            "sessionId": SESSION,
            "title": PROMPT,
            "dateCreated": str(EPOCH_MS),
            "workspaceDirectory": cwd,
        }
    ]
    _write(root / "sessions" / "sessions.json", json.dumps(index))
    return root


WRITERS: dict[str, Callable[[Path, str], Path]] = {
    "claude-code": _claude_code,
    "codex": _codex,
    "cursor": _cursor,
    "copilot": _copilot,
    "copilot-cli": _copilot_cli,
    "gemini-cli": _gemini_cli,
    "cline": _cline,
    "continue-dev": _continue_dev,
    "opencode": _opencode,
    "goose": _goose,
}


def write_session(agent: str, home: Path, cwd: str) -> Path:
    """One session of ``agent`` whose working folder is ``cwd``; the store folder it wrote."""
    return WRITERS[agent](home, cwd)
