"""A realistic VS Code Copilot Chat store: chat sessions as JSON and as mutation logs.

``write_store(home)`` writes ``home/.config/Code/User`` (and one session under
``Code - Insiders``) and returns the ``Code`` user folder. Project folders live under
``home/src`` and ``home/personal``. Deterministic for a given ``seed`` and ``sessions``.

Messy cases (native-stores.md 10.3): mutation logs with every entry kind, ``i`` truncation
that removes a request, a delete, a file compacted back to one ``kind: 0`` line, a torn last
line, entries before the initial state, an unknown kind and a path that does not exist; a BOM,
CRLF line ends and blank lines; old ``.json`` sessions and a ``.json``/``.jsonl`` pair for one
session; a 1 MB response and a ``[JustRide: value truncated…]`` marker; invalid UTF-8 in a
prompt; a session without ``creationDate``; empty stubs; URIs as strings and as
``{fsPath, external, path, scheme}`` with ``file:///c%3A/`` Windows paths; a multi-root
workspace; chats with no folder; a UI index (``state.vscdb``) out of sync with the files.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

WORK: dict[str, list[tuple[str, str | None]]] = {
    "ledgerline": [
        ("add a --dry-run flag to the import command", "ledgerline/cli.py"),
        ("store amounts as Decimal in the ledger model", "ledgerline/model.py"),
        ("add a test for the payee matcher", "tests/test_payees.py"),
        ("explain how the importer detects the date format", None),
    ],
    "docs-site": [
        ("document the new import flags", "docs/import.md"),
        ("fix the navigation order in mkdocs.yml", "mkdocs.yml"),
    ],
    "infra-terraform": [
        ("add an alarm on the uploads bucket size", "modules/storage/alarms.tf"),
        ("why does terraform plan want to recreate the subnet?", None),
    ],
    "blog": [("draft a post about moving to pnpm", "posts/pnpm.md")],
}

CUSTOM_TITLES = {
    "ledgerline": "Dry-run flag",
    "docs-site": "Import docs",
    "infra-terraform": "Bucket alarms",
    "blog": "pnpm post",
}


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-9{h[17:20]}-{h[20:32]}"


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def _jsonl(entries: list[Any], *, crlf: bool = False, bom: bool = False) -> bytes:
    lines = [e if isinstance(e, bytes) else json.dumps(e).encode() for e in entries]
    end = b"\r\n" if crlf else b"\n"
    return (b"\xef\xbb\xbf" if bom else b"") + end.join(lines) + end


def _file_uri(path: str) -> Any:
    if path.startswith("C:\\"):
        rest = path[3:].replace("\\", "/")
        return {
            "$mid": 1,
            "fsPath": "c:\\" + path[3:],
            "external": f"file:///c%3A/{rest}",
            "path": f"/c:/{rest}",
            "scheme": "file",
        }
    return "file://" + path


class _Builder:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def request(self, text: str, moment: datetime, edit: str | None, cwd: str) -> dict[str, Any]:
        rid = f"request_{self.rng.getrandbits(32):08x}"
        response: list[Any] = [{"kind": "thinking", "value": "Looking at the code."}]
        result: dict[str, Any] = {"metadata": {"toolCallRounds": []}, "timings": {}}
        if edit:
            sep = "\\" if cwd.startswith("C:\\") else "/"
            absolute = f"{cwd}{sep}{edit.replace('/', sep)}"
            style = self.rng.choice(["group", "tool", "round", "patch"])
            response.append(
                {"kind": "inlineReference", "inlineReference": {"fsPath": f"{cwd}/README.md"}}
            )
            if style == "group":
                response.append(
                    {
                        "kind": "textEditGroup",
                        "uri": _file_uri(absolute),
                        "edits": [[]],
                        "done": True,
                    }
                )
            elif style == "tool":
                link = _file_uri(absolute)
                link = link if isinstance(link, str) else link["external"]
                response.append(
                    {
                        "kind": "toolInvocationSerialized",
                        "toolId": "copilot_replaceString",
                        "toolCallId": f"call_{self.rng.getrandbits(32):08x}",
                        "isComplete": True,
                        "isConfirmed": True,
                        "invocationMessage": "Editing",
                        "pastTenseMessage": {"value": f"Edited []({link})"},
                    }
                )
            elif style == "round":
                result["metadata"]["toolCallRounds"].append(
                    {
                        "toolCalls": [
                            {
                                "id": "tc1",
                                "name": "replace_string_in_file",
                                "arguments": json.dumps(
                                    {"filePath": absolute, "oldString": "a", "newString": "b"}
                                ),
                            }
                        ]
                    }
                )
            else:
                result["metadata"]["toolCallRounds"].append(
                    {
                        "toolCalls": [
                            {
                                "id": "tc2",
                                "name": "apply_patch",
                                "arguments": json.dumps(
                                    {
                                        "input": f"*** Begin Patch\n*** Update File: {absolute}\n"
                                        "@@\n-a\n+b\n*** End Patch"
                                    }
                                ),
                            }
                        ]
                    }
                )
            response.append({"kind": "undoStop", "id": "u1"})
        if self.rng.random() < 0.5:
            response.append({"value": "Done: the change is in place.", "isTrusted": False})
        else:
            response.append({"value": {"kind": "markdownContent", "content": {"value": "Done."}}})
        # A read of another file: not an edit.
        response.append(
            {
                "kind": "toolInvocationSerialized",
                "toolId": "copilot_readFile",
                "pastTenseMessage": {"value": f"Read [](file://{cwd}/setup.cfg)"},
            }
        )
        return {
            "requestId": rid,
            "timestamp": _ms(moment),
            "message": {"text": text, "parts": [{"kind": "text", "text": text}]},
            "variableData": {"variables": []},
            "agent": {"id": "github.copilot.editsAgent"},
            "modelId": "copilot/gpt-4.1",
            "modeInfo": {"kind": "agent"},
            "response": response,
            "result": result,
            "responseId": f"response_{rid[8:]}",
        }


def _session(
    sid: str, created: datetime | None, requests: list[Any], **extra: Any
) -> dict[str, Any]:
    state: dict[str, Any] = {
        "version": 3,
        "sessionId": sid,
        "initialLocation": "panel",
        "responderUsername": "GitHub Copilot",
        "requests": requests,
    }
    if created is not None:
        state["creationDate"] = _ms(created)
    state.update(extra)
    return state


def _log(state: dict[str, Any]) -> list[Any]:
    """The mutation log VS Code appends as a session grows: empty state, then pushes."""
    initial = {k: v for k, v in state.items() if k not in ("requests", "customTitle")}
    entries: list[Any] = [{"kind": 0, "v": {**initial, "requests": []}}]
    for n, request in enumerate(state["requests"]):
        bare = {k: v for k, v in request.items() if k not in ("response", "result")}
        entries.append({"kind": 2, "k": ["requests"], "v": [{**bare, "response": []}]})
        entries.append({"kind": 2, "k": ["requests", n, "response"], "v": request["response"]})
        entries.append({"kind": 1, "k": ["requests", n, "result"], "v": request["result"]})
        entries.append({"kind": 1, "k": ["requests", n, "isCanceled"], "v": False})
    if "customTitle" in state:
        entries.append({"kind": 1, "k": ["customTitle"], "v": state["customTitle"]})
    return entries


def _index_db(path: Path, titles: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)  # VS Code's state.vscdb: a rollback-journal database
    try:
        conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        entries = {
            sid: {"sessionId": sid, "title": t, "isEmpty": False} for sid, t in titles.items()
        }
        conn.execute(
            "INSERT INTO ItemTable VALUES (?, ?)",
            ("chat.ChatSessionStore.index", json.dumps({"version": 1, "entries": entries})),
        )
        conn.execute(
            "INSERT INTO ItemTable VALUES (?, ?)", ("workbench.explorer.treeViewState", "{}")
        )
        conn.commit()
    finally:
        conn.close()


def write_store(home: Path, *, seed: int = 0, sessions: int = 10) -> Path:
    """Write a VS Code Copilot Chat store under ``home`` and return the ``Code/User`` folder."""
    rng = random.Random(f"copilot-{seed}")
    build = _Builder(rng)
    user = home / ".config" / "Code" / "User"
    src = home / "src"
    for repo in ("src/ledgerline", "src/docs-site", "personal/blog", "scratch"):
        (home / repo / ".git").mkdir(parents=True)
    cwds = {
        "ledgerline": str(src / "ledgerline"),
        "docs-site": str(src / "docs-site"),
        "infra-terraform": "C:\\Users\\dana\\src\\infra-terraform",
        "blog": str(home / "personal" / "blog"),
    }
    uris = {
        "ledgerline": f"file://{src}/ledgerline",
        "docs-site": f"file://{src}/docs-site",
        "infra-terraform": "file:///c%3A/Users/dana/src/infra-terraform",
        "blog": f"file://{home}/personal/blog",
    }
    ws_ids = {name: f"{rng.getrandbits(128):032x}" for name in cwds}
    memory_time = datetime(2026, 8, 3, 9, 0, tzinfo=UTC).timestamp()
    _write(
        src / "ledgerline" / ".github" / "copilot-instructions.md", "Use pytest, never unittest.\n"
    )
    mem = (
        user
        / "workspaceStorage"
        / ws_ids["ledgerline"]
        / "GitHub.copilot-chat"
        / "memory-tool"
        / "memories"
    )
    _write(
        mem / "repo" / "ledgerline.md",
        "# ledgerline\n\n- Amounts are Decimal, quantized to 0.01.\n- The importer reads\n"
        "  ISO and day-first dates.\n* Priya reviews anything under importers/.\n",
    )
    for path in (
        src / "ledgerline" / ".github" / "copilot-instructions.md",
        mem / "repo" / "ledgerline.md",
    ):
        os.utime(path, (memory_time, memory_time))
    for name, uri in uris.items():
        _write(
            user / "workspaceStorage" / ws_ids[name] / "workspace.json", json.dumps({"folder": uri})
        )

    titles: dict[str, dict[str, str]] = {name: {} for name in cwds}
    rotation = ["ledgerline", "docs-site", "infra-terraform", "ledgerline", "blog"]
    base = datetime(2026, 8, 4, 8, 0, tzinfo=UTC)
    for i in range(sessions):
        project = rotation[i % len(rotation)]
        sid = _uuid(rng)
        moment = base + timedelta(days=3 * i, hours=rng.randint(0, 10), minutes=rng.randint(0, 59))
        created = moment
        picked = rng.sample(WORK[project], k=min(len(WORK[project]), rng.randint(1, 3)))
        requests = []
        for text, edit in picked:
            moment += timedelta(minutes=rng.randint(1, 20))
            requests.append(build.request(text, moment, edit, cwds[project]))
        extra = {"customTitle": CUSTOM_TITLES[project]} if i % 4 == 0 else {}
        state = _session(sid, created, requests, **extra)
        folder = user / "workspaceStorage" / ws_ids[project] / "chatSessions"
        if i % 3 == 0:
            _write(folder / f"{sid}.json", json.dumps(state, indent=2))  # the old format
        else:
            _write(folder / f"{sid}.jsonl", _jsonl(_log(state), crlf=i % 5 == 2))
        titles[project][sid] = f"Chat about {project}"
        if i == 1:
            edited = user / "workspaceStorage" / ws_ids[project] / "chatEditingSessions" / sid
            _write(
                edited / "state.json",
                json.dumps(
                    {
                        "version": 2,
                        "sessionId": sid,
                        "initialFileContents": [
                            [f"file://{cwds[project]}/docs/changelog.md", "a1b2c3d"]
                        ],
                        "recentSnapshot": {
                            "stopId": None,
                            "entries": [
                                {
                                    "resource": f"file://{cwds[project]}/docs/changelog.md",
                                    "languageId": "markdown",
                                    "originalHash": "a1b2c3d",
                                    "currentHash": "d4e5f6a",
                                    "state": 1,
                                    "snapshotUri": "chat-editing-snapshot-text-model:/x",
                                    "telemetryInfo": {},
                                }
                            ],
                        },
                        "timeline": None,
                    }
                ),
            )

    # The messy mutation log: every kind, truncation, delete, bad entries, a torn tail.
    sid = _uuid(rng)
    t0 = datetime(2026, 8, 20, 21, 50, tzinfo=UTC)  # 23:50 in Paris
    cwd = cwds["ledgerline"]
    first = build.request(
        "add a CSV export of the ledger", t0 + timedelta(minutes=1), "ledgerline/export.py", cwd
    )
    dropped = build.request(
        "THIS PROMPT WAS UNDONE", t0 + timedelta(minutes=5), "ledgerline/UNDONE.py", cwd
    )
    redo = build.request(
        "add the export to the CLI instead", t0 + timedelta(minutes=7), "ledgerline/cli.py", cwd
    )
    huge = dict(
        redo,
        response=[
            *redo["response"],
            {"value": "x" * 1_000_000},
            {"value": "[JustRide: value truncated for persistence; original 2000000 chars]"},
        ],
    )
    entries: list[Any] = [
        {"kind": 1, "k": ["customTitle"], "v": "before the initial state"},  # skipped
        {"kind": 0, "v": _session(sid, t0, [])},
        b"",
        {"kind": 2, "k": ["requests"], "v": [first]},
        {"kind": 2, "k": ["requests"], "v": [dropped]},
        {"kind": 1, "k": ["customTitle"], "v": "Temporary title"},
        {"kind": 2, "k": ["requests"], "v": [huge], "i": 1},  # removes the undone request
        {"kind": 3, "k": ["customTitle"]},  # the index title is used instead
        {"kind": 1, "k": ["requests", 7, "isCanceled"], "v": True},  # no such request: skipped
        {"kind": 9, "k": ["requests"], "v": []},  # an unknown kind: skipped
        b'{"kind": 2, "k": ["requests", 1, "response"], "v": [{"value": "cut in the mid',
    ]
    _write(
        user / "workspaceStorage" / ws_ids["ledgerline"] / "chatSessions" / f"{sid}.jsonl",
        _jsonl(entries[:-1], bom=True) + entries[-1],
    )
    titles["ledgerline"][sid] = "CSV export"

    # A file VS Code compacted back to a single kind-0 line, holding all requests.
    sid = _uuid(rng)
    moment = datetime(2026, 8, 22, 6, 30, tzinfo=UTC)
    requests = [
        build.request(t, moment + timedelta(minutes=n), e, cwds["docs-site"])
        for n, (t, e) in enumerate(WORK["docs-site"])
    ]
    _write(
        user / "workspaceStorage" / ws_ids["docs-site"] / "chatSessions" / f"{sid}.jsonl",
        _jsonl([{"kind": 0, "v": _session(sid, moment, requests, customTitle="Docs for import")}]),
    )

    # A .json and a .jsonl for one session: the log (more requests) wins.
    sid = _uuid(rng)
    moment = datetime(2026, 8, 24, 10, 0, tzinfo=UTC)
    one = [build.request("what does the reconcile command do?", moment, None, cwds["ledgerline"])]
    two = [
        *one,
        build.request(
            "make reconcile print a summary",
            moment + timedelta(minutes=9),
            "ledgerline/reconcile.py",
            cwds["ledgerline"],
        ),
    ]
    folder = user / "workspaceStorage" / ws_ids["ledgerline"] / "chatSessions"
    _write(folder / f"{sid}.json", json.dumps(_session(sid, moment, one)))
    _write(folder / f"{sid}.jsonl", _jsonl(_log(_session(sid, moment, two))))

    # Invalid UTF-8 in a prompt, no creationDate (the request timestamp dates it).
    sid = _uuid(rng)
    request = build.request(
        "PLACEHOLDER", datetime(2026, 8, 25, 12, 0, tzinfo=UTC), None, cwds["blog"]
    )
    raw = json.dumps(_session(sid, None, [request])).encode()
    raw = raw.replace(b'"PLACEHOLDER"', b'"r\xc3\xa9sum\xc3\xa9 \xff the draft"', 1)
    _write(user / "workspaceStorage" / ws_ids["blog"] / "chatSessions" / f"{sid}.json", raw)

    # Empty stubs, a multi-root workspace, a cut .json, chats without a folder.
    stub = _uuid(rng)
    _write(
        user / "workspaceStorage" / ws_ids["docs-site"] / "chatSessions" / f"{stub}.json",
        json.dumps(_session(stub, base, [])),
    )
    titles["docs-site"][stub] = "New Chat"
    titles["docs-site"][_uuid(rng)] = "A session whose file is gone"
    multi = user / "workspaceStorage" / f"{rng.getrandbits(128):032x}"
    _write(
        multi / "workspace.json", json.dumps({"configuration": f"file://{src}/all.code-workspace"})
    )
    sid = _uuid(rng)
    _write(
        multi / "chatSessions" / f"{sid}.jsonl",
        _jsonl(
            _log(
                _session(
                    sid,
                    datetime(2026, 8, 26, 9, 0, tzinfo=UTC),
                    [
                        build.request(
                            "list the packages in this workspace",
                            datetime(2026, 8, 26, 9, 1, tzinfo=UTC),
                            None,
                            "/",
                        )
                    ],
                )
            )
        ),
    )
    _write(
        multi / "chatSessions" / "cut.json",
        '{"version": 3, "sessionId": "cut", "requests": [{"mess',
    )
    empty_window = user / "globalStorage" / "emptyWindowChatSessions"
    sid = _uuid(rng)
    _write(
        empty_window / f"{sid}.jsonl",
        _jsonl(
            _log(
                _session(
                    sid,
                    datetime(2026, 8, 27, 15, 0, tzinfo=UTC),
                    [
                        build.request(
                            "write a regex for ISO dates",
                            datetime(2026, 8, 27, 15, 2, tzinfo=UTC),
                            None,
                            "/tmp",
                        )
                    ],
                )
            )
        ),
    )
    sid = _uuid(rng)
    _write(
        empty_window / f"{sid}.jsonl",
        _jsonl(
            _log(
                _session(
                    sid,
                    datetime(2026, 8, 28, 7, 0, tzinfo=UTC),
                    [
                        build.request(
                            "tidy the scratch script",
                            datetime(2026, 8, 28, 7, 1, tzinfo=UTC),
                            "scratch.py",
                            str(home / "scratch"),
                        )
                    ],
                    workingDirectory=f"file://{home}/scratch",
                )
            )
        ),
    )
    for name, found in titles.items():
        _index_db(user / "workspaceStorage" / ws_ids[name] / "state.vscdb", found)

    # Another VS Code flavour on the same machine.
    insiders = home / ".config" / "Code - Insiders" / "User" / "workspaceStorage" / ("1" * 32)
    _write(insiders / "workspace.json", json.dumps({"folder": uris["docs-site"]}))
    sid = _uuid(rng)
    _write(
        insiders / "chatSessions" / f"{sid}.jsonl",
        _jsonl(
            _log(
                _session(
                    sid,
                    datetime(2026, 8, 29, 8, 0, tzinfo=UTC),
                    [
                        build.request(
                            "try the new agent mode on the docs",
                            datetime(2026, 8, 29, 8, 1, tzinfo=UTC),
                            "docs/agent.md",
                            cwds["docs-site"],
                        )
                    ],
                )
            )
        ),
    )
    return user
