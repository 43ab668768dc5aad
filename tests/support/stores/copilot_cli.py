"""A realistic GitHub Copilot CLI store: session folders, ``session-store.db``, messy cases.

``write_store(home)`` writes ``home/.copilot`` and returns it; project folders live under
``home/src`` and ``home/private``. Deterministic for a given ``seed`` and ``sessions``.

Messy cases (native-stores.md 10.3): a live session (``inuse.<pid>.lock``, no
``session.shutdown``, a truncated last line); a BOM on line 1, CRLF line ends and blank lines;
an unknown event type; a duplicated event; an event without a timestamp and a session whose
events have none; invalid UTF-8 in a prompt; a 1 MB tool result; a failed edit; ``+02:00``
offsets and a late-evening start that is the next day in Paris; Windows paths; empty template
folders; ``workspace.yaml`` with double-, single-quoted, plain and block values, one with a
BOM and CRLF; ``session-store.db`` in WAL mode with rows committed but not checkpointed, a
session known only to the database, NULL summaries and an epoch-ms string timestamp.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

TOKEN = "CANARY-copilot-cli-oauth-token-51e0c7"

DDL = (
    "CREATE TABLE schema_version (version INTEGER)",
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT, repository TEXT, host_type TEXT,"
    " branch TEXT, summary TEXT, created_at TEXT, updated_at TEXT)",
    "CREATE TABLE turns (session_id TEXT, turn_index INTEGER, user_message TEXT,"
    " assistant_response TEXT, timestamp TEXT, PRIMARY KEY (session_id, turn_index))",
    "CREATE TABLE session_files (session_id TEXT, file_path TEXT, tool_name TEXT,"
    " turn_index INTEGER)",
    "CREATE TABLE session_refs (session_id TEXT, ref_type TEXT, ref_value TEXT)",
)

WORK = {
    "ledgerline": [
        ("add a CSV importer", "create", "ledgerline/importers/csv_bank.py"),
        ("use Decimal for every amount", "edit", "ledgerline/money.py"),
        ("add a --dry-run flag to import", "str_replace_editor", "ledgerline/cli.py"),
        ("write tests for the importer", "create", "tests/test_importer.py"),
    ],
    "docs-site": [
        ("rewrite the quickstart", "edit", "docs/quickstart.md"),
        ("add a dark mode toggle", "apply_patch", "src/theme.js"),
    ],
    "infra-terraform": [
        ("add a private subnet for the workers", "edit", "modules\\net\\main.tf"),
        ("tag every resource with the team name", "edit", "main.tf"),
    ],
    "taxes": [("sum the 2025 receipts by month", "create", "receipts_2025.py")],
}
TITLES = {
    "ledgerline": "CSV importer work",
    "docs-site": "Docs: quickstart",
    "infra-terraform": "Terraform networking",
    "taxes": "Receipts",
}


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def _lines(records: list[Any], *, crlf: bool = False, bom: bool = False) -> bytes:
    out = []
    for record in records:
        out.append(record if isinstance(record, bytes) else json.dumps(record).encode())
    end = b"\r\n" if crlf else b"\n"
    return (b"\xef\xbb\xbf" if bom else b"") + end.join(out) + end


def write_db(
    dest: Path, rows: dict[str, list[tuple[Any, ...]]], late: dict[str, list[tuple[Any, ...]]]
) -> Path:
    """``session-store.db`` in WAL mode: ``late`` rows committed in the ``-wal`` only."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "session-store.db"
        conn = sqlite3.connect(path)
        try:
            conn.execute("PRAGMA journal_mode=wal")
            conn.execute("PRAGMA wal_autocheckpoint=0")
            for statement in DDL:
                conn.execute(statement)
            _insert(conn, rows)
            conn.commit()
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            _insert(conn, late)
            conn.commit()
            for suffix in ("", "-wal", "-shm"):
                shutil.copyfile(f"{path}{suffix}", f"{dest}{suffix}")
        finally:
            conn.close()
    return dest


def _insert(conn: sqlite3.Connection, rows: dict[str, list[tuple[Any, ...]]]) -> None:
    for table, items in rows.items():
        for item in items:
            marks = ", ".join("?" for _ in item)
            conn.execute(f"INSERT INTO {table} VALUES ({marks})", item)


