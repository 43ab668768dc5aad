"""A realistic Cursor store: global and workspace ``state.vscdb`` databases, rules, messy cases.

``write_store(home)`` writes under ``home/.config/Cursor/User`` and returns that folder. The
project folders it refers to are created under ``home/src`` and ``home/personal`` (with
``.git`` markers, one a git worktree, and ``.cursor/rules``). Deterministic for a given
``seed`` and ``sessions``.

Messy cases (native-stores.md 10.3): the global database is in WAL mode with committed frames
not yet checkpointed (one composer lives only in the ``-wal``); a workspace database has a
``-wal`` but no ``-shm``; NULL tombstones, TEXT instead of BLOB values, a non-JSON value and an
integer value; invalid UTF-8 and ANSI escapes in a prompt; a 1 MB tool result; timestamps as
epoch ms numbers, epoch ms strings, ISO ``Z`` and ``+08:00`` offsets, and none at all; bubbles
missing from or absent in the header manifest; a rejected edit; a composer claimed by two
workspaces and one in a multi-root workspace; ``file:///c%3A/...`` and ``vscode-remote://``
folders; a cut ``workspace.json`` and one with a BOM and CRLF; empty drafts; the legacy
``aichat`` chat data; ``cursorAuth/*`` credentials that no reader may export.
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

ACCESS_TOKEN = "CANARY-cursorAuth-accessToken-7f3a91c2"
REFRESH_TOKEN = "CANARY-cursorAuth-refreshToken-0b44de17"

DDL = (
    "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)",
    "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)",
)

PROMPTS = {
    "ledgerline": [
        "add a CSV importer for bank statements",
        "use Decimal for money everywhere, not float",
        "match payees with rapidfuzz, cutoff 85",
        "write tests for the importer with a sample statement",
        "Priya asked for a --dry-run flag on import",
    ],
    "docs-site": [
        "rewrite the quickstart around the demo command",
        "fix the broken links to the schema page",
        "add a dark mode toggle to the header",
    ],
    "infra-terraform": [
        "add an S3 bucket for statement uploads with versioning",
        "switch the state backend to the new account",
    ],
    "harbor": [
        "switch the monorepo to pnpm workspaces",
        "move the shared eslint config into packages/config",
    ],
    "journal": ["summarise my notes from this week in three bullets"],
}
TITLES = {
    "add a CSV importer for bank statements": "CSV bank importer",
    "use Decimal for money everywhere, not float": "Decimal for money",
    "match payees with rapidfuzz, cutoff 85": "Payee matching",
    "write tests for the importer with a sample statement": "Importer tests",
    "Priya asked for a --dry-run flag on import": "Import --dry-run flag",
    "rewrite the quickstart around the demo command": "Quickstart rewrite",
    "fix the broken links to the schema page": "Schema links",
    "add a dark mode toggle to the header": "Dark mode toggle",
    "add an S3 bucket for statement uploads with versioning": "Statement uploads bucket",
    "switch the state backend to the new account": "State backend move",
    "switch the monorepo to pnpm workspaces": "Switch to pnpm",
    "move the shared eslint config into packages/config": "Shared eslint config",
    "summarise my notes from this week in three bullets": "Weekly summary",
}
FILES = {
    "ledgerline": [
        "ledgerline/importers/csv_bank.py",
        "ledgerline/money.py",
        "ledgerline/cli.py",
        "tests/test_importer.py",
    ],
    "docs-site": ["docs/quickstart.md", "docs/index.md", "mkdocs.yml"],
    "infra-terraform": ["modules/storage/main.tf", "backend.tf"],
    "harbor": ["pnpm-workspace.yaml", "packages/config/eslint.js"],
    "journal": ["2026/week-10.md"],
}


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _set_mtime(path: Path, moment: datetime) -> None:
    stamp = moment.timestamp()
    os.utime(path, (stamp, stamp))


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def _repo(folder: Path) -> None:
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    _write(folder / ".git" / "HEAD", "ref: refs/heads/main\n")


def write_db(
    dest: Path,
    rows: dict[str, list[tuple[str, Any]]],
    *,
    late: dict[str, list[tuple[str, Any]]] | None = None,
    mode: str = "closed",
) -> Path:
    """A Cursor-style database at ``dest``.

    ``mode``: ``closed`` (WAL, cleanly closed: no side files), ``live`` (``late`` rows are
    committed in the ``-wal`` only, with its ``-shm``), ``wal-only`` (the same without the
    ``-shm``) or ``rollback`` (a rollback-journal database, as VS Code writes).
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.vscdb"
        conn = sqlite3.connect(path)
        try:
            if mode != "rollback":
                conn.execute("PRAGMA journal_mode=wal")
                conn.execute("PRAGMA wal_autocheckpoint=0")
            for statement in DDL:
                conn.execute(statement)
            _insert(conn, rows)
            conn.commit()
            if mode in ("live", "wal-only"):
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                _insert(conn, late or {})
                conn.commit()
                suffixes = ("", "-wal", "-shm") if mode == "live" else ("", "-wal")
                for suffix in suffixes:
                    shutil.copyfile(f"{path}{suffix}", f"{dest}{suffix}")
        finally:
            conn.close()
        if mode in ("closed", "rollback"):
            shutil.copyfile(path, dest)
    return dest


