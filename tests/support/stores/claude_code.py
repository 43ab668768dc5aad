"""A deterministic, realistic Claude Code store (``~/.claude``) under a fake home.

>>> store = write_store(tmp_path / "home", seed=0)                  # doctest: +SKIP
>>> bench = write_store(tmp_path / "big", sessions=500, size="bench")  # ~1 GB, doctest: +SKIP

What it writes (native-stores.md sections 1 and 10):

- git markers for the projects, so project identity can be resolved: ``~/src/ledgerline``
  (origin ``git@github.com:dana/ledgerline.git``) with a worktree ``~/src/ledgerline-wt/csv-import``
  (a ``.git`` *file*) and a clone ``~/work/ledger-line`` (same repository, https URL);
  ``~/src/infra-terraform``, ``~/src/docs-site`` (no remote), ``~/src/monorepo`` (sessions run in
  ``packages/api``), ``~/personal/diary-bot`` (a private folder), and ``~/my_app`` / ``~/my-app``
  (no git; both encode to the same project folder name);
- ``sessions`` ordinary transcripts across those projects over June 2026, then the messy cases
  of native-stores.md 10.3 that apply to Claude Code, one file each (see ``_messy``);
- ``history.jsonl``, auto memory (``projects/<ledgerline>/memory/``), ``CLAUDE.md`` at user and
  project level, ``CLAUDE.local.md``, ``settings.json`` with hooks, a ``todos/`` file, a second
  store under ``~/.config/claude`` and the home-level ``~/.claude.json``.

Every file gets a fixed mtime, so notes dated from mtimes are stable. ``size="bench"`` writes
``sessions`` transcripts averaging ~2 MB (mostly large tool outputs) in big blocks;
``size="mixed"`` gives one session in 100 such outputs and keeps the others small (2,500
sessions make a ~65 MB store, like a heavy user's).
"""

from __future__ import annotations

import json
import os
import random
import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

BASE = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
MTIME = datetime(2026, 7, 1, 9, 0, tzinfo=UTC).timestamp()
VERSION = "2.1.183"
PLUS8 = timezone(timedelta(hours=8))

# (key, folder under home, origin URL or None, prompts, files relative to the folder)
PROJECTS: list[tuple[str, str, str | None, list[str], list[str]]] = [
    (
        "ledgerline",
        "src/ledgerline",
        "git@github.com:dana/ledgerline.git",
        [
            "Add a CSV importer for bank statements under ledgerline/importers",
            "Store amounts as Decimal, never float, and fix the rounding test",
            "Wire the importer into the CLI with a --dry-run flag",
            "Why does the monthly report skip the last day of the month?",
            "Match payees with rapidfuzz and keep the cutoff at 85",
            "Write a test for the OFX date parser with the sample statements",
        ],
        [
            "ledgerline/importers/csv_bank.py",
            "ledgerline/cli.py",
            "tests/test_importers.py",
            "ledgerline/report.py",
            "pyproject.toml",
        ],
    ),
    (
        "ledgerline-wt",
        "src/ledgerline-wt/csv-import",
        None,
        [
            "Finish the CSV import branch: handle semicolon separators",
            "Rebase csv-import on main and fix the conflicts in cli.py",
        ],
        ["ledgerline/importers/csv_bank.py", "ledgerline/cli.py"],
    ),
    (
        "ledger-line",
        "work/ledger-line",
        "https://github.com/dana/ledgerline.git",
        ["Reproduce Priya's bug report about duplicated rows in the clone"],
        ["ledgerline/report.py", "tests/test_report.py"],
    ),
    (
        "infra-terraform",
        "src/infra-terraform",
        "git@github.com:dana/infra-terraform.git",
        [
            "Add a staging workspace for the ledgerline API in terraform",
            "Pin the aws provider to 5.x and run terraform fmt",
            "Explain why the plan wants to recreate the RDS instance",
        ],
        ["main.tf", "modules/api/variables.tf", "envs/staging.tfvars"],
    ),
    (
        "docs-site",
        "src/docs-site",
        None,
        [
            "Switch the docs site build from npm to pnpm",
            "Write a getting-started page for the importer",
        ],
        ["package.json", "docs/getting-started.md", "mkdocs.yml"],
    ),
    (
        "monorepo",
        "src/monorepo/packages/api",
        "git@github.com:dana/monorepo.git",
        [
            "Add a /health endpoint to the api package with a test",
            "Move the shared pydantic models into packages/common",
        ],
        ["app/routes/health.py", "tests/test_health.py", "app/models.py"],
    ),
    (
        "diary-bot",
        "personal/diary-bot",
        None,
        ["Make the diary bot summarise my week every Sunday evening"],
        ["bot.py", "schedule.py"],
    ),
]
TITLES = {
    "Add a CSV importer for bank statements under ledgerline/importers": "CSV bank importer",
    "Store amounts as Decimal, never float, and fix the rounding test": "Decimal amounts",
    "Wire the importer into the CLI with a --dry-run flag": "CLI import --dry-run flag",
    "Why does the monthly report skip the last day of the month?": "Monthly report skips last day",
    "Match payees with rapidfuzz and keep the cutoff at 85": "Payee matching with rapidfuzz",
    "Write a test for the OFX date parser with the sample statements": "OFX date parser tests",
    "Finish the CSV import branch: handle semicolon separators": "Semicolon CSV separators",
    "Rebase csv-import on main and fix the conflicts in cli.py": "Rebase csv-import on main",
    "Reproduce Priya's bug report about duplicated rows in the clone": "Duplicated rows bug",
    "Add a staging workspace for the ledgerline API in terraform": "Terraform staging workspace",
    "Pin the aws provider to 5.x and run terraform fmt": "Pin AWS provider 5.x",
    "Explain why the plan wants to recreate the RDS instance": "RDS recreate in plan",
    "Switch the docs site build from npm to pnpm": "Docs build on pnpm",
    "Write a getting-started page for the importer": "Importer getting-started page",
    "Add a /health endpoint to the api package with a test": "API health endpoint",
    "Move the shared pydantic models into packages/common": "Shared models in packages/common",
    "Make the diary bot summarise my week every Sunday evening": "Weekly diary summary",
}
HOOKS = {
    "hooks": {
        "SessionEnd": [{"hooks": [{"type": "command", "command": "bourdon export claude-code"}]}],
        "PostToolUse": [
            {"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command", "command": "true"}]}
        ],
    }
}


