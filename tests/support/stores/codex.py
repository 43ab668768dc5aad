"""A deterministic, realistic Codex CLI store (``~/.codex``) under a fake home.

>>> store = write_store(tmp_path / "home", seed=0)                  # doctest: +SKIP

What it writes (native-stores.md sections 2 and 10), for a host in America/New_York:

- the same git repositories as the Claude Code generator (``write_repos``);
- ``sessions`` ordinary rollouts in ``sessions/YYYY/MM/DD/`` named by *local* time with UTC
  inside, then the messy cases of native-stores.md 10.3 that apply to Codex (see ``_messy``):
  a session at 23:50 local that is already the next UTC day, old and new ``session_meta``
  shapes, a cwd change, a resume, ``compacted``, both ``apply_patch`` encodings and the shell
  form, ``patch_apply_end`` with add/update/delete/move, unknown types, a torn last line, a last
  record without newline, CRLF and blank lines, invalid UTF-8, a lone surrogate, NUL and ANSI
  escapes, a 3 MB output line, a fork, a subagent, the memory agent's own thread, a Windows
  session, an archived rollout, an empty file;
- ``history.jsonl`` (``session_id`` and ``conversation_id`` keys), ``session_index.jsonl``
  with renames, ``state_5.sqlite`` in WAL mode whose last rows exist only in the ``-wal`` file
  (a stale ``rollout_path`` row, and a rollout with no row), memories in both layouts,
  ``AGENTS.md``, ``config.toml``, ``hooks.json`` and an ``auth.json`` no reader may read.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sqlite3
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from tests.support.stores.claude_code import MTIME, PROJECTS, TITLES, write_repos

HOST_TZ = ZoneInfo("America/New_York")
BASE = datetime(2026, 6, 1, 13, 0, tzinfo=UTC)
SECRET = "sk-test-DO-NOT-EXPORT-0123456789"
_DDL = """
CREATE TABLE _sqlx_migrations (version BIGINT PRIMARY KEY, description TEXT NOT NULL,
  installed_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, success BOOLEAN NOT NULL,
  checksum BLOB NOT NULL, execution_time BIGINT NOT NULL);
CREATE TABLE threads (
  id TEXT PRIMARY KEY, rollout_path TEXT NOT NULL, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, source TEXT NOT NULL, model_provider TEXT NOT NULL,
  cwd TEXT NOT NULL, title TEXT NOT NULL, sandbox_policy TEXT NOT NULL,
  approval_mode TEXT NOT NULL, tokens_used INTEGER NOT NULL DEFAULT 0,
  has_user_event INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0,
  archived_at INTEGER, git_sha TEXT, git_branch TEXT, git_origin_url TEXT,
  created_at_ms INTEGER, updated_at_ms INTEGER, first_user_message TEXT,
  memory_mode TEXT NOT NULL DEFAULT 'enabled', agent_nickname TEXT, agent_role TEXT,
  parent_thread_id TEXT);
CREATE INDEX idx_threads_created_at ON threads(created_at DESC, id DESC);
"""
THREAD_COLUMNS = (
    "id rollout_path created_at updated_at source model_provider cwd title sandbox_policy "
    "approval_mode tokens_used archived git_origin_url created_at_ms updated_at_ms "
    "first_user_message parent_thread_id".split()
)


def write_store(home: Path, *, seed: int = 0, sessions: int = 12, size: str = "unit") -> Path:
    """Write the store under ``home`` (created if needed); return ``home / ".codex"``."""
    if size not in ("unit", "bench"):
        raise ValueError(f"size must be 'unit' or 'bench', got {size!r}")
    home = Path(home)
    root = home / ".codex"
    root.mkdir(parents=True, exist_ok=True)
    write_repos(home)
    gen = _Gen(home, root, random.Random(f"codex-{seed}"), bench=size == "bench")
    for n in range(sessions):
        gen.ordinary(n, sessions)
    _messy(gen)
    gen.side_files()
    gen.database()
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        os.utime(path, (MTIME, MTIME))
    for path, when in gen.mtimes.items():
        os.utime(path, (when, when))
    return root


def rollout_name(thread_id: str, start: datetime) -> str:
    """``rollout-<local time>-<id>.jsonl``: the host's local time, ``-`` for ``:``."""
    local = start.astimezone(HOST_TZ)
    return f"rollout-{local.strftime('%Y-%m-%dT%H-%M-%S')}-{thread_id}.jsonl"


