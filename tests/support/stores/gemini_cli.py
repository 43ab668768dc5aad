"""A realistic Gemini CLI store: ``~/.gemini`` with both session formats and both id schemes.

``write_store(home)`` writes ``home/.gemini`` and returns it; project folders live under
``home/src`` and ``home/personal``. Deterministic for a given ``seed`` and ``sessions``.

Messy cases (native-stores.md 10.3): ``tmp/<sha256>`` and ``tmp/<slug>`` project folders (one
project in both, one hash that nothing resolves), ``projects.json`` and ``.project_root``
(lower-cased on Windows); legacy ``.json`` and ``.jsonl`` sessions with ``$set``,
``$rewindTo`` (known and unknown targets), a repeated message id, ``$set.messages``, and a
``.json``/``.jsonl`` pair for one resumed session; subagent chats; a torn last line; an
unknown record; a BOM, CRLF line ends, blank lines; invalid UTF-8; messages without a
timestamp and ``+05:30`` offsets; a failed edit; a 1 MB tool output; a legacy file cut
mid-write; ``*.tmp-<pid>`` and ``*.unreadable-<ms>`` decoys; ``logs.json``; a
``checkpoint-<tag>.json``; GEMINI.md with the legacy ``## Gemini Added Memories`` section,
``memory.md`` and a project ``memory/`` folder; OAuth credentials no reader may export.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

OAUTH_TOKEN = "CANARY-gemini-oauth-access-token-8d2f"

WORK: dict[str, list[tuple[str, str | None]]] = {
    "ledgerline": [
        ("add a CSV importer for bank statements", "ledgerline/importers/csv_bank.py"),
        ("use Decimal for money, never float", "ledgerline/money.py"),
        ("why is test_rounding flaky?", None),
        ("add type hints to the importer", "ledgerline/importers/csv_bank.py"),
    ],
    "docs-site": [
        ("add a page about the import command", "docs/import.md"),
        ("check every link in the docs", None),
    ],
    "infra-terraform": [("add a budget alert of 200 euros", "budget.tf")],
    "notes": [("turn my meeting notes into a todo list", "todo.md")],
}
SUMMARIES = {
    "ledgerline": "Bank statement importer",
    "docs-site": "Import command docs",
    "infra-terraform": "Budget alert",
    "notes": "Meeting todos",
}


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-b{h[17:20]}-{h[20:32]}"


def _write(path: Path, data: bytes | str, mtime: datetime | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    if mtime is not None:
        os.utime(path, (mtime.timestamp(), mtime.timestamp()))
    return path


def _jsonl(records: list[Any], *, crlf: bool = False, bom: bool = False) -> bytes:
    lines = [r if isinstance(r, bytes) else json.dumps(r).encode() for r in records]
    end = b"\r\n" if crlf else b"\n"
    return (b"\xef\xbb\xbf" if bom else b"") + end.join(lines) + end


def _name(start: datetime, sid: str, suffix: str) -> str:
    return f"session-{start.astimezone(UTC).strftime('%Y-%m-%dT%H-%M')}-{sid[:8]}{suffix}"


class _Chat:
    def __init__(self, rng: random.Random, sid: str, project_hash: str, start: datetime) -> None:
        self.rng, self.sid, self.moment = rng, sid, start
        self.meta: dict[str, Any] = {
            "sessionId": sid,
            "projectHash": project_hash,
            "startTime": _iso(start),
            "lastUpdated": _iso(start),
            "kind": "main",
        }
        self.records: list[Any] = []
        self.n = 0

    def _next(self) -> str:
        self.n += 1
        self.moment += timedelta(seconds=self.rng.randint(5, 120))
        return f"m-{self.n:02d}"

    def user(self, text: str, *, parts: bool = True) -> dict[str, Any]:
        record = {
            "id": self._next(),
            "timestamp": _iso(self.moment),
            "type": "user",
            "content": [{"text": text}] if parts else text,
        }
        self.records.append(record)
        return record

    def gemini(
        self, edit: str | None, cwd: str, *, status: str = "success", output: str = "ok"
    ) -> dict[str, Any]:
        mid = self._next()
        calls: list[dict[str, Any]] = [
            {
                "id": f"read_file-{self.n}",
                "name": "read_file",
                "args": {"file_path": f"{cwd}/README.md"},
                "status": "success",
                "timestamp": _iso(self.moment),
            }
        ]
        if edit:
            sep = "\\" if cwd[1:3] == ":\\" else "/"
            name = self.rng.choice(["write_file", "replace"])
            calls.append(
                {
                    "id": f"{name}-{self.n}",
                    "name": name,
                    "args": {
                        "file_path": f"{cwd}{sep}{edit.replace('/', sep)}",
                        "content": "x = 1\n",
                    },
                    "result": [
                        {
                            "functionResponse": {
                                "id": f"{name}-{self.n}",
                                "name": name,
                                "response": {"output": output},
                            }
                        }
                    ],
                    "status": status,
                    "timestamp": _iso(self.moment),
                    "displayName": "WriteFile",
                }
            )
        record = {
            "id": mid,
            "timestamp": _iso(self.moment),
            "type": "gemini",
            "content": [{"text": "Done."}],
            "model": "gemini-2.5-pro",
            "tokens": {"input": 8000, "output": 400, "cached": 0, "total": 8400},
            "toolCalls": calls,
        }
        self.records.append(record)
        return record

    def legacy(self, summary: str | None) -> dict[str, Any]:
        data = {**self.meta, "lastUpdated": _iso(self.moment), "messages": self.records}
        if summary:
            data["summary"] = summary
        return data

    def lines(self, summary: str | None) -> list[Any]:
        out: list[Any] = [self.meta, *self.records]
        if summary:
            out.append({"$set": {"summary": summary, "lastUpdated": _iso(self.moment)}})
        return out


def write_store(home: Path, *, seed: int = 0, sessions: int = 10) -> Path:
    """Write a Gemini CLI store under ``home`` and return ``home/.gemini``."""
    rng = random.Random(f"gemini-{seed}")
    root = home / ".gemini"
    src = home / "src"
    for repo in (src / "ledgerline", src / "docs-site", home / "personal" / "notes"):
        (repo / ".git").mkdir(parents=True)
    paths = {
        "ledgerline": str(src / "ledgerline"),
        "docs-site": str(src / "docs-site"),
        "infra-terraform": "C:\\Users\\dana\\src\\infra-terraform",
        "notes": str(home / "personal" / "notes"),
    }
    hashes = {name: hashlib.sha256(path.encode()).hexdigest() for name, path in paths.items()}
    registry = {
        paths["ledgerline"]: "ledgerline",
        paths["docs-site"]: "docs-site",
        paths["infra-terraform"].lower(): "infra-terraform",
        paths["notes"]: "notes",
    }
    _write(root / "projects.json", json.dumps({"projects": registry}, indent=2))
    dirs = {
        "ledgerline": root / "tmp" / "ledgerline",
        "docs-site": root / "tmp" / hashes["docs-site"],  # not yet migrated: the hash folder
        "infra-terraform": root / "tmp" / "infra-terraform",
        "notes": root / "tmp" / "notes",
    }
    for name, folder in dirs.items():
        if folder.name == registry.get(paths[name]) or folder.name == "infra-terraform":
            marker = paths[name].lower() if name == "infra-terraform" else paths[name]
            _write(folder / ".project_root", marker)
    (root / "tmp" / "bin").mkdir(parents=True)
    _write(
        root / "oauth_creds.json", json.dumps({"access_token": OAUTH_TOKEN, "token_type": "Bearer"})
    )
    _write(
        root / "settings.json",
        json.dumps(
            {
                "hooks": {
                    "SessionEnd": [
                        {"hooks": [{"type": "command", "command": "bourdon export gemini-cli"}]}
                    ]
                }
            }
        ),
    )
    memory_time = datetime(2026, 5, 30, 18, 0, tzinfo=UTC)
    _write(
        root / "GEMINI.md",
        "# Dana's defaults\n\nAnswer in British English.\n\n"
        "## Gemini Added Memories\n- Priya owns the importers.\n"
        "- The team uses pnpm, not npm.\n"
        "\n## Style\n\nShort commit messages.\n",
        memory_time,
    )
    _write(root / "memory.md", "- Dana prefers pytest over unittest.\n", memory_time)
    _write(
        src / "ledgerline" / "GEMINI.md",
        "Money is Decimal.\r\n\r\n## Gemini Added Memories\r\n"
        "- Statements arrive as CSV from two banks.\r\n",
        memory_time,
    )
    _write(
        dirs["ledgerline"] / "memory" / "MEMORY.md",
        "# Memory\n\n- Run `make test` before pushing.\n  It takes about a minute.\n",
        memory_time,
    )

    logs: dict[str, list[dict[str, Any]]] = {name: [] for name in paths}
    rotation = ["ledgerline", "docs-site", "ledgerline", "infra-terraform", "notes"]
    base = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
    for i in range(sessions):
        project = rotation[i % len(rotation)]
        sid = _uuid(rng)
        start = base + timedelta(days=2 * i, hours=rng.randint(0, 10), minutes=rng.randint(0, 59))
        chat = _Chat(rng, sid, hashes[project], start)
        for text, edit in rng.sample(WORK[project], k=min(len(WORK[project]), rng.randint(1, 3))):
            prompt = chat.user(text, parts=i % 2 == 0)
            chat.gemini(edit, paths[project])
            logs[project].append(
                {
                    "sessionId": sid,
                    "messageId": len(logs[project]),
                    "type": "user",
                    "message": text,
                    "timestamp": prompt["timestamp"],
                }
            )
        chats = dirs[project] / "chats"
        summary = SUMMARIES[project] if i % 3 else None
        if project == "docs-site":  # the old hash folder holds legacy .json sessions
            _write(chats / _name(start, sid, ".json"), json.dumps(chat.legacy(summary), indent=2))
        else:
            _write(
                chats / _name(start, sid, ".jsonl"), _jsonl(chat.lines(summary), crlf=i % 4 == 3)
            )

    # A .jsonl with every kind of record, a rewind, a repeated id and a torn tail.
    cwd = paths["ledgerline"]
    start = datetime(2026, 6, 25, 22, 10, tzinfo=UTC)  # 00:10 on 26 June in Paris
    sid = _uuid(rng)
    chat = _Chat(rng, sid, hashes["ledgerline"], start)
    chat.user("add a monthly report command")
    first = chat.gemini("ledgerline/report.py", cwd)
    undone = chat.user("UNDONE: delete the tests")
    chat.gemini("tests/UNDONE.py", cwd)
    records: list[Any] = [
        chat.meta,
        b"",
        *chat.records[:2],
        chat.records[2],
        chat.records[3],
        {"$rewindTo": undone["id"]},
    ]
    chat.user("/memory add reports are monthly")  # a slash command: not a prompt
    chat.user("also export the report as CSV")
    redo = chat.gemini("ledgerline/report_csv.py", cwd, output="y" * 1_000_000)
    retry = dict(
        first,
        toolCalls=[
            *first["toolCalls"],
            {
                "id": "replace-retry",
                "name": "replace",
                "status": "error",
                "args": {"file_path": f"{cwd}/ledgerline/FAILED.py"},
            },
        ],
    )
    records += [
        *chat.records[4:],
        retry,
        {"$future": {"x": 1}},
        {"$set": {"summary": "Monthly report", "lastUpdated": _iso(chat.moment)}},
        {
            "$set": {
                "messages": [
                    {
                        "id": "m-90",
                        "type": "user",
                        "timestamp": _iso(chat.moment),
                        "content": "compressed: keep the CSV columns stable",
                    }
                ]
            }
        },
    ]
    torn = json.dumps({"id": "m-99", "type": "user", "content": "half a line"}).encode()[:30]
    _write(
        dirs["ledgerline"] / "chats" / _name(start, sid, ".jsonl"), _jsonl(records, bom=True) + torn
    )
    assert redo  # the 1 MB tool output is in the file

    # A subagent chat of that session: its edit counts for the parent, its prompt does not.
    sub = _Chat(rng, _uuid(rng), hashes["ledgerline"], start + timedelta(minutes=3))
    sub.meta.update(kind="subagent", directories=[cwd])
    sub.user("SUBAGENT PROMPT: list the report columns")
    sub.gemini("ledgerline/report_columns.py", cwd)
    _write(dirs["ledgerline"] / "chats" / sid / f"{sub.sid}.jsonl", _jsonl(sub.lines(None)))

    # A rewind to an unknown id clears everything before it.
    sid = _uuid(rng)
    chat = _Chat(rng, sid, hashes["ledgerline"], datetime(2026, 6, 27, 8, 0, tzinfo=UTC))
    chat.user("FORGOTTEN: rename the package")
    records = [*chat.lines(None), {"$rewindTo": "no-such-id"}]
    chat.records = []
    chat.user("rename the money module to amounts")
    chat.gemini("ledgerline/amounts.py", cwd)
    _write(
        dirs["ledgerline"] / "chats" / _name(chat.moment, sid, ".jsonl"),
        _jsonl([*records, *chat.records]),
    )

    # A resumed legacy session: the .json and the .jsonl Gemini wrote next to it.
    sid = _uuid(rng)
    start = datetime(2026, 6, 28, 13, 0, tzinfo=UTC)
    chat = _Chat(rng, sid, hashes["ledgerline"], start)
    chat.user("add a --since option to the report")
    chat.gemini("ledgerline/cli.py", cwd)
    legacy = chat.legacy("Report options")
    chat.user("and an --until option")
    chat.gemini("ledgerline/cli.py", cwd)
    name = _name(start, sid, ".json")
    _write(dirs["ledgerline"] / "chats" / name, json.dumps(legacy))
    _write(dirs["ledgerline"] / "chats" / (name + "l"), _jsonl(chat.lines(None)))

    # Invalid UTF-8, +05:30 offsets, no timestamp on one message, Windows paths.
    sid = _uuid(rng)
    chat = _Chat(rng, sid, hashes["infra-terraform"], datetime(2026, 6, 29, 4, 0, tzinfo=UTC))
    chat.meta["startTime"] = "2026-06-29T09:30:00.000+05:30"
    chat.user("PLACEHOLDER")
    del chat.records[-1]["timestamp"]
    chat.gemini("modules/net/main.tf", paths["infra-terraform"], status="success")
    raw = _jsonl(chat.lines("Subnets")).replace(
        b"PLACEHOLDER", b"split the caf\xc3\xa9 \xff subnet"
    )
    _write(dirs["infra-terraform"] / "chats" / _name(chat.moment, sid, ".jsonl"), raw)

    # The same project also under its new slug folder (written after the registry change).
    sid = _uuid(rng)
    chat = _Chat(rng, sid, hashes["docs-site"], datetime(2026, 6, 29, 15, 0, tzinfo=UTC))
    chat.user("add a search page to the docs")
    chat.gemini("docs/search.md", paths["docs-site"])
    slug = root / "tmp" / "docs-site"
    _write(slug / ".project_root", paths["docs-site"])
    _write(slug / "chats" / _name(chat.moment, sid, ".jsonl"), _jsonl(chat.lines("Docs search")))

    # A hash folder nothing resolves: sessions without a working directory.
    lost = root / "tmp" / hashlib.sha256(b"/home/dana/src/lost-project").hexdigest()
    sid = _uuid(rng)
    chat = _Chat(rng, sid, lost.name, datetime(2026, 6, 30, 10, 0, tzinfo=UTC))
    chat.user("what does this old script do?")
    _write(lost / "chats" / _name(chat.moment, sid, ".json"), json.dumps(chat.legacy(None)))

    # Decoys, a cut legacy file, a checkpoint, logs.json (one session has no chat file).
    decoy = _Chat(rng, _uuid(rng), hashes["ledgerline"], datetime(2026, 7, 1, 9, 0, tzinfo=UTC))
    decoy.user("DECOY: must never be read")
    chats = dirs["ledgerline"] / "chats"
    _write(
        chats / (_name(decoy.moment, decoy.sid, ".jsonl") + ".tmp-4242"), _jsonl(decoy.lines(None))
    )
    _write(
        chats / (_name(decoy.moment, decoy.sid, ".json") + ".unreadable-1782900000000"),
        json.dumps(decoy.legacy(None)),
    )
    _write(
        dirs["docs-site"] / "chats" / "session-2026-07-02T10-00-cafebabe.json",
        json.dumps(chat.legacy(None))[:120],
    )
    _write(
        dirs["ledgerline"] / "checkpoint-before-refactor.json",
        json.dumps({"history": [{"role": "user", "parts": [{"text": "CHECKPOINT"}]}]}),
    )
    only_logged = _uuid(rng)
    logs["ledgerline"] += [
        {
            "sessionId": only_logged,
            "messageId": 0,
            "type": "user",
            "message": "summarise yesterday's import failures",
            "timestamp": "2026-05-31T16:00:00.000Z",
        },
        {
            "sessionId": only_logged,
            "messageId": 1,
            "type": "user",
            "message": "/quit",
            "timestamp": "2026-05-31T16:05:00.000Z",
        },
    ]
    for name, entries in logs.items():
        if entries:
            _write(dirs[name] / "logs.json", json.dumps(entries, indent=2))
    return root