def write_store(home: Path, *, seed: int = 0, sessions: int = 12, size: str = "unit") -> Path:
    """Write the store under ``home`` (created if needed); return ``home / ".claude"``."""
    if size not in ("unit", "bench", "mixed"):
        raise ValueError(f"size must be 'unit', 'bench' or 'mixed', got {size!r}")
    home = Path(home)
    root = home / ".claude"
    rng = random.Random(f"claude-code-{seed}")
    write_repos(home)
    gen = _Gen(home, root, rng, bench=size == "bench", big_every=100 if size == "mixed" else 0)
    for n in range(sessions):
        gen.ordinary(n, sessions)
    _messy(gen)
    gen.side_files()
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        os.utime(path, (MTIME, MTIME))
    for path, when in gen.mtimes.items():
        os.utime(path, (when, when))
    return root


def encode_cwd(cwd: str) -> str:
    """Claude Code's project folder name for a cwd: every non-alphanumeric becomes ``-``."""
    name = re.sub(r"[^a-zA-Z0-9]", "-", cwd)
    if len(name) > 200:
        import hashlib

        name = name[:200] + "-" + hashlib.sha256(cwd.encode()).hexdigest()[:8]
    return name


def records(path: Path) -> list[dict[str, Any]]:
    """The records of a transcript that parse, in file order."""
    out = []
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def last_record(path: Path) -> dict[str, Any] | None:
    """The last record of a transcript naming a session and a cwd: one to follow."""
    found = [r for r in records(path) if r.get("sessionId") and r.get("cwd")]
    return found[-1] if found else None


def first_timestamp(path: Path) -> str:
    """When a transcript's session started: its own first record's time ("" when none)."""
    for record in records(path):
        if record.get("sessionId") == path.stem and isinstance(record.get("timestamp"), str):
            return str(record["timestamp"])
    return ""