class _Session:
    def __init__(self, rng: random.Random, sid: str, cwd: str, start: datetime | None) -> None:
        self.rng, self.sid, self.cwd, self.moment = rng, sid, cwd, start
        self.events: list[Any] = []
        self.last: str | None = None

    def event(self, kind: str, data: dict[str, Any], *, stamp: bool = True) -> dict[str, Any]:
        eid = f"e{len(self.events) + 1}"
        record: dict[str, Any] = {"type": kind, "id": eid, "parentId": self.last, "data": data}
        if stamp and self.moment is not None:
            record["timestamp"] = _iso(self.moment)
            self.moment += timedelta(seconds=self.rng.randint(3, 90))
        self.events.append(record)
        self.last = eid
        return record

    def start(self, **context: Any) -> None:
        self.event(
            "session.start",
            {
                "sessionId": self.sid,
                "version": 1,
                "producer": "copilot-agent",
                "copilotVersion": "1.0.63",
                **({"startTime": _iso(self.moment)} if self.moment else {}),
                "context": {"cwd": self.cwd, **context},
            },
        )

    def prompt(self, text: str) -> None:
        self.event(
            "user.message",
            {
                "content": text,
                "interactionId": f"i-{self.rng.getrandbits(24):06x}",
                "transformedContent": f"<current_datetime>now</current_datetime>\n{text}",
                "attachments": [],
            },
        )
        self.event("assistant.turn_start", {"turnId": "t"})

    def edit(self, tool: str, path: str, *, ok: bool = True, output: str = "done") -> None:
        call = f"tc-{self.rng.getrandbits(32):08x}"
        if tool == "apply_patch":
            args: Any = {
                "input": f"*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch"
            }
        elif tool == "str_replace_editor":
            args = {"command": "str_replace", "path": path, "old_str": "a", "new_str": "b"}
        else:
            args = {"path": path, "file_text": "x = 1\n"}
        self.event(
            "tool.execution_start", {"toolCallId": call, "toolName": tool, "arguments": args}
        )
        result = {"toolCallId": call, "success": ok}
        result.update({"result": {"content": output}} if ok else {"error": {"message": "denied"}})
        self.event("tool.execution_complete", result)

    def view(self, path: str) -> None:
        call = f"tc-{self.rng.getrandbits(32):08x}"
        self.event(
            "tool.execution_start",
            {"toolCallId": call, "toolName": "view", "arguments": {"path": path}},
        )
        self.event(
            "tool.execution_complete",
            {"toolCallId": call, "success": True, "result": {"content": "..."}},
        )

    def shutdown(self) -> None:
        self.event("session.shutdown", {"modelMetrics": {}, "codeChanges": {"linesAdded": 3}})