def _stamp(moment: datetime) -> str:
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


class _Rollout:
    """One rollout file's lines, in the ``{"timestamp", "type", "payload"}`` envelope."""

    def __init__(self, gen: _Gen, tid: str, cwd: str, start: datetime) -> None:
        self.gen, self.tid, self.cwd, self.start, self.now = gen, tid, cwd, start, start
        self.lines: list[bytes] = []
        self.turn = ""

    def tick(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def line(self, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        record = {"timestamp": _stamp(self.now), "type": kind, "payload": payload}
        try:
            data = json.dumps(record, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate is written as an escape
            data = json.dumps(record).encode("ascii")
        self.lines.append(data + b"\n")
        return record

    def meta(self, *, old: bool = False, url: str | None = None, **extra: Any) -> None:
        payload: dict[str, Any] = {
            "id": self.tid,
            "timestamp": _stamp(self.now),
            "cwd": self.cwd,
            "originator": "codex_cli_rs",
            "cli_version": "0.31.0" if old else "0.104.0",
        }
        if old:
            payload["instructions"] = "You are Codex, a coding agent."
        else:
            payload |= {
                "source": "cli",
                "model_provider": "openai",
                "base_instructions": {"text": "You are Codex, a coding agent. " * 40},
            }
        if url:
            payload["git"] = {"commit_hash": "9f2c1e7b3a", "branch": "main", "repository_url": url}
        payload |= extra
        self.line("session_meta", payload)

    def context(self, cwd: str | None = None) -> None:
        self.tick(1)
        if cwd:
            self.cwd = cwd
        self.turn = self.gen.uuid7(self.now)
        self.line(
            "turn_context",
            {
                "turn_id": self.turn,
                "cwd": self.cwd,
                "current_date": self.now.astimezone(HOST_TZ).date().isoformat(),
                "timezone": "America/New_York",
                "approval_policy": "on-request",
                "sandbox_policy": {"type": "workspace-write", "network_access": False},
                "model": "gpt-5.3-codex",
                "effort": "medium",
                "summary": "auto",
            },
        )

    def user(self, text: str, *, event: bool = True) -> None:
        self.tick(self.gen.rng.randint(10, 120))
        content = [{"type": "input_text", "text": text}]
        self.line("response_item", {"type": "message", "role": "user", "content": content})
        if event:
            self.line("event_msg", {"type": "user_message", "message": text, "images": []})

    def environment(self) -> None:
        text = f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n</environment_context>"
        self.line(
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        )

    def reasoning(self) -> None:
        self.tick(2)
        summary = [{"type": "summary_text", "text": "**Planning the change**"}]
        self.line(
            "response_item",
            {
                "type": "reasoning",
                "summary": summary,
                "content": None,
                "encrypted_content": "gA" * 200,
            },
        )

    def shell(self, command: str, output: str) -> None:
        self.tick(3)
        call = self.gen.call()
        arguments = json.dumps({"cmd": command, "workdir": self.cwd})
        self.line(
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": arguments,
                "call_id": call,
            },
        )
        self.line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": call,
                "output": f"Exit code: 0\nWall time: 0.4 seconds\nOutput:\n{output}",
            },
        )

    def patch(
        self, changes: list[tuple[str, str]], form: str = "custom", applied: bool = True
    ) -> str:
        """An apply_patch call (``custom``, ``function`` or ``shell`` form) and its result."""
        self.tick(5)
        call = self.gen.call()
        body = "*** Begin Patch\n"
        for op, rel in changes:
            if op == "move":
                old, new = rel.split(">")
                body += f"*** Update File: {old}\n*** Move to: {new}\n@@\n-x\n+y\n"
            else:
                verb = {"add": "Add", "update": "Update", "delete": "Delete"}[op]
                body += f"*** {verb} File: {rel}\n" + (
                    "+import csv\n" if op == "add" else "@@\n-a\n+b\n"
                )
        body += "*** End Patch\n"
        if form == "custom":
            item = {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": call,
                "name": "apply_patch",
                "input": body,
            }
        elif form == "function":
            item = {
                "type": "function_call",
                "name": "apply_patch",
                "arguments": json.dumps({"input": body}),
                "call_id": call,
            }
        else:
            item = {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["apply_patch", body]}),
                "call_id": call,
            }
        self.line("response_item", item)
        if applied:
            result: dict[str, Any] = {}
            for op, rel in changes:
                if op == "move":
                    old, new = rel.split(">")
                    result[self.abs(old)] = {
                        "type": "update",
                        "unified_diff": "@@ -1 +1 @@\n-x\n+y\n",
                        "move_path": self.abs(new),
                    }
                elif op == "add":
                    result[self.abs(rel)] = {"type": "add", "content": "import csv\n"}
                elif op == "delete":
                    result[self.abs(rel)] = {"type": "delete", "content": "old\n"}
                else:
                    result[self.abs(rel)] = {
                        "type": "update",
                        "unified_diff": "@@ -1 +1 @@\n-a\n+b\n",
                        "move_path": None,
                    }
            self.tick(1)
            self.line(
                "event_msg",
                {
                    "type": "patch_apply_end",
                    "call_id": call,
                    "turn_id": self.turn,
                    "stdout": "Success.",
                    "stderr": "",
                    "success": True,
                    "changes": result,
                },
            )
        return call

    def abs(self, rel: str) -> str:
        if self.cwd.startswith("C:"):
            return self.cwd + "\\" + rel.replace("/", "\\")
        return f"{self.cwd}/{rel}"

    def reply(self, text: str) -> None:
        self.tick(4)
        self.line("event_msg", {"type": "agent_message", "message": text})
        self.line(
            "event_msg",
            {
                "type": "token_count",
                "info": {"total_token_usage": {"input_tokens": 18230, "output_tokens": 311}},
                "rate_limits": None,
            },
        )
        self.line(
            "event_msg", {"type": "task_complete", "last_agent_message": text, "duration_ms": 41000}
        )

    def path(self, archived: bool = False) -> Path:
        if archived:
            return self.gen.root / "archived_sessions" / rollout_name(self.tid, self.start)
        local = self.start.astimezone(HOST_TZ)
        day = self.gen.root / "sessions" / f"{local:%Y}" / f"{local:%m}" / f"{local:%d}"
        return day / rollout_name(self.tid, self.start)

    def write(self, *, archived: bool = False, newline_at_end: bool = True) -> Path:
        path = self.path(archived)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = b"".join(self.lines)
        path.write_bytes(data if newline_at_end else data.rstrip(b"\n"))
        self.gen.written[self.tid] = (self, path)
        return path