def write_repos(home: Path) -> None:
    """Git markers (repositories, a worktree, a clone) and CLAUDE.md files of the fake org."""

    def repo(folder: str, url: str | None) -> Path:
        git = home / folder / ".git"
        git.mkdir(parents=True, exist_ok=True)
        config = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
        if url:
            config += (
                f'[remote "origin"]\n\turl = {url}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
            )
        (git / "config").write_text(config, encoding="utf-8")
        (git / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
        return git

    main = repo("src/ledgerline", "git@github.com:dana/ledgerline.git")
    worktree = main / "worktrees" / "csv-import"
    worktree.mkdir(parents=True, exist_ok=True)
    tree = home / "src/ledgerline-wt/csv-import"
    tree.mkdir(parents=True, exist_ok=True)
    (worktree / "gitdir").write_text(f"{tree}/.git\n", encoding="utf-8")
    (tree / ".git").write_text(f"gitdir: {worktree}\n", encoding="utf-8")
    repo("work/ledger-line", "https://github.com/dana/ledgerline.git")
    repo("src/infra-terraform", "git@github.com:dana/infra-terraform.git")
    repo("src/docs-site", None)
    repo("src/monorepo", "git@github.com:dana/monorepo.git")
    (home / "src/monorepo/packages/api").mkdir(parents=True, exist_ok=True)
    repo("personal/diary-bot", None)
    for plain in ("my_app", "my-app"):
        (home / plain).mkdir(parents=True, exist_ok=True)
    (home / "src/ledgerline/CLAUDE.md").write_text(
        "# ledgerline\n\n"
        "- Run `pytest -q` before every commit; the suite takes 20 seconds.\n"
        "- Money is `Decimal`; a float in ledgerline/ is a bug.\n\n"
        "## Tools\n\n- rapidfuzz: payee matching, cutoff 85\n- click: the CLI\n",
        encoding="utf-8",
    )
    (home / "src/ledgerline/CLAUDE.local.md").write_text(
        "- My sandbox bank login lives in 1Password, item 'ledgerline sandbox'.\n",
        encoding="utf-8",
    )
    (home / "src/docs-site/.claude").mkdir(parents=True, exist_ok=True)
    (home / "src/docs-site/.claude/CLAUDE.md").write_text(
        "Use pnpm, never npm, in this repository.\n", encoding="utf-8"
    )


def _stamp(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


class _Session:
    """Builds one transcript's records with a realistic envelope and parent chain."""

    def __init__(self, gen: _Gen, sid: str, cwd: str, start: datetime, branch: str = "main"):
        self.gen, self.sid, self.cwd, self.now, self.branch = gen, sid, cwd, start, branch
        self.parent: str | None = None
        self.lines: list[bytes] = []
        self.stamp: Callable[[datetime], str] = _stamp

    def tick(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)

    def envelope(self, kind: str, **fields: Any) -> dict[str, Any]:
        record_id = self.gen.uuid()
        record = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": VERSION,
            "gitBranch": self.branch,
            "entrypoint": "cli",
            "type": kind,
            **fields,
            "uuid": record_id,
            "timestamp": self.stamp(self.now),
        }
        self.parent = record_id
        return record

    def add(self, record: dict[str, Any]) -> dict[str, Any]:
        try:
            line = json.dumps(record, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate is written as an escape, as Node does
            line = json.dumps(record).encode("ascii")
        self.lines.append(line + b"\n")
        return record

    def raw(self, data: bytes) -> None:
        self.lines.append(data)

    def meta(self, kind: str, **fields: Any) -> None:
        self.add({"type": kind, **fields, "sessionId": self.sid})

    def prompt(self, text: str, **extra: Any) -> dict[str, Any]:
        self.tick(self.gen.rng.randint(20, 300))
        message = {"role": "user", "content": text}
        return self.add(
            self.envelope("user", message=message, promptId=self.gen.token("prompt_"), **extra)
        )

    def tool(self, name: str, tool_input: dict[str, Any], output: str, result: Any = None) -> None:
        self.tick(self.gen.rng.randint(2, 20))
        tool_id = self.gen.token("toolu_")
        message = {
            "id": self.gen.token("msg_"),
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 5, "output_tokens": 120, "cache_read_input_tokens": 18230},
        }
        assistant = self.add(
            self.envelope("assistant", message=message, requestId=self.gen.token("req_"))
        )
        self.tick(1)
        content = [{"tool_use_id": tool_id, "type": "tool_result", "content": output}]
        fields: dict[str, Any] = {"message": {"role": "user", "content": content}}
        if result is not None:
            fields["toolUseResult"] = result
        fields["sourceToolAssistantUUID"] = assistant["uuid"]
        self.add(self.envelope("user", **fields))

    def big_tool(self, block: bytes) -> None:
        """A Bash call whose output is ``block`` (already a JSON string literal), written raw."""
        self.tool("Bash", {"command": "pytest -q 2>&1 | tail -n 4000"}, "x")
        record = json.loads(self.lines[-1])
        head, tail = json.dumps(record, ensure_ascii=False).split('"content": "x"', 1)
        self.lines[-1] = head.encode() + b'"content": ' + block + tail.encode() + b"\n"

    def reply(self, text: str) -> None:
        self.tick(3)
        message = {
            "id": self.gen.token("msg_"),
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 4, "output_tokens": 60},
        }
        self.add(self.envelope("assistant", message=message, requestId=self.gen.token("req_")))

    def edit(self, rel: str, how: str = "Edit") -> None:
        path = (
            f"{self.cwd}/{rel}"
            if not self.cwd.startswith("C:")
            else f"{self.cwd}\\{rel.replace('/', chr(92))}"
        )
        if how == "Write":
            self.tool(
                "Write",
                {"file_path": path, "content": "import csv\n"},
                f"File created successfully at: {path}",
                {
                    "type": "create",
                    "filePath": path,
                    "content": "import csv\n",
                    "structuredPatch": [],
                    "originalFile": None,
                },
            )
        elif how == "MultiEdit":
            self.tool(
                "MultiEdit",
                {"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]},
                "Applied 1 edit",
            )
        elif how == "NotebookEdit":
            self.tool(
                "NotebookEdit",
                {"notebook_path": path, "new_source": "x = 1", "cell_id": "c1"},
                "Updated cell c1",
            )
        else:
            self.tool(
                "Edit",
                {"file_path": path, "old_string": "float(", "new_string": "Decimal("},
                f"The file {path} has been updated.",
                {
                    "filePath": path,
                    "oldString": "float(",
                    "newString": "Decimal(",
                    "originalFile": "",
                    "replaceAll": False,
                    "structuredPatch": [],
                    "userModified": False,
                },
            )

    def write(self, path: Path, *, newline_at_end: bool = True) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = b"".join(self.lines)
        if not newline_at_end:
            data = data.rstrip(b"\n")
        path.write_bytes(data)
        return path


class _Gen:
    def __init__(
        self, home: Path, root: Path, rng: random.Random, *, bench: bool, big_every: int = 0
    ) -> None:
        self.home, self.root, self.rng, self.bench = home, root, rng, bench
        self.big_every = big_every  # "mixed": one session in this many has long tool outputs
        self.history: list[dict[str, Any]] = []
        self.mtimes: dict[Path, float] = {}
        self.ids: dict[str, str] = {}  # names of notable sessions -> ids (for tests)
        self.transcripts: dict[str, _Session] = {}
        self._block: bytes | None = None

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def token(self, prefix: str) -> str:
        return prefix + "".join(
            self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789")
            for _ in range(12)
        )

    def folder(self, cwd: str) -> Path:
        return self.root / "projects" / encode_cwd(cwd)

    def cwd(self, rel: str) -> str:
        return f"{self.home}/{rel}"

    def block(self) -> bytes:
        """~256 KB of test-runner output as a JSON string literal, built once."""
        if self._block is None:
            rng = random.Random(1)
            words = "PASSED FAILED importers report assert Decimal rounding ledger row".split()
            lines = []
            for i in range(4200):
                a, b, c = rng.choice(words), rng.choice(words), rng.choice(words)
                lines.append(f"tests/test_{a}.py::{b}_{i} {c} [{i % 100:3d}%]")
            self._block = json.dumps("\n".join(lines)).encode()
        return self._block

    def history_line(self, text: str, when: datetime, cwd: str, sid: str | None) -> None:
        line: dict[str, Any] = {
            "display": text,
            "pastedContents": {},
            "timestamp": int(when.timestamp() * 1000),
            "project": cwd,
        }
        if sid:
            line["sessionId"] = sid
        self.history.append(line)

    def ordinary(self, n: int, total: int) -> None:
        rng = self.rng
        key, rel, _url, prompts, files = PROJECTS[n % len(PROJECTS)]
        cwd = self.cwd(rel)
        start = BASE + timedelta(
            days=(n * 29) // max(total, 1), hours=rng.randint(0, 9), minutes=rng.randint(0, 59)
        )
        sid = self.uuid()
        s = _Session(
            self, sid, cwd, start, branch="main" if key != "ledgerline-wt" else "csv-import"
        )
        s.meta("permission-mode", permissionMode="default")
        chosen = rng.sample(prompts, k=min(len(prompts), rng.randint(1, 3)))
        for text in chosen:
            s.prompt(text)
            self.history_line(text, s.now, cwd, sid)
            s.tool("Read", {"file_path": f"{cwd}/{files[0]}"}, "     1\timport csv\n")
            for rel_file in rng.sample(files, k=min(len(files), rng.randint(1, 2))):
                s.edit(rel_file, rng.choice(["Edit", "Edit", "Write", "MultiEdit"]))
            s.tool("Bash", {"command": "pytest -q"}, "....\n4 passed in 0.12s")
            if self.bench or (self.big_every and n % self.big_every == 0):
                for _ in range(max(1, int(rng.lognormvariate(1.85, 0.5)))):
                    s.big_tool(self.block())
            s.reply("Done. The tests pass.")
        s.meta("ai-title", aiTitle=TITLES[chosen[0]])
        s.write(self.folder(cwd) / f"{sid}.jsonl")
        self.transcripts[f"ordinary-{n}"] = s

    def side_files(self) -> None:
        root, home = self.root, self.home
        lines = [json.dumps(line, ensure_ascii=False).encode("utf-8") for line in self.history]
        # Old lines without sessionId, a slash command, invalid UTF-8 and a cut multibyte sequence.
        old = datetime(2026, 4, 2, 16, 5, tzinfo=UTC)
        lines.insert(
            0,
            json.dumps(
                {
                    "display": "Set up the ledgerline repository with uv",
                    "pastedContents": {},
                    "timestamp": int(old.timestamp() * 1000),
                    "project": self.cwd("src/ledgerline"),
                }
            ).encode(),
        )
        lines.insert(
            1,
            json.dumps(
                {
                    "display": "/clear",
                    "pastedContents": {},
                    "timestamp": int(old.timestamp() * 1000) + 5000,
                    "project": self.cwd("src/ledgerline"),
                }
            ).encode(),
        )
        lines.insert(
            2,
            b'{"display":"Fix the caf\xc3\xa9 \xff\xfe encoding bug in the exporter",'
            b'"pastedContents":{},"timestamp":'
            + str(int(old.timestamp() * 1000) + 60000).encode()
            + b',"project":"'
            + self.cwd("src/ledgerline").encode()
            + b'"}',
        )
        lines.insert(
            3,
            b'{"display":"Translate the README \xe6\x97","pastedContents":{},"timestamp":'
            + str(int(old.timestamp() * 1000) + 90000).encode()
            + b',"project":"'
            + self.cwd("src/docs-site").encode()
            + b'"}',
        )
        swept = "7d1e9c0a-5b2f-4c8e-9a61-0f3b2d4c6e88"
        self.ids["swept"] = swept
        when = datetime(2026, 5, 3, 10, 0, tzinfo=UTC)
        for i, text in enumerate(
            ["Draft the terraform module for the queue", "Add outputs for the queue URL"]
        ):
            lines.append(
                json.dumps(
                    {
                        "display": text,
                        "pastedContents": {},
                        "timestamp": int((when + timedelta(minutes=i)).timestamp() * 1000),
                        "project": self.cwd("src/infra-terraform"),
                        "sessionId": swept,
                    }
                ).encode()
            )
        (root).mkdir(parents=True, exist_ok=True)
        (root / "history.jsonl").write_bytes(b"\n".join(lines) + b"\n")

        memory = self.folder(self.cwd("src/ledgerline")) / "memory"
        memory.mkdir(parents=True, exist_ok=True)
        (memory / "MEMORY.md").write_text(
            "# ledgerline memory\n\n"
            "- The importer tests use the fixtures in tests/data/; never hit a real bank.\n"
            "- Release with `uv build` then `uv publish`; tags are vX.Y.Z.\n\n"
            "## People\n\n"
            "- Priya Raman (Priya, praman) - reviews anything touching cli.py; "
            "wants a test per change\n"
            "- **Marco Bianchi**: owns the infra-terraform staging account\n\n"
            "## Decisions\n\n"
            "- Store amounts as Decimal: floats lost cents in the March report\n"
            "- Switch the docs site to pnpm - npm lockfiles kept drifting\n\n"
            "## Tools and libraries\n\n"
            "- rapidfuzz: payee matching with token_set_ratio, cutoff 85\n"
            "- `click` for the CLI\n"
            "- pandas (only in notebooks/, never in the package)\n\n"
            "## Notes\n\n"
            "Sandbox statements live in tests/data/ofx/ and are\n"
            "anonymised by scripts/scrub.py.\n\n"
            "- The family budget spreadsheet export is in ~/personal #private\n",
            encoding="utf-8",
        )
        (memory / "debugging.md").write_text(
            "---\nname: debugging\ndescription: How to debug the importer\ntype: feedback\n---\n\n"
            "- Run `ledgerline import --dry-run -v` to see every parsed row.\n"
            "- A row that is off by one cent is always a float somewhere.\n",
            encoding="utf-8",
        )
        (memory / "health.md").write_text(
            "---\nname: health\ntype: user\nvisibility: private\n---\n\n"
            "Dana takes Fridays off for physiotherapy until August.\n",
            encoding="utf-8",
        )
        self.mtimes[memory / "MEMORY.md"] = datetime(2026, 6, 20, 18, 0, tzinfo=UTC).timestamp()
        self.mtimes[memory / "debugging.md"] = datetime(2026, 6, 12, 22, 30, tzinfo=UTC).timestamp()
        self.mtimes[memory / "health.md"] = datetime(2026, 6, 5, 7, 0, tzinfo=UTC).timestamp()

        (root / "CLAUDE.md").write_text(
            "# Dana's preferences\n\n"
            "- Answer briefly; show the diff, not the whole file.\n"
            "- Use uv for Python projects.\n",
            encoding="utf-8",
        )
        self.mtimes[root / "CLAUDE.md"] = datetime(2026, 5, 20, 12, 0, tzinfo=UTC).timestamp()
        (root / "settings.json").write_text(json.dumps(HOOKS, indent=2) + "\n", encoding="utf-8")
        todo = (
            root / "todos" / f"{self.ids.get('rich', 'x')}-agent-{self.ids.get('rich', 'x')}.json"
        )
        todo.parent.mkdir(parents=True, exist_ok=True)
        todo.write_text(
            json.dumps(
                [
                    {
                        "content": "Add CSV importer",
                        "status": "completed",
                        "activeForm": "Adding CSV importer",
                    }
                ]
            ),
            encoding="utf-8",
        )
        (home / ".claude.json").write_text(
            json.dumps(
                {
                    "numStartups": 42,
                    "projects": {self.cwd("src/ledgerline"): {"hasTrustDialogAccepted": True}},
                }
            ),
            encoding="utf-8",
        )


def _messy(gen: _Gen) -> None:
    """One file per messy case of native-stores.md 10.3 that applies to Claude Code."""
    home = gen.home
    ledger = gen.cwd("src/ledgerline")

    # A 1.0.x transcript opening with legacy summary lines; one titles this very session.
    sid = gen.ids["legacy"] = gen.uuid()
    s = _Session(gen, sid, ledger, datetime(2026, 6, 3, 9, 0, tzinfo=UTC))
    first = s.envelope(
        "user", message={"role": "user", "content": "Port the importer to Python 3.11"}
    )
    s.parent = None
    s.meta("summary", summary="Importer ported to Python 3.11", leafUuid=first["uuid"])
    s.meta(
        "summary",
        summary="A conversation from another session",
        leafUuid="00000000-dead-beef-0000-000000000000",
    )
    s.lines = [line.replace(b',"sessionId":"' + sid.encode() + b'"', b"") for line in s.lines]
    s.add(first)
    s.reply("Ported.")
    s.write(gen.folder(ledger) / f"{sid}.jsonl")

    # A 2.1.x transcript with every side record, a compaction, wrappers, unknown types,
    # titles re-appended (custom beats AI), a tool-results spill, and a final record
    # without its trailing newline.
    sid = gen.ids["rich"] = gen.uuid()
    s = _Session(
        gen, sid, ledger, datetime(2026, 6, 8, 7, 45, tzinfo=UTC), branch="feat/csv-import"
    )
    s.meta("permission-mode", permissionMode="acceptEdits")
    s.meta("mode", mode="normal")
    s.add(
        {
            "type": "file-history-snapshot",
            "messageId": gen.uuid(),
            "isSnapshotUpdate": False,
            "snapshot": {"trackedFileBackups": {}, "timestamp": "2026-06-08T07:45:00.000Z"},
        }
    )
    s.add(
        s.envelope(
            "user",
            message={
                "role": "user",
                "content": "<command-name>/model</command-name>\n"
                "<command-message>model</command-message>\n<command-args></command-args>",
            },
        )
    )
    s.add(
        s.envelope(
            "user",
            message={
                "role": "user",
                "content": "<local-command-stdout>Set model to sonnet</local-command-stdout>",
            },
        )
    )
    s.add(
        s.envelope(
            "user",
            isMeta=True,
            message={
                "role": "user",
                "content": "Caveat: The messages below were generated by the user while "
                "running local commands.",
            },
        )
    )
    s.prompt(
        "Import the ING statement format "
        "<system-reminder>The user opened cli.py</system-reminder>too"
    )
    s.add(
        s.envelope(
            "attachment",
            attachment={
                "type": "hook_success",
                "hookName": "SessionStart",
                "content": "memory loaded",
            },
        )
    )
    s.add(
        {
            "type": "queue-operation",
            "operation": "enqueue",
            "content": "and add a test",
            "sessionId": sid,
            "timestamp": s.stamp(s.now),
        }
    )
    s.add(s.envelope("progress", data={"type": "hook_progress", "hookEvent": "PostToolUse"}))
    s.edit("ledgerline/importers/ing.py", "Write")
    s.tool(
        "Bash", {"command": "ls /nonexistent"}, "ls: cannot access", "Error: Exit code 2"
    )  # string toolUseResult
    spill = gen.folder(ledger) / sid / "tool-results" / "toolu_spill.txt"
    spill.parent.mkdir(parents=True, exist_ok=True)
    spill.write_text("huge output spilled to disk\n" * 50, encoding="utf-8")
    s.tool(
        "Bash",
        {"command": "pytest -q"},
        f"Output too large. Full output saved to {spill}",
        {
            "stdout": "",
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "persistedOutputPath": str(spill),
        },
    )
    s.tick(5)
    s.add(
        s.envelope(
            "assistant",
            message={
                "id": gen.token("msg_"),
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [
                    {"type": "thinking", "thinking": "", "signature": "sig"},
                    {"type": "hologram", "data": "a block type from the future"},
                ],
                "stop_reason": "end_turn",
            },
        )
    )
    s.add({"type": "future-record", "sessionId": sid, "payload": {"x": 1}})
    s.add(
        s.envelope(
            "system",
            subtype="compact_boundary",
            content="Conversation compacted",
            compactMetadata={"trigger": "manual", "preTokens": 120000},
            level="info",
        )
    )
    s.add(
        s.envelope(
            "user",
            isCompactSummary=True,
            message={
                "role": "user",
                "content": "This session is being continued from a previous conversation. "
                "Summary: imported ING.",
            },
        )
    )
    s.meta("ai-title", aiTitle="Import ING statements")
    s.prompt("Now add the test for the ING importer")
    s.edit("tests/test_importers.py", "Edit")
    s.edit("notebooks/explore.ipynb", "NotebookEdit")
    s.meta("ai-title", aiTitle="ING statement importer")
    s.meta("custom-title", customTitle="ING importer")
    s.meta("last-prompt", leafUuid=s.parent, lastPrompt="Now add the test for the ING importer")
    s.write(gen.folder(ledger) / f"{sid}.jsonl", newline_at_end=False)

    # A resumed session: the same file continued two days later (the date is the first day).
    # Its subagents write in both layouts: flat agent-*.jsonl and <sid>/subagents/.
    sid = gen.ids["resumed"] = gen.uuid()
    infra = gen.cwd("src/infra-terraform")
    s = _Session(gen, sid, infra, datetime(2026, 6, 14, 21, 50, tzinfo=UTC))
    s.prompt("Plan the migration of the state bucket to a new region")
    s.edit("backend.tf")
    s.now += timedelta(days=2)
    s.prompt("Resume: apply the migration plan we wrote on Sunday")
    s.tool(
        "Agent",
        {
            "description": "Update modules",
            "prompt": "Update module sources",
            "subagent_type": "general-purpose",
        },
        "done",
        {"agentId": "a1b2c3d4e5f607182", "status": "completed"},
    )
    s.write(gen.folder(infra) / f"{sid}.jsonl")
    for name, place in (
        ("a1b2c3d4e5f607182", gen.folder(infra) / f"agent-{'a1b2c3d4e5f607182'}.jsonl"),
        (
            "b9c8d7e6f5a4b3c2d",
            gen.folder(infra) / sid / "subagents" / "agent-b9c8d7e6f5a4b3c2d.jsonl",
        ),
    ):
        sub = _Session(gen, sid, infra, s.now - timedelta(minutes=30))
        sub.add(
            sub.envelope(
                "user",
                isSidechain=True,
                agentId=name,
                message={"role": "user", "content": "Update module sources to the new registry"},
            )
        )
        sub.edit(f"modules/{name[:4]}/main.tf")
        sub.lines = [
            line.replace(b'"isSidechain": false', b'"isSidechain": true') for line in sub.lines
        ]
        sub.write(place)
    (gen.folder(infra) / sid / "subagents" / "agent-b9c8d7e6f5a4b3c2d.meta.json").write_text(
        json.dumps({"agentType": "general-purpose", "description": "Update modules"}),
        encoding="utf-8",
    )

    # A fork: a new file copying most of an ordinary session's records (same uuids), then new work.
    parent = gen.transcripts.get("ordinary-0")
    if parent is not None:
        sid = gen.ids["fork"] = gen.uuid()
        fork = _Session(gen, sid, parent.cwd, parent.now)
        # Inherited lines keep the ancestor's sessionId (AstroQore/vibe-bar#190).
        kept = [line for line in parent.lines if b'"ai-title"' not in line]
        fork.lines = kept[: max(1, len(kept) * 9 // 10)]
        fork.parent = json.loads(fork.lines[-1]).get("uuid")
        fork.now = parent.now + timedelta(hours=1)
        fork.prompt("In the fork: try the other rounding mode instead")
        fork.edit("ledgerline/rounding.py", "Write")
        fork.write(gen.folder(parent.cwd) / f"{sid}.jsonl")

    # Torn tail: the last line is cut mid-record (no closing brace); earlier records still count.
    sid = gen.ids["torn"] = gen.uuid()
    docs = gen.cwd("src/docs-site")
    s = _Session(gen, sid, docs, datetime(2026, 6, 18, 13, 0, tzinfo=UTC))
    s.prompt("Add a dark mode toggle to the docs theme")
    s.edit("docs/stylesheets/extra.css", "Write")
    s.prompt("And a print stylesheet")
    s.raw(
        b'{"parentUuid":"x","type":"user",'
        b'"message":{"role":"user","content":"this line was cut while wri'
    )
    s.write(gen.folder(docs) / f"{sid}.jsonl")

    # CRLF line ends, blank lines and a BOM on line 1.
    sid = gen.ids["crlf"] = gen.uuid()
    s = _Session(gen, sid, docs, datetime(2026, 6, 19, 10, 0, tzinfo=UTC))
    s.prompt("Fix the broken links in the navigation")
    s.edit("mkdocs.yml")
    s.prompt("Check the links again after the fix")
    s.lines = [b"\xef\xbb\xbf" + s.lines[0], *s.lines[1:]]
    s.lines = [line.replace(b"\n", b"\r\n") for line in s.lines]
    s.lines.insert(1, b"\r\n")
    s.lines.insert(3, b"   \n\n")
    s.write(gen.folder(docs) / f"{sid}.jsonl")

    # Invalid UTF-8 bytes, a lone surrogate escape, NUL and ANSI escapes in tool output.
    sid = gen.ids["bytes"] = gen.uuid()
    s = _Session(gen, sid, ledger, datetime(2026, 6, 21, 11, 0, tzinfo=UTC))
    s.prompt("Parse the Cr\u00e9dit Agricole export \ud83d please")
    s.tool(
        "Bash",
        {"command": "cat export.csv"},
        "caf\u00e9;12,50\n\x00\x00\x1b[31mERROR\x1b[0m bad row\r\n",
    )
    s.lines[-1] = s.lines[-1].replace("caf\u00e9".encode(), b"caf\xff\xfe\xc3")
    s.prompt("Now skip rows with NUL bytes")
    s.edit("ledgerline/importers/ca.py", "Write")
    s.write(gen.folder(ledger) / f"{sid}.jsonl")

    # Offsets and microseconds: 07:30 at +08:00 is 23:30 UTC the day before, 01:30 in Paris.
    sid = gen.ids["offsets"] = gen.uuid()
    s = _Session(gen, sid, ledger, datetime(2026, 6, 9, 23, 30, tzinfo=UTC))
    s.stamp = lambda m: m.astimezone(PLUS8).isoformat(timespec="microseconds")
    s.prompt("Review the timezone handling in report.py")
    s.tick(-3600)  # out of order: a later record carries an earlier time
    s.prompt("Also check the DST switch in March")
    s.write(gen.folder(ledger) / f"{sid}.jsonl")

    # A huge tool output line (3 MB) followed by more work.
    sid = gen.ids["huge"] = gen.uuid()
    s = _Session(gen, sid, ledger, datetime(2026, 6, 23, 15, 0, tzinfo=UTC))
    s.prompt("Run the full benchmark suite and show me everything")
    s.big_tool(json.dumps("benchmark row 0123456789 " * 120_000).encode())
    s.prompt("Summarise the slowest ten benchmarks")
    s.edit("BENCHMARKS.md", "Write")
    s.write(gen.folder(ledger) / f"{sid}.jsonl")

    # A Windows store copied over: C:\Users paths, escaped backslashes.
    sid = gen.ids["windows"] = gen.uuid()
    win = "C:\\Users\\dana\\src\\ledgerline"
    s = _Session(gen, sid, win, datetime(2026, 6, 24, 8, 0, tzinfo=UTC))
    s.prompt("Make the importer work with Windows line endings")
    s.edit("ledgerline/importers/csv_bank.py")
    s.edit("ledgerline/cli.py")
    s.write(gen.root / "projects" / "C--Users-dana-src-ledgerline" / f"{sid}.jsonl")

    # The root folder, a path over 200 characters, and my_app / my-app sharing one folder name.
    for name, cwd, text in (
        ("root", "/", "What is using all the disk space?"),
        (
            "long",
            gen.cwd("src/" + "/".join(["deeply-nested-folder-name"] * 9) + "/leaf"),
            "Rename the leaf module",
        ),
        ("my_app", gen.cwd("my_app"), "Create a hello world Flask app"),
        ("my-app", gen.cwd("my-app"), "Create a hello world FastAPI app"),
    ):
        sid = gen.ids[name] = gen.uuid()
        s = _Session(gen, sid, cwd, datetime(2026, 6, 25, 9, len(gen.ids), tzinfo=UTC))
        s.prompt(text)
        s.write(gen.folder(cwd) / f"{sid}.jsonl")

    # A private project, an empty file, a metadata-only file and a renamed leftover.
    sid = gen.ids["private"] = gen.uuid()
    diary = gen.cwd("personal/diary-bot")
    s = _Session(gen, sid, diary, datetime(2026, 6, 26, 20, 0, tzinfo=UTC))
    s.prompt("Add my therapist's appointments to the weekly summary")
    s.edit("bot.py")
    s.write(gen.folder(diary) / f"{sid}.jsonl")
    (gen.folder(ledger) / f"{gen.uuid()}.jsonl").write_bytes(b"")
    sid = gen.ids["metadata-only"] = gen.uuid()
    s = _Session(gen, sid, ledger, BASE)
    s.meta("ai-title", aiTitle="Session that never got a message")
    s.write(gen.folder(ledger) / f"{sid}.jsonl")
    (gen.folder(ledger) / f"{gen.uuid()}.jsonl.orphaned-1").write_text(
        '{"type":"user"}\n', encoding="utf-8"
    )

    # A second store in the XDG location.
    sid = gen.ids["xdg"] = gen.uuid()
    s = _Session(gen, sid, ledger, datetime(2026, 6, 27, 10, 0, tzinfo=UTC))
    s.prompt("Bump the version to 0.4.0 and update the changelog")
    s.edit("CHANGELOG.md")
    s.write(home / ".config" / "claude" / "projects" / encode_cwd(ledger) / f"{sid}.jsonl")