def write_store(home: Path, *, seed: int = 0, sessions: int = 10) -> Path:
    """Write a Copilot CLI store under ``home`` and return ``home/.copilot``."""
    rng = random.Random(f"copilot-cli-{seed}")
    root = home / ".copilot"
    state = root / "session-state"
    src = home / "src"
    for repo in (src / "ledgerline", src / "docs-site", home / "private" / "taxes"):
        (repo / ".git").mkdir(parents=True)
    instructions_time = datetime(2026, 6, 1, 7, 0, tzinfo=UTC).timestamp()
    for path, text in (
        (root / "copilot-instructions.md", "Prefer small commits.\nNever push to main.\n"),
        (
            src / "ledgerline" / ".github" / "copilot-instructions.md",
            "Money is always decimal.Decimal.\r\nRun `pytest -q` before finishing.\r\n",
        ),
    ):
        _write(path, text)
        os.utime(path, (instructions_time, instructions_time))
    _write(root / "config.json", json.dumps({"auth": {"token": TOKEN}, "model": "gpt-5"}))
    cwds = {
        "ledgerline": str(src / "ledgerline"),
        "docs-site": str(src / "docs-site"),
        "infra-terraform": "C:\\Users\\dana\\src\\infra-terraform",
        "taxes": str(home / "private" / "taxes"),
    }
    db_sessions: list[tuple[Any, ...]] = []
    db_files: list[tuple[Any, ...]] = []
    db_turns: list[tuple[Any, ...]] = []
    late: dict[str, list[tuple[Any, ...]]] = {"sessions": [], "turns": [], "session_files": []}
    rotation = ["ledgerline", "docs-site", "infra-terraform", "ledgerline", "taxes"]
    base = datetime(2026, 6, 2, 7, 30, tzinfo=UTC)
    for i in range(sessions):
        project = rotation[i % len(rotation)]
        sid = _uuid(rng)
        start = base + timedelta(days=2 * i, hours=rng.randint(0, 9), minutes=rng.randint(0, 59))
        s = _Session(rng, sid, cwds[project], start)
        s.start(branch="main", gitRoot=cwds[project])
        work = rng.sample(WORK[project], k=min(len(WORK[project]), rng.randint(1, 3)))
        for prompt, tool, file in work:
            s.prompt(prompt)
            s.view(file)
            absolute = i % 2 == 0
            sep = "\\" if project == "infra-terraform" else "/"
            s.edit(tool, f"{cwds[project]}{sep}{file}" if absolute else file)
            s.event("assistant.message", {"content": "", "messageId": "m", "toolRequests": []})
        s.shutdown()
        folder = state / sid
        _write(folder / "events.jsonl", _lines(s.events))
        title = TITLES[project]
        quoted = (
            f'name: "{title}: part {i}"'
            if i % 3 == 0
            else f"name: '{title} (Dana''s)'"
            if i % 3 == 1
            else f"name: {title}"
        )
        _write(
            folder / "workspace.yaml",
            "\n".join(
                [
                    f"id: {sid}",
                    f"cwd: {cwds[project]!s}"
                    if project != "infra-terraform"
                    else f"cwd: '{cwds[project]}'",
                    f"git_root: {cwds[project]}",
                    "branch: main",
                    quoted,
                    "user_named: false",
                    "summary_count: 0",
                    f"created_at: {_iso(start)}",
                    f"updated_at: {_iso(start + timedelta(minutes=20))}",
                    "",
                ]
            ),
        )
        (folder / "checkpoints").mkdir()
        _write(folder / "checkpoints" / "index.md", "# Checkpoints\n")
        db_sessions.append(
            (
                sid,
                cwds[project],
                None,
                "cli",
                "main",
                None if i % 4 == 0 else title,
                _iso(start),
                _iso(start),
            )
        )
        db_files += [(sid, f, t, n) for n, (_, t, f) in enumerate(work)]

    # A live session that crashed mid-write: lock file, no shutdown, a torn last line; BOM,
    # CRLF, blank lines, an unknown event, a duplicate, a failed edit, a 1 MB tool output.
    live = _uuid(rng)
    s = _Session(rng, live, cwds["ledgerline"], datetime(2026, 6, 14, 22, 30, tzinfo=UTC))
    s.start(branch="feat/report")
    s.prompt("add a monthly report command")
    dup = s.events[-2]
    s.events.append(dup)  # the same event twice
    s.edit("create", "ledgerline/report.py", output="x" * 1_000_000)
    s.edit("edit", "ledgerline/FAILED.py", ok=False)
    s.event("session.telemetry_v9", {"opaque": True})
    s.event("session.info", {"message": "no timestamp"}, stamp=False)
    s.prompt("Marco wants CSV output too")
    s.edit("edit", "ledgerline/report.py")
    body = _lines([*s.events[:3], b"", *s.events[3:]], crlf=True, bom=True)
    body += json.dumps(
        {"type": "user.message", "id": "torn", "data": {"content": "half"}}
    ).encode()[:40]
    _write(state / live / "events.jsonl", body)
    _write(state / live / "inuse.4242.lock", "4242")
    _write(
        state / live / "workspace.yaml",
        "\ufeffid: " + live + "\r\ncwd: " + cwds["ledgerline"] + '\r\nname: "Monthly report"\r\n'
        "summary: |\r\n  Report command\r\n  with CSV\r\n",
    )
    db_sessions.append(
        (
            live,
            cwds["ledgerline"],
            None,
            "cli",
            "feat/report",
            None,
            _iso(datetime(2026, 6, 14, 22, 30, tzinfo=UTC)),
            None,
        )
    )

    # Events only (no workspace.yaml), invalid UTF-8 in a prompt, +02:00 offsets.
    bare = _uuid(rng)
    s = _Session(rng, bare, cwds["docs-site"], None)
    s.start()
    s.events[0]["timestamp"] = "2026-06-20T09:15:00.000+02:00"
    s.event("user.message", {"content": "PLACEHOLDER"}, stamp=False)
    s.events[-1]["timestamp"] = "2026-06-20T09:16:00.000+02:00"
    s.edit("apply_patch", f"{cwds['docs-site']}/docs/index.md")
    raw = _lines(s.events).replace(b"PLACEHOLDER", b"fix the caf\xc3\xa9 \xff\xfe page")
    _write(state / bare / "events.jsonl", raw)

    # No timestamp in any event: the date comes from workspace.yaml created_at.
    undated = _uuid(rng)
    s = _Session(rng, undated, cwds["infra-terraform"], None)
    s.start()
    s.prompt("rename the workers subnet")
    s.edit("edit", "C:\\Users\\dana\\src\\infra-terraform\\modules\\net\\subnets.tf")
    _write(state / undated / "events.jsonl", _lines(s.events))
    _write(
        state / undated / "workspace.yaml",
        f'id: {undated}\ncwd: "C:\\\\Users\\\\dana\\\\src\\\\infra-terraform"\n'
        "name: Subnet rename  # renamed by hand\ncreated_at: 2026-06-22T06:05:00.000Z\n",
    )

    # Empty templates: no events, no workspace.yaml.
    for _ in range(3):
        empty = state / _uuid(rng)
        (empty / "files").mkdir(parents=True)
    _write(state / _uuid(rng) / "plan.md", "")

    # Known only to the database, committed in the -wal (not checkpointed).
    gone = _uuid(rng)
    late["sessions"].append(
        (
            gone,
            cwds["ledgerline"],
            "dana/ledgerline",
            "cli",
            "main",
            "Payee matching",
            "1781253000000",
            None,
        )
    )
    late["turns"] += [
        (gone, 0, "match payees with rapidfuzz", "done", "2026-06-12T08:30:00Z"),
        (gone, 1, "use a cutoff of 85", "done", "2026-06-12T08:41:00Z"),
    ]
    late["session_files"] += [
        (gone, "ledgerline/payees.py", "edit", 0),
        (gone, "ledgerline/README.md", "view", 1),
    ]
    write_db(
        root / "session-store.db",
        {
            "schema_version": [(4,)],
            "sessions": db_sessions,
            "turns": db_turns,
            "session_files": db_files,
        },
        late,
    )
    return root