def _insert(conn: sqlite3.Connection, rows: dict[str, list[tuple[str, Any]]]) -> None:
    for table, items in rows.items():
        for key, value in items:
            conn.execute(f"INSERT INTO {table} (key, value) VALUES (?, ?)", (key, _blob(value)))


def _blob(value: Any) -> Any:
    """JSON as a UTF-8 BLOB (Cursor's way); raw bytes, str, int and None pass through."""
    if value is None or isinstance(value, (bytes, str, int)):
        return value
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


class _Store:
    def __init__(self, home: Path, seed: int) -> None:
        self.home = home
        self.rng = random.Random(f"cursor-{seed}")
        self.kv: list[tuple[str, Any]] = []
        self.late: list[tuple[str, Any]] = []
        self.headers: list[dict[str, Any]] = []
        self.pointers: dict[str, list[str]] = {}

    def composer(
        self,
        project: str,
        workspaces: list[str],
        start: datetime | None,
        *,
        prompts: list[str],
        edits: list[str],
        name: str | None = None,
        created: Any = "ms",
        bubble_times: str = "iso",
        late: bool = False,
        extra: dict[str, Any] | None = None,
        bubbles_extra: list[tuple[str, Any]] | None = None,
    ) -> str:
        cid = _uuid(self.rng)
        heads: list[dict[str, Any]] = []
        target = self.late if late else self.kv
        moment = start
        for i, prompt in enumerate(prompts):
            user_id, ai_id = _uuid(self.rng), _uuid(self.rng)
            user: dict[str, Any] = {"_v": 3, "type": 1, "bubbleId": user_id, "text": prompt}
            if moment is not None and bubble_times == "iso":
                user["createdAt"] = moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
            elif moment is not None and bubble_times == "offset":
                local = moment.astimezone(UTC) + timedelta(hours=8)
                user["createdAt"] = local.strftime("%Y-%m-%dT%H:%M:%S") + "+08:00"
            ai: dict[str, Any] = {
                "_v": 3,
                "type": 2,
                "bubbleId": ai_id,
                "text": "",
                "tokenCount": {},
            }
            if moment is not None:
                ai["timingInfo"] = {"clientStartTime": _ms(moment + timedelta(seconds=9))}
            if i < len(edits):
                tool_id, tool_name, key = self.rng.choice(
                    [
                        (7, "edit_file", "target_file"),
                        (38, "Write", "file_path"),
                        (38, "StrReplace", "relativeWorkspacePath"),
                    ]
                )
                ai["toolFormerData"] = {
                    "tool": tool_id,
                    "name": tool_name,
                    "toolCallId": f"toolu_{self.rng.getrandbits(48):012x}",
                    "status": "completed",
                    "params": json.dumps({key: edits[i], "instructions": "apply the change"}),
                    "result": json.dumps({"diff": {"chunks": []}}),
                    "userDecision": "accepted",
                }
            else:
                ai["text"] = "Done. I ran the tests and they pass."
            target.append((f"bubbleId:{cid}:{user_id}", user))
            target.append((f"bubbleId:{cid}:{ai_id}", ai))
            heads += [{"bubbleId": user_id, "type": 1}, {"bubbleId": ai_id, "type": 2}]
            if moment is not None:
                moment += timedelta(minutes=self.rng.randint(2, 25))
        for key, value in bubbles_extra or []:
            target.append((f"bubbleId:{cid}:{key}", value))
        data: dict[str, Any] = {
            "_v": self.rng.choice([3, 10, 16]),
            "composerId": cid,
            "status": "completed",
            "unifiedMode": "agent",
            "isAgentic": True,
            "fullConversationHeadersOnly": heads,
            "conversation": [],
            "context": {"fileSelections": [], "folderSelections": []},
            "usageData": {},
        }
        if name:
            data["name"] = name
        if start is not None and created == "ms":
            data["createdAt"] = _ms(start)
            data["lastUpdatedAt"] = _ms(moment or start)
        elif start is not None and created == "ms-string":
            data["createdAt"] = str(_ms(start))
        data.update(extra or {})
        target.append((f"composerData:{cid}", data))
        for ws in workspaces:
            self.pointers.setdefault(ws, []).append(cid)
        return cid