class _Gen:
    def __init__(self, home: Path, root: Path, rng: random.Random, *, bench: bool) -> None:
        self.home, self.root, self.rng, self.bench = home, root, rng, bench
        self.written: dict[str, tuple[_Rollout, Path]] = {}
        self.firsts: dict[str, str] = {}  # thread id -> first user message
        self.history: list[dict[str, Any]] = []
        self.index: list[dict[str, Any]] = []
        self.mtimes: dict[Path, float] = {}
        self.ids: dict[str, str] = {}
        self.no_row: set[str] = set()

    def uuid7(self, moment: datetime) -> str:
        ms = int(moment.timestamp() * 1000)
        value = (ms << 80) | (7 << 76) | (self.rng.getrandbits(12) << 64) | (2 << 62)
        value |= self.rng.getrandbits(62)
        text = f"{value:032x}"
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"

    def call(self) -> str:
        return "call_" + "".join(
            self.rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
            for _ in range(10)
        )

    def cwd(self, rel: str) -> str:
        return f"{self.home}/{rel}"

    def say(
        self, r: _Rollout, text: str, *, event: bool = True, history_key: str = "session_id"
    ) -> None:
        r.user(text, event=event)
        self.firsts.setdefault(r.tid, text)
        self.history.append({history_key: r.tid, "ts": int(r.now.timestamp()), "text": text})

    def block(self) -> str:
        rng = random.Random(2)
        words = "PASS FAIL test_import test_cli Decimal rounding ledger row plan apply".split()
        return "\n".join(
            f"{rng.choice(words)} {i} {rng.choice(words)} {rng.choice(words)}" for i in range(9000)
        )

    def ordinary(self, n: int, total: int) -> None:
        rng = self.rng
        _, rel, url, prompts, files = PROJECTS[n % len(PROJECTS)]
        start = BASE + timedelta(
            days=(n * 29) // max(total, 1), hours=rng.randint(0, 8), minutes=rng.randint(0, 59)
        )
        r = _Rollout(self, self.uuid7(start), self.cwd(rel), start)
        r.meta(url=url)
        r.context()
        r.environment()
        chosen = rng.sample(prompts, k=min(len(prompts), rng.randint(1, 3)))
        big = self.block() if self.bench else ""
        for text in chosen:
            self.say(r, text)
            r.reasoning()
            r.shell("rg -n TODO", f"{files[0]}:12:# TODO")
            picked = rng.sample(files, k=min(len(files), rng.randint(1, 2)))
            r.patch(
                [("update", f) for f in picked], form=rng.choice(["custom", "custom", "function"])
            )
            r.shell("pytest -q", "....\n4 passed in 0.12s")
            for _ in range(max(1, int(rng.lognormvariate(1.85, 0.5))) if self.bench else 0):
                r.shell("pytest -q -vv", big)
            r.reply("Done; tests pass.")
        if n % 3 == 0:
            self.index.append(
                {"id": r.tid, "thread_name": TITLES[chosen[0]], "updated_at": _micros(r.now)}
            )
        r.write()

    def side_files(self) -> None:
        root = self.root
        lines = [_dumps(h) for h in self.history]
        orphan = self.ids["history-only"] = self.uuid7(datetime(2026, 5, 2, 14, 0, tzinfo=UTC))
        for i, text in enumerate(
            [
                "Draft a runbook for restoring the ledger database",
                "Add the restore drill to the on-call checklist",
            ]
        ):
            lines.append(
                json.dumps(
                    {
                        "conversation_id": orphan,
                        "ts": int(datetime(2026, 5, 2, 14, i, tzinfo=UTC).timestamp()),
                        "text": text,
                    }
                )
            )
        (root / "history.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        index = [json.dumps(line) for line in self.index]
        (root / "session_index.jsonl").write_text("\n".join(index) + "\n", encoding="utf-8")

        top = root / "memories"
        (top / "rollout_summaries").mkdir(parents=True, exist_ok=True)
        (top / "MEMORY.md").write_text(
            "# Memory\n\n"
            "## User preferences\n\n"
            "- Dana wants small commits with imperative subjects.\n"
            "- Never run `terraform apply` without showing the plan first.\n\n"
            "## People\n\n"
            "- Priya Raman (Priya) - reviewer for ledgerline, wants tests for every importer\n\n"
            "## Decisions\n\n"
            "- Decision: store amounts as integer cents in the API\n\n"
            "## Stack\n\n"
            "- terraform 1.9 with the aws provider 5.x\n"
            "- pytest with hypothesis\n",
            encoding="utf-8",
        )
        (top / "memory_summary.md").write_text(
            "Dana works mostly on ledgerline and its infrastructure; prefers uv and pnpm.\n",
            encoding="utf-8",
        )
        first = next(iter(self.written))
        raw = "# Raw Memories\n\n"
        for tid in list(self.written)[:2]:
            said = self.firsts.get(tid, "something")
            raw += f"## Thread `{tid}`\nupdated_at: 2026-06-20T10:00:00Z\n\n- Worked on: {said}\n\n"
        private = self.ids.get("private")
        if private:
            raw += f"## Thread `{private}`\nupdated_at: 2026-06-26T21:00:00Z\n\n"
            raw += "- Dana's therapy schedule drives the weekly summary.\n"
        (top / "raw_memories.md").write_text(raw, encoding="utf-8")
        (top / "rollout_summaries" / f"{first}.md").write_text(
            f"thread_id: {first}\nupdated_at: 2026-06-20T10:00:00Z\n\n"
            f"The user asked: {self.firsts.get(first, '')} Codex changed the files and ran the "
            "tests.\n",
            encoding="utf-8",
        )
        diary = self.cwd("personal/diary-bot")
        bucket = top / hashlib.sha256(diary.encode()).hexdigest()[:16] / "memory"
        bucket.mkdir(parents=True, exist_ok=True)
        (bucket / "MEMORY.md").write_text(
            "- The diary bot posts to Dana's private Telegram channel.\n", encoding="utf-8"
        )
        user = top / "user" / "memory"
        user.mkdir(parents=True, exist_ok=True)
        (user / "MEMORY.md").write_text(
            "- Dana lives in Lyon and works in English.\n", encoding="utf-8"
        )
        for path, day in (
            (top / "MEMORY.md", 22),
            (top / "memory_summary.md", 22),
            (top / "raw_memories.md", 20),
            (bucket / "MEMORY.md", 26),
            (user / "MEMORY.md", 15),
        ):
            self.mtimes[path] = datetime(2026, 6, day, 21, 30, tzinfo=UTC).timestamp()
        ext = top / "memories_extensions" / "notes"
        ext.mkdir(parents=True, exist_ok=True)
        (ext / "x.md").write_text("extension data\n", encoding="utf-8")

        (root / "AGENTS.md").write_text("- Prefer `uv run` over bare python.\n", encoding="utf-8")
        (root / "config.toml").write_text(
            'model = "gpt-5.3-codex"\nnotify = ["bourdon", "export", "codex"]\n\n'
            '[history]\npersistence = "save-all"\n\n'
            f'[projects."{self.cwd("src/ledgerline")}"]\ntrust_level = "trusted"\n',
            encoding="utf-8",
        )
        (root / "hooks.json").write_text(
            json.dumps(
                {
                    "hooks": {
                        "Stop": [
                            {
                                "hooks": [
                                    {
                                        "type": "command",
                                        "command": "bourdon export codex",
                                        "timeout": 30,
                                    }
                                ]
                            }
                        ]
                    }
                }
            ),
            encoding="utf-8",
        )
        (root / "auth.json").write_text(json.dumps({"OPENAI_API_KEY": SECRET}), encoding="utf-8")

    def database(self) -> None:
        """``state_5.sqlite`` in WAL mode; the last rows exist only in the -wal file."""
        scratch = Path(tempfile.mkdtemp(prefix="codex-state-"))
        try:
            db_path = scratch / "state_5.sqlite"
            db = sqlite3.connect(db_path)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA wal_autocheckpoint=0")
            db.executescript(_DDL)
            db.execute(
                "INSERT INTO _sqlx_migrations VALUES (1, 'threads', '2026-01-01', 1, x'00', 5)"
            )
            rows = [
                self._row(tid, r, path)
                for tid, (r, path) in sorted(self.written.items())
                if tid not in self.no_row
            ]
            placeholders = ", ".join("?" for _ in THREAD_COLUMNS)
            db.executemany(
                f"INSERT INTO threads ({', '.join(THREAD_COLUMNS)}) VALUES ({placeholders})",
                rows[:-2],
            )
            db.commit()
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.executemany(
                f"INSERT INTO threads ({', '.join(THREAD_COLUMNS)}) VALUES ({placeholders})",
                rows[-2:],
            )
            stale = self.ids["db-only"] = self.uuid7(datetime(2026, 6, 16, 12, 0, tzinfo=UTC))
            created = datetime(2026, 6, 16, 12, 0, 5, tzinfo=UTC)
            db.execute(
                f"INSERT INTO threads ({', '.join(THREAD_COLUMNS)}) VALUES ({placeholders})",
                (
                    stale,
                    str(self.root / "sessions/2026/06/16" / rollout_name(stale, created)),
                    int(created.timestamp()),
                    int(created.timestamp()) + 600,
                    "vscode",
                    "openai",
                    self.cwd("src/monorepo/packages/api"),
                    "Rate limiting for the API",
                    "workspace-write",
                    "on-request",
                    5120,
                    0,
                    "git@github.com:dana/monorepo.git",
                    int(created.timestamp() * 1000),
                    None,
                    "Add rate limiting to the public endpoints",
                    None,
                ),
            )
            db.commit()
            for part in ("", "-wal", "-shm"):
                shutil.copyfile(f"{db_path}{part}", f"{self.root / 'state_5.sqlite'}{part}")
            db.close()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _row(self, tid: str, r: _Rollout, path: Path) -> tuple[Any, ...]:
        created = int(r.start.timestamp())
        first = self.firsts.get(tid, "").encode("utf-8", "replace").decode("utf-8")
        title = "Payee matching rework" if tid == self.ids.get("title") else first
        archived = 1 if "archived_sessions" in path.parts else 0
        url = "git@github.com:dana/ledgerline.git" if "ledger" in r.cwd else None
        return (
            tid,
            str(path),
            created,
            created + 900,
            "cli",
            "openai",
            r.cwd,
            title,
            "workspace-write",
            "on-request",
            20000,
            archived,
            url,
            created * 1000,
            (created + 900) * 1000,
            first,
            None,
        )


def _dumps(value: Any) -> str:
    """JSON as Codex writes it: UTF-8, a lone surrogate kept as its escape."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value)
    return text


def _micros(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _messy(gen: _Gen) -> None:
    """One rollout per messy case of native-stores.md 10.3 that applies to Codex."""
    ledger, docs = gen.cwd("src/ledgerline"), gen.cwd("src/docs-site")
    url = "git@github.com:dana/ledgerline.git"

    # 23:50 in New York on June 10 is 03:50 UTC on June 11: folder 2026/06/10, content June 11.
    start = datetime(2026, 6, 10, 23, 50, tzinfo=HOST_TZ).astimezone(UTC)
    r = _Rollout(gen, gen.uuid7(start), ledger, start)
    gen.ids["late"] = r.tid
    gen.ids["title"] = r.tid  # its database row carries a title of its own
    r.meta(url=url)
    r.context()
    gen.say(r, "Late night: fix the off-by-one in the month-end report")
    r.patch([("update", "ledgerline/report.py")])
    r.reply("Fixed.")
    r.write()

    # The old shape: `instructions`, no user_message events, apply_patch through `shell`.
    start = datetime(2026, 5, 20, 15, 0, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), ledger, start)
    gen.ids["old"] = r.tid
    gen.no_row.add(r.tid)  # a rollout the database does not know
    r.meta(old=True)
    r.environment()
    r.line(
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "<user_instructions>Be terse.</user_instructions>"}
            ],
        },
    )
    gen.say(r, "Add a --since option to the export command", event=False)
    r.patch([("add", "ledgerline/export.py")], form="shell", applied=False)
    r.reply("Added.")
    r.write()

    # A cwd change, a resume (second session_meta), compaction, and every patch outcome.
    start = datetime(2026, 6, 12, 13, 0, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), ledger, start)
    gen.ids["rich"] = r.tid
    r.meta(url=url)
    r.context()
    gen.say(r, "Rename the importers package and delete the legacy parser")
    r.patch(
        [
            ("move", "ledgerline/importers/bank.py>ledgerline/importers/banks.py"),
            ("delete", "ledgerline/legacy_parser.py"),
            ("add", "ledgerline/importers/__init__.py"),
        ]
    )
    r.line(
        "compacted",
        {
            "message": "summary",
            "replacement_history": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "OLD PROMPT FROM BEFORE COMPACTION"}
                    ],
                }
            ]
            * 50,
        },
    )
    r.line("event_msg", {"type": "context_compacted"})
    r.line("event_msg", {"type": "hologram_event", "data": "an event type from the future"})
    r.line("response_item", {"type": "telepathy_call", "call_id": "x"})
    r.line("future_line", {"x": 1})
    r.tick(3600 * 5)
    r.meta(url=url)  # resumed later in the same file
    r.context(docs)
    gen.say(r, "Now document the rename in the docs site")
    r.patch([("update", "docs/importers.md")], form="function")
    r.reply("Documented.")
    r.write()
    gen.index.append({"id": r.tid, "thread_name": "Importer rename", "updated_at": _micros(r.now)})
    gen.index.append(
        {
            "id": r.tid,
            "thread_name": "Rename importers and document it",
            "updated_at": _micros(r.now + timedelta(minutes=5)),
        }
    )

    # Byte-level mess: CRLF, blank lines, invalid UTF-8, a lone surrogate, NUL and ANSI.
    start = datetime(2026, 6, 14, 14, 0, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), ledger, start)
    gen.ids["bytes"] = r.tid
    r.meta(url=url)
    r.context()
    gen.say(r, "Import the Cr\u00e9dit Agricole CSV \ud83d export")
    r.shell("cat export.csv", "caf\u00e9;12,50\n\x00\x00\x1b[31mERROR\x1b[0m bad row\r\n")
    r.lines[-1] = r.lines[-1].replace("caf\u00e9".encode(), b"caf\xff\xfe\xc3")
    gen.say(r, "Skip the rows with NUL bytes")
    r.patch([("add", "ledgerline/importers/ca.py")])
    r.lines = [line.replace(b"\n", b"\r\n") for line in r.lines]
    r.lines.insert(2, b"\r\n")
    r.lines.insert(5, b"  \n")
    r.write()

    # A torn last line, and (another file) a complete last record without its newline.
    start = datetime(2026, 6, 15, 16, 0, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), docs, start)
    gen.ids["torn"] = r.tid
    r.meta()
    r.context()
    gen.say(r, "Add a search box to the docs header")
    r.patch([("update", "overrides/header.html")])
    r.lines.append(
        b'{"timestamp":"2026-06-15T16:09:00.000Z","type":"event_msg","payload":{"type":"agent_mes'
    )
    r.write()
    start = datetime(2026, 6, 15, 18, 0, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), docs, start)
    gen.ids["no-newline"] = r.tid
    r.meta()
    r.context()
    gen.say(r, "Make the search box keyboard accessible")
    r.write(newline_at_end=False)

    # A 3 MB output line, then more work.
    start = datetime(2026, 6, 17, 12, 0, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), ledger, start)
    gen.ids["huge"] = r.tid
    r.meta(url=url)
    r.context()
    gen.say(r, "Run the slow benchmarks and paste everything")
    r.shell("pytest benchmarks -vv", "benchmark row 0123456789 " * 120_000)
    gen.say(r, "Which benchmark regressed the most?")
    r.write()

    # A fork of the first ordinary rollout: copies its items (same call ids), then new work.
    parent_id = next(iter(gen.written))
    parent = gen.written[parent_id][0]
    start = parent.now + timedelta(hours=2)
    r = _Rollout(gen, gen.uuid7(start), parent.cwd, start)
    gen.ids["fork"] = r.tid
    r.meta(forked_from_id=parent_id, url=url if "ledger" in parent.cwd else None)
    r.lines += [line for line in parent.lines if b'"session_meta"' not in line]
    r.context()
    gen.say(r, "In this fork, try the streaming parser instead")
    r.patch([("add", "ledgerline/stream.py")])
    r.write()

    # A subagent spawned by the rich session: its edits belong to the parent.
    start = datetime(2026, 6, 12, 13, 20, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), ledger, start)
    gen.ids["subagent"] = r.tid
    r.meta(
        url=url,
        source={"subagent": {"thread_spawn": {"parent_thread_id": gen.ids["rich"], "depth": 1}}},
        agent_nickname="Lovelace",
        agent_role="worker",
    )
    r.context()
    r.user("Update the import paths after the rename")
    r.patch([("update", "ledgerline/cli.py")])
    r.write()

    # The memory consolidation agent's own thread (cwd inside ~/.codex/memories): left out.
    start = datetime(2026, 6, 22, 21, 0, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), str(gen.root / "memories"), start)
    gen.ids["consolidation"] = r.tid
    r.meta(source="exec")
    r.context()
    r.user("Consolidate the raw memories into MEMORY.md")
    r.patch([("update", "MEMORY.md")])
    r.write()

    # Windows, a private project, a clone known only by its remote, an archive, an empty file.
    start = datetime(2026, 6, 24, 9, 0, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), "C:\\Users\\dana\\src\\ledgerline", start)
    gen.ids["windows"] = r.tid
    r.meta(url=url)
    r.context()
    gen.say(r, "Make the CLI work in PowerShell")
    r.patch([("update", "ledgerline/cli.py")])
    r.write()
    start = datetime(2026, 6, 26, 19, 0, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), gen.cwd("personal/diary-bot"), start)
    gen.ids["private"] = r.tid
    r.meta()
    r.context()
    gen.say(r, "Summarise my therapy notes into the weekly digest")
    r.patch([("update", "bot.py")])
    r.write()
    start = datetime(2026, 6, 27, 11, 0, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), "/home/dana/old-laptop/ledger-copy", start)
    gen.ids["remote-only"] = r.tid
    r.meta(url="https://github.com/dana/ledgerline")
    r.context()
    gen.say(
        r, "Compare this old copy with main and list what is missing", history_key="conversation_id"
    )
    r.write()
    start = datetime(2026, 5, 28, 10, 0, tzinfo=UTC)
    r = _Rollout(gen, gen.uuid7(start), gen.cwd("src/infra-terraform"), start)
    gen.ids["archived"] = r.tid
    r.meta(url="git@github.com:dana/infra-terraform.git")
    r.context()
    gen.say(r, "Tag the terraform modules for the 1.0 release")
    r.patch([("update", "modules/api/versions.tf")])
    r.write(archived=True)
    empty = gen.root / "sessions/2026/06/28" / rollout_name(gen.uuid7(BASE), BASE)
    empty.parent.mkdir(parents=True, exist_ok=True)
    empty.write_bytes(b"")
