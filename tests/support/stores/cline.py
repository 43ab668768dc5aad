"""A realistic Cline / Roo Code / Kilo Code store: task folders of all three forks.

``write_store(home)`` writes Cline's and Roo Code's VS Code ``globalStorage`` folders, Kilo
Code's under Cursor, and ``~/.cline/data`` (the Cline CLI); it returns the Cline VS Code
folder. Project folders live under ``home/src`` and ``home/private``. Deterministic for a
given ``seed`` and ``sessions``.

Messy cases (native-stores.md 10.3): ``ui_messages.json`` with double-encoded ``text``, one
that is not JSON, ``partial: true`` fragments and a ``resume_task`` boundary; the XML-tool era
and the native ``tool_use`` era of ``api_conversation_history.json`` with
``environment_details``; ``ui_messages.json`` and ``task_metadata.json`` cut mid-write; the
legacy ``claude_messages.json``; a 2 MB command output; invalid UTF-8; a BOM and CRLF in a
pretty-printed file; a message without ``ts``; Windows paths; ``taskHistory.json`` with and
without ``cwdOnTaskInitialization`` and an entry whose folder is gone; Roo's
``history_item.json`` and ``tasks/_index.json``; an empty task folder; ``.clinerules`` as a
folder (with ``hooks/``) and as a file; global rules; a ``secrets.json`` no reader may export.
"""

from __future__ import annotations

import json
import os
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

API_KEY = "CANARY-cline-anthropic-key-sk-ant-4c1d"

WORK: dict[str, list[tuple[str, str | None]]] = {
    "ledgerline": [
        ("Add a CSV importer for bank statements", "ledgerline/importers/csv_bank.py"),
        ("Store every amount as Decimal", "ledgerline/money.py"),
        ("Add a --dry-run flag to the import command", "ledgerline/cli.py"),
        ("Explain the reconcile algorithm", None),
    ],
    "harbor": [
        ("Switch the monorepo to pnpm workspaces", "pnpm-workspace.yaml"),
        ("Share one tsconfig across packages", "packages/config/tsconfig.base.json"),
    ],
    "infra-terraform": [("Add a NAT gateway for the private subnets", "modules\\net\\nat.tf")],
    "health": [("Chart my running distance per week", "running.py")],
}
FEEDBACK = ["Use the existing helper instead", "Also add a test", "Keep the public API unchanged"]


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _write(path: Path, data: bytes | str, mtime: datetime | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    if mtime is not None:
        os.utime(path, (mtime.timestamp(), mtime.timestamp()))
    return path


def _env(cwd: str) -> str:
    return (
        "<environment_details>\n# VSCode Visible Files\nREADME.md\n\n"
        f"# Current Working Directory ({cwd}) Files\nREADME.md\nsrc/\n</environment_details>"
    )


class _Task:
    def __init__(self, rng: random.Random, task_id: str, cwd: str, start: datetime | None) -> None:
        self.rng, self.id, self.cwd, self.moment = rng, task_id, cwd, start
        self.ui: list[Any] = []
        self.api: list[Any] = []
        self.meta: list[dict[str, Any]] = []

    def _ts(self) -> dict[str, Any]:
        if self.moment is None:
            return {}
        self.moment += timedelta(seconds=self.rng.randint(2, 60))
        return {"ts": _ms(self.moment)}

    def say(self, say: str, text: Any, **extra: Any) -> None:
        body = text if isinstance(text, str) else json.dumps(text)
        self.ui.append({**self._ts(), "type": "say", "say": say, "text": body, **extra})

    def ask(self, ask: str, text: str = "", **extra: Any) -> None:
        self.ui.append({**self._ts(), "type": "ask", "ask": ask, "text": text, **extra})

    def first(self, prompt: str, *, xml: bool) -> None:
        self.say(
            "task", prompt, modelInfo={"providerId": "anthropic", "modelId": "claude-sonnet-4-6"}
        )
        request = f"<task>\n{prompt}\n</task>\n\n{_env(self.cwd)}"
        self.say(
            "api_req_started",
            {"request": request, "tokensIn": 9000, "tokensOut": 300, "cost": 0.03},
        )
        content: Any = (
            request
            if xml
            else [
                {"type": "text", "text": f"<task>\n{prompt}\n</task>"},
                {"type": "text", "text": _env(self.cwd)},
            ]
        )
        self.api.append({"role": "user", "content": content, **self._ts()})

    def edit(self, path: str, *, xml: bool, new: bool = False) -> None:
        self.say("text", "I'll make the change.", partial=True)
        self.say("text", "I'll make the change now.", partial=False)
        self.say(
            "tool",
            {
                "tool": "newFileCreated" if new else "editedExistingFile",
                "path": path,
                "diff": "@@ -1 +1 @@\n-a\n+b",
            },
        )
        if xml:
            text = (
                f"I'll update the file.\n\n<replace_in_file>\n<path>{path}</path>\n<diff>\n"
                "------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n</diff>\n</replace_in_file>"
            )
            self.api.append({"role": "assistant", "content": [{"type": "text", "text": text}]})
            self.api.append(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "[replace_in_file] Result: ok"}],
                }
            )
        else:
            tool_id = f"toolu_{self.rng.getrandbits(40):010x}"
            name = "write_to_file" if new else "replace_in_file"
            self.api.append(
                {
                    "role": "assistant",
                    **self._ts(),
                    "content": [
                        {"type": "text", "text": "Updating the file."},
                        {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": name,
                            "input": {"path": path, "content": "x"},
                        },
                    ],
                }
            )
            self.api.append(
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}],
                }
            )
        self.meta.append(
            {
                "path": path,
                "record_state": "active",
                "record_source": "cline_edited",
                "cline_read_date": _ms(self.moment) if self.moment else None,
                "cline_edit_date": _ms(self.moment) if self.moment else None,
            }
        )

    def read(self, path: str) -> None:
        self.say("tool", {"tool": "readFile", "path": path, "content": "..."})
        self.api.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "r", "name": "read_file", "input": {"path": path}}
                ],
            }
        )
        self.meta.append({"path": path, "record_state": "active", "record_source": "read_tool"})

    def write(self, folder: Path, *, ui_name: str = "ui_messages.json") -> Path:
        task = folder / "tasks" / self.id
        _write(task / ui_name, json.dumps(self.ui))
        _write(task / "api_conversation_history.json", json.dumps(self.api))
        _write(
            task / "task_metadata.json",
            json.dumps(
                {
                    "files_in_context": self.meta,
                    "model_usage": [
                        {
                            "ts": _ms(self.moment) if self.moment else 0,
                            "model_id": "claude-sonnet-4-6",
                            "model_provider_id": "anthropic",
                            "mode": "act",
                        }
                    ],
                    "environment_history": [
                        {
                            "os_name": "linux",
                            "host_name": "Visual Studio Code",
                            "cline_version": "3.38.1",
                        }
                    ],
                },
                indent=2,
            ),
        )
        return task