def write_store(home: Path, *, seed: int = 0, sessions: int = 10) -> Path:
    """Write a Cursor store under ``home`` and return its ``User`` folder."""
    store = _Store(home, seed)
    rng = store.rng
    user = home / ".config" / "Cursor" / "User"
    src = home / "src"

    # Project folders on this machine: repositories, a worktree, rules files.
    for name in ("ledgerline", "docs-site"):
        _repo(src / name)
    _repo(home / "personal" / "journal")
    worktree = src / "ledgerline-csv"
    (src / "ledgerline" / ".git" / "worktrees" / "ledgerline-csv").mkdir(parents=True)
    _write(worktree / ".git", f"gitdir: {src}/ledgerline/.git/worktrees/ledgerline-csv\n")
    rules_time = datetime(2026, 3, 2, 8, 30, tzinfo=UTC)
    for path, text in (
        (
            src / "ledgerline" / ".cursor" / "rules" / "money.mdc",
            "---\ndescription: Money handling\nglobs: ledgerline/**/*.py\nalwaysApply: false\n---\n"
            "Use decimal.Decimal for every amount; never float.\nRound half-even at 2 places.\n",
        ),
        (src / "ledgerline" / ".cursorrules", "Run pytest -q before saying a task is done.\r\n"),
        (
            home / "personal" / "journal" / ".cursor" / "rules" / "tone.mdc",
            "---\ndescription: Journal tone\nalwaysApply: true\n---\nWrite in the first person.\n",
        ),
    ):
        _set_mtime(_write(path, text), rules_time)
    _write(
        home / ".cursor" / "hooks.json",
        json.dumps({"version": 1, "hooks": {"stop": [{"command": "bourdon export cursor"}]}}),
    )

    folders = {
        "ledgerline": f"file://{src}/ledgerline",
        "ledgerline-csv": f"file://{worktree}",
        "docs-site": f"file://{src}/docs-site",
        "infra-terraform": "file:///c%3A/Users/dana/src/infra-terraform",
        "harbor": "vscode-remote://ssh-remote%2Bbuildbox/home/dana/src/harbor",
        "journal": f"file://{home}/personal/journal",
    }
    ws_ids = {name: hashlib.md5(uri.encode()).hexdigest() for name, uri in folders.items()}
    ws_multi, ws_broken = "a1b2c3d4e5f60718293a4b5c6d7e8f90", "ffffffffffffffffffffffffffffffff"

    # Regular composers, spread over the projects and over March-April 2026.
    rotation = ["ledgerline", "docs-site", "ledgerline-csv", "infra-terraform", "harbor", "journal"]
    base = datetime(2026, 3, 3, 8, 0, tzinfo=UTC)
    for i in range(sessions):
        where = rotation[i % len(rotation)]
        project = "ledgerline" if where == "ledgerline-csv" else where
        start = base + timedelta(days=i * 3, hours=rng.randint(0, 12), minutes=rng.randint(0, 59))
        picked = rng.sample(PROMPTS[project], k=min(len(PROMPTS[project]), rng.randint(1, 3)))
        edits = rng.sample(FILES[project], k=min(len(FILES[project]), len(picked)))
        if where in ("infra-terraform",):
            edits = [
                f"C:\\Users\\dana\\src\\infra-terraform\\{e.replace('/', chr(92))}" for e in edits
            ]
        elif where != "harbor" and i % 2:
            edits = [f"{folders[where].removeprefix('file://')}/{e}" for e in edits]
        store.composer(
            project,
            [ws_ids[where]],
            start,
            prompts=picked,
            edits=edits,
            name=TITLES.get(picked[0]) if i % 3 else None,
            bubble_times="offset" if i % 4 == 1 else "iso",
        )

    # Messy and edge-case composers.
    late_night = datetime(2026, 3, 20, 23, 40, tzinfo=UTC)  # already 21 March in Paris
    store.composer(
        "ledgerline",
        [ws_ids["ledgerline"]],
        late_night,
        prompts=["\x1b[31mfix\x1b[0m the failing test_money\x07 test", "now run the whole suite"],
        edits=["ledgerline/money.py"],
        name="Fix money tests",
        extra={"latestConversationSummary": "Fixed rounding in money.py"},
        bubbles_extra=[
            # not listed in the header manifest: kept, in rowid order
            (
                "orphan-1",
                {
                    "_v": 3,
                    "type": 2,
                    "text": "",
                    "toolFormerData": {
                        "tool": 7,
                        "name": "edit_file",
                        "status": "completed",
                        "params": json.dumps({"target_file": "ledgerline/money.py"}),
                        "result": "x" * 1_000_000,
                        "userDecision": "accepted",
                    },
                },
            ),
            # a rejected edit: the file was not touched
            (
                "orphan-2",
                {
                    "_v": 3,
                    "type": 2,
                    "text": "",
                    "toolFormerData": {
                        "tool": 7,
                        "name": "edit_file",
                        "status": "cancelled",
                        "params": json.dumps({"target_file": "ledgerline/REJECTED.py"}),
                        "userDecision": "rejected",
                    },
                },
            ),
            ("tombstone", None),
        ],
    )
    store.composer(
        "ledgerline",
        [ws_ids["ledgerline"], ws_ids["docs-site"]],
        datetime(2026, 4, 2, 10, 0, tzinfo=UTC),
        prompts=["which workspace owns this composer?"],
        edits=[],
        name="Ambiguous owner",
        extra={
            "latestConversationSummary": {"summary": "none", "truncationLastBubbleIdInclusive": "x"}
        },
    )
    store.composer(
        "harbor",
        [ws_multi],
        datetime(2026, 4, 3, 9, 0, tzinfo=UTC),
        prompts=["update every package's tsconfig in the multi-root workspace"],
        edits=["packages/config/tsconfig.json"],
        name="Multi-root tsconfig",
    )
    store.composer(
        "docs-site",
        [ws_ids["docs-site"]],
        datetime(2026, 4, 5, 12, 0, tzinfo=UTC),
        prompts=["explain the build warnings"],
        edits=[],
        created="ms-string",
    )
    store.composer(
        "docs-site",
        [ws_ids["docs-site"]],
        None,
        prompts=["a composer with no timestamp at all"],
        edits=["docs/index.md"],
        created=None,
    )
    store.composer(
        "ledgerline",
        [ws_ids["ledgerline"]],
        datetime(2026, 4, 28, 16, 45, tzinfo=UTC),
        prompts=["add a monthly report command", "Marco wants it as CSV too"],
        edits=["ledgerline/report.py", "ledgerline/cli.py"],
        name="Monthly report",
        late=True,
    )
    # Only in the global catalog (workspaceIdentifier), not in any workspace pointer list.
    header_only = store.composer(
        "docs-site",
        [],
        datetime(2026, 4, 7, 7, 30, tzinfo=UTC),
        prompts=["add a search box to the docs"],
        edits=["docs/search.js"],
        name="Docs search",
    )
    store.headers.append(
        {
            "composerId": header_only,
            "createdAt": _ms(datetime(2026, 4, 7, 7, 30, tzinfo=UTC)),
            "workspaceIdentifier": {"id": ws_ids["docs-site"]},
            "isArchived": False,
        }
    )
    # A user bubble whose text is invalid UTF-8, and a user bubble carrying a tool call.
    bad_id, tool_user = _uuid(rng), _uuid(rng)
    garbled = store.composer(
        "ledgerline",
        [ws_ids["ledgerline"]],
        datetime(2026, 4, 9, 9, 15, tzinfo=UTC),
        prompts=["rename the payee column"],
        edits=[],
        name="Payee column",
    )
    store.kv.append(
        (
            f"bubbleId:{garbled}:{bad_id}",
            b'{"_v":3,"type":1,"text":"caf\xc3\xa9 \xff\xfe payee \xe2\x82"}',
        )
    )
    store.kv.append(
        (
            f"bubbleId:{garbled}:{tool_user}",
            {
                "_v": 3,
                "type": 1,
                "text": "",
                "toolFormerData": {
                    "tool": 38,
                    "name": "Write",
                    "params": json.dumps({"file_path": "ledgerline/payees.py"}),
                },
            },
        )
    )
    composer_row = next(i for i, (k, _) in enumerate(store.kv) if k == f"composerData:{garbled}")
    row = dict(store.kv[composer_row][1])
    row["fullConversationHeadersOnly"] = [
        *row["fullConversationHeadersOnly"],
        {"bubbleId": bad_id, "type": 1},
        {"bubbleId": tool_user, "type": 1},
        {"bubbleId": "missing-bubble", "type": 2},
    ]
    store.kv[composer_row] = (f"composerData:{garbled}", json.dumps(row))  # a TEXT value

    # A legacy composer with the conversation inline (no _v, no bubble rows).
    legacy = _uuid(rng)
    store.kv.append(
        (
            f"composerData:{legacy}",
            {
                "composerId": legacy,
                "name": "Legacy inline chat",
                "createdAt": _ms(datetime(2026, 3, 1, 7, 5, tzinfo=UTC)),
                "conversation": [
                    {
                        "type": 1,
                        "bubbleId": "l1",
                        "text": "why does the importer skip the header row?",
                    },
                    {"type": 2, "bubbleId": "l2", "text": "Because of skip_header=True."},
                ],
                "codeBlockData": {
                    f"file://{src}/ledgerline/ledgerline/importers/csv_bank.py": [{"diffId": "d1"}]
                },
            },
        )
    )
    store.pointers.setdefault(ws_ids["ledgerline"], []).append(legacy)
    # Empty drafts, tombstones, garbage and noise.
    for _ in range(3):
        draft = _uuid(rng)
        store.kv.append(
            (
                f"composerData:{draft}",
                {
                    "_v": 10,
                    "composerId": draft,
                    "fullConversationHeadersOnly": [],
                    "conversation": [],
                    "createdAt": _ms(base),
                },
            )
        )
        store.headers.append({"composerId": draft, "createdAt": _ms(base), "isDraft": True})
    store.kv += [
        (f"composerData:{_uuid(rng)}", None),
        (f"composerData:{_uuid(rng)}", b"{not json"),
        (f"composerData:{_uuid(rng)}", 42),
        (f"agentKv:blob:{hashlib.sha256(b'a').hexdigest()}", {"role": "user", "content": "raw"}),
        (f"checkpointId:{_uuid(rng)}:{_uuid(rng)}", {"files": []}),
        (f"codeBlockDiff:{_uuid(rng)}:{_uuid(rng)}", {"chunks": []}),
        (f"messageRequestContext:{_uuid(rng)}:{_uuid(rng)}", {"rules": []}),
    ]

    write_db(
        user / "globalStorage" / "state.vscdb",
        {
            "ItemTable": [
                ("cursorAuth/accessToken", ACCESS_TOKEN),
                ("cursorAuth/refreshToken", REFRESH_TOKEN),
                ("cursorAuth/cachedEmail", "dana@example.com"),
                ("composer.composerHeaders", {"allComposers": store.headers}),
                ("workbench.panel.composerChatViewPane.hidden", "false"),
            ],
            "cursorDiskKV": store.kv,
        },
        late={"cursorDiskKV": store.late},
        mode="live",
    )

    # Workspaces: pointer lists, folders, legacy chat data.
    storage = user / "workspaceStorage"
    for name, uri in folders.items():
        ws = storage / ws_ids[name]
        text = json.dumps({"folder": uri})
        if name == "ledgerline":
            text = "\ufeff" + json.dumps({"folder": uri}, indent=2).replace("\n", "\r\n")
        _write(ws / "workspace.json", text)
        items: list[tuple[str, Any]] = [
            (
                "composer.composerData",
                {
                    "allComposers": [
                        {"composerId": c, "type": "head", "unifiedMode": "agent"}
                        for c in store.pointers.get(ws_ids[name], [])
                    ],
                    "selectedComposerIds": [],
                },
            ),
        ]
        if name == "docs-site":
            items += [
                (
                    "workbench.panel.aichat.view.aichat.chatdata",
                    {
                        "tabs": [
                            {
                                "tabId": "tab-2024-docs",
                                "chatTitle": "Docs navigation",
                                "lastSendTime": _ms(datetime(2024, 11, 12, 14, 0, tzinfo=UTC)),
                                "bubbles": [
                                    {
                                        "type": "user",
                                        "text": "how do I add a page to the sidebar nav?",
                                    },
                                    {"type": "ai", "text": "Edit mkdocs.yml."},
                                ],
                            }
                        ]
                    },
                ),
                ("aiService.prompts", [{"text": "old prompt", "commandType": 4}]),
            ]
        if name == "docs-site":  # committed in a -wal that has no -shm: read from a copy
            write_db(
                ws / "state.vscdb",
                {"ItemTable": items[:1]},
                late={"ItemTable": items[1:]},
                mode="wal-only",
            )
        else:
            write_db(
                ws / "state.vscdb",
                {"ItemTable": items},
                mode="rollback" if name == "harbor" else "closed",
            )
    _write(
        storage / ws_multi / "workspace.json",
        json.dumps({"configuration": f"file://{src}/all.code-workspace"}),
    )
    write_db(
        storage / ws_multi / "state.vscdb",
        {
            "ItemTable": [
                (
                    "composer.composerData",
                    {"allComposers": [{"composerId": c} for c in store.pointers.get(ws_multi, [])]},
                )
            ]
        },
    )
    _write(storage / ws_broken / "workspace.json", '{"folder": "file:///home/da')
    _write(
        storage / "no-db-yet" / "workspace.json", json.dumps({"folder": f"file://{src}/scratch"})
    )
    return user