def write_store(home: Path, *, seed: int = 0, sessions: int = 10) -> Path:
    """Write Cline, Roo Code and Kilo Code stores under ``home``; return Cline's folder."""
    rng = random.Random(f"cline-{seed}")
    storage = home / ".config" / "Code" / "User" / "globalStorage"
    roots = {
        "cline": storage / "saoudrizwan.claude-dev",
        "roo": storage / "rooveterinaryinc.roo-cline",
        "kilo": home / ".config" / "Cursor" / "User" / "globalStorage" / "kilocode.kilo-code",
        "cli": home / ".cline" / "data",
    }
    src = home / "src"
    cwds = {
        "ledgerline": str(src / "ledgerline"),
        "harbor": str(src / "harbor"),
        "infra-terraform": "C:\\Users\\dana\\src\\infra-terraform",
        "health": str(home / "private" / "health"),
    }
    for repo in (src / "ledgerline", src / "harbor", home / "private" / "health"):
        (repo / ".git").mkdir(parents=True)
    rules_time = datetime(2026, 2, 1, 10, 0, tzinfo=UTC)
    _write(
        src / "ledgerline" / ".clinerules" / "testing.md",
        "---\ndescription: Tests\n---\nEvery change needs a pytest test.\n",
        rules_time,
    )
    _write(
        src / "ledgerline" / ".clinerules" / "hooks" / "TaskStart",
        "#!/bin/sh\nexit 0\n",
        rules_time,
    )
    _write(src / "harbor" / ".clinerules", "Use pnpm, never npm or yarn.\n", rules_time)
    _write(home / "Documents" / "Cline" / "Rules" / "style.md", "Answer briefly.\n", rules_time)
    _write(roots["cli"] / "secrets.json", json.dumps({"apiKey": API_KEY}))
    _write(roots["cli"] / "globalState.json", json.dumps({"mode": "act"}))

    history: dict[str, list[dict[str, Any]]] = {name: [] for name in roots}
    places = ["cline", "cline", "roo", "kilo", "cli"]
    projects = ["ledgerline", "harbor", "ledgerline", "infra-terraform", "health"]
    base = datetime(2026, 2, 2, 8, 0, tzinfo=UTC)
    for i in range(sessions):
        place, project = places[i % len(places)], projects[(i * 3) % len(projects)]
        start = base + timedelta(days=3 * i, hours=rng.randint(0, 9), minutes=rng.randint(0, 59))
        task = _Task(rng, str(_ms(start)), cwds[project], start)
        xml = place == "roo" or i % 4 == 3
        work = rng.sample(WORK[project], k=min(len(WORK[project]), rng.randint(1, 3)))
        task.first(work[0][0], xml=xml)
        for n, (text, edit) in enumerate(work):
            if n:
                task.say("user_feedback", text)
            task.read("README.md")
            if edit:
                task.edit(edit, xml=xml, new=n == 0)
            task.say("completion_result", "Done.")
            task.ask("completion_result")
        folder = task.write(roots[place])
        item: dict[str, Any] = {
            "id": task.id,
            "ts": _ms(start),
            "task": work[0][0],
            "tokensIn": 9000,
            "tokensOut": 300,
            "totalCost": 0.03,
            "size": 42000,
        }
        if i % 2 == 0:
            item["cwdOnTaskInitialization"] = cwds[project]
        if place == "roo":
            _write(
                folder / "history_item.json",
                json.dumps({**item, "number": i, "workspace": cwds[project], "mode": "code"}),
            )
        else:
            history[place].append(item)

    # A resumed task with partial fragments, double-encoded text that is not JSON, invalid
    # UTF-8, a 2 MB command output and a message without ts.
    start = datetime(2026, 3, 10, 23, 15, tzinfo=UTC)  # 00:15 on 11 March in Paris
    task = _Task(rng, str(_ms(start)), cwds["ledgerline"], start)
    task.first("Add a monthly report command", xml=False)
    task.say("text", "PARTIAL FRAGMENT that was never finished", partial=True)
    task.say("tool", {"tool": "editedExistingFile", "path": "ledgerline/PARTIAL.py"}, partial=True)
    task.edit("ledgerline/report.py", xml=False, new=True)
    task.say("command", "pytest -q")
    task.say("command_output", "\x1b[32m" + "." * 2_000_000 + "\x1b[0m\r\n")
    task.say("tool", "{not json")
    task.ask("resume_task")
    task.say("user_feedback", "PLACEHOLDER")
    task.ui[-1].pop("ts")
    task.edit("ledgerline/cli.py", xml=False)
    raw = (
        json.dumps(task.ui)
        .encode()
        .replace(b"PLACEHOLDER", b"Marco wants the caf\xc3\xa9 \xff report too")
    )
    folder = task.write(roots["cline"])
    _write(folder / "ui_messages.json", raw)
    history["cline"].append(
        {
            "id": task.id,
            "ts": _ms(start),
            "task": "Add a monthly report command",
            "cwdOnTaskInitialization": cwds["ledgerline"],
        }
    )

    # Files caught mid-write: ui_messages.json in one task, task_metadata.json in another.
    start = datetime(2026, 3, 12, 9, 0, tzinfo=UTC)
    task = _Task(rng, str(_ms(start)), cwds["harbor"], start)
    task.first("Move eslint config into packages/config", xml=False)
    task.edit("packages/config/eslint.js", xml=False, new=True)
    folder = task.write(roots["cline"])
    _write(folder / "ui_messages.json", json.dumps(task.ui)[:200])
    start = datetime(2026, 3, 13, 9, 0, tzinfo=UTC)
    task = _Task(rng, str(_ms(start)), cwds["harbor"], start)
    task.first("Add a changeset for the config package", xml=True)
    task.edit(".changeset/config.md", xml=True, new=True)
    folder = task.write(roots["cli"])
    _write(
        folder / "task_metadata.json",
        b"\xef\xbb\xbf"
        + json.dumps({"files_in_context": []}, indent=2).replace("\n", "\r\n").encode()[:25],
    )

    # The legacy claude_messages.json, XML era, no history entry: cwd from environment_details.
    start = datetime(2025, 9, 1, 14, 0, tzinfo=UTC)
    task = _Task(rng, str(_ms(start)), cwds["ledgerline"], start)
    task.first("Write a README for the importer", xml=True)
    task.edit("ledgerline/importers/README.md", xml=True, new=True)
    task.write(roots["cline"], ui_name="claude_messages.json")

    # Listed in the history, folder gone; an empty folder; Roo's _index.json; a bad history.
    history["cline"].append(
        {
            "id": "1767225600000",
            "ts": 1767225600000,
            "task": "Plan the 2026 roadmap for ledgerline",
            "cwdOnTaskInitialization": cwds["ledgerline"],
        }
    )
    (roots["kilo"] / "tasks" / "1700000000000").mkdir(parents=True)
    _write(roots["roo"] / "tasks" / "_index.json", json.dumps({"version": 1, "entries": []}))
    for place, items in history.items():
        if items:
            text = json.dumps(items, indent=2)
            if place == "cli":
                text = "\ufeff" + text.replace("\n", "\r\n")
            _write(roots[place] / "state" / "taskHistory.json", text)
    return roots["cline"]
