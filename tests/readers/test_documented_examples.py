"""The newer readers, each given the example its agent's format documents, find what a person
reading that example would find. The stores here are copied from the format notes
(native-stores.md sections 5, 7 and 8), not from any reader's output; readers are looked up by
agent id, the way the export finds them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bourdon.formats import yamlio
from bourdon.readers import ReadResult, load_readers
from bourdon.testing.readercheck import reader_context, snapshot

AIDER_CHAT = """
# aider chat started at 2026-03-04 09:14:58

> Aider v0.86.1
> Main model: anthropic/claude-sonnet-4-6 with diff edit format
> Git repo: .git with 42 files
> Repo-map: using 4096 tokens, auto refresh

#### /add ledgerline/cli.py

> Added ledgerline/cli.py to the chat

#### add a --dry-run flag to the import command  
#### it should print rows instead of writing

I'll add the flag to the `import` command.

ledgerline/cli.py
<<<<<<< SEARCH
@click.argument("path")
=======
@click.argument("path")
@click.option("--dry-run", is_flag=True)
>>>>>>> REPLACE

> Tokens: 8.1k sent, 402 received. Cost: $0.03 message, $0.03 session.  
> Applied edit to ledgerline/cli.py  
> Commit 3f9c2ab feat: add --dry-run to import  

# aider chat started at 2026-03-06 18:02:11

#### write tests for the csv importer

> Applied edit to tests/test_csv_bank.py  
"""

AIDER_INPUT = """
# 2026-03-04 09:15:02.118734
+/add ledgerline/cli.py

# 2026-03-04 09:15:40.552019
+add a --dry-run flag to the import command
+it should print rows instead of writing
"""


def read(agent: str, home: Path) -> ReadResult:
    readers, broken = load_readers(agent)
    assert agent in readers, f"no reader registered as {agent!r}: {broken}"
    before = snapshot(home)
    result = readers[agent].read(reader_context(home))
    assert snapshot(home) == before, "reading changed the store"
    return result


def sessions(result: ReadResult) -> list[dict[str, Any]]:
    return list(result.manifest.get("recent_sessions") or [])


def text_of(result: ReadResult) -> str:
    return yamlio.dump(result.manifest).decode("utf-8")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_aider_sessions_come_from_the_chat_history_in_the_project_folder(home: Path) -> None:
    project = home / "src" / "ledgerline"
    (project / ".git").mkdir(parents=True)
    write(project / ".aider.chat.history.md", AIDER_CHAT)
    write(project / ".aider.input.history", AIDER_INPUT)
    found = sorted(sessions(read("aider", home)), key=lambda s: s["date"])
    assert [s["date"] for s in found] == ["2026-03-04", "2026-03-06"]
    first, second = found
    assert first["cwd"] == str(project) and second["cwd"] == str(project)
    actions = " ".join(first["key_actions"])
    assert "add a --dry-run flag to the import command" in actions
    assert "it should print rows instead of writing" in actions
    assert "ledgerline/cli.py" in first["files_touched"]
    assert "Tokens:" not in actions and "Aider v0.86.1" not in actions
    assert "write tests for the csv importer" in " ".join(second["key_actions"])
    assert "tests/test_csv_bank.py" in second["files_touched"]


def test_continue_sessions_come_from_the_sessions_folder(home: Path) -> None:
    project = home / "src" / "ledgerline"
    project.mkdir(parents=True)
    folder = home / ".continue" / "sessions"
    sid = "0b6e3c52-5b7e-4b58-9d55-0f0f2c6e1a01"
    write(
        folder / "sessions.json",
        json.dumps(
            [
                {
                    "sessionId": sid,
                    "title": "CSV importer for bank statements",
                    "dateCreated": "1772633500421",
                    "workspaceDirectory": project.as_uri(),
                }
            ]
        ),
    )
    write(
        folder / f"{sid}.json",
        json.dumps(
            {
                "sessionId": sid,
                "title": "CSV importer for bank statements",
                "workspaceDirectory": project.as_uri(),
                "history": [
                    {
                        "message": {
                            "role": "user",
                            "content": "Add a CSV importer for bank statements",
                        },
                        "contextItems": [],
                    },
                    {
                        "message": {"role": "assistant", "content": "Here is an importer."},
                        "contextItems": [],
                    },
                ],
            }
        ),
    )
    write(folder / "half-written.json", '{"sessionId": "x", "history": [')
    result = read("continue-dev", home)
    (found,) = sessions(result)
    assert found["date"] == "2026-03-04"  # 14:11 UTC is 15:11 in Paris, the same day
    assert found["cwd"] == str(project)  # the file:// URI is made a path
    assert "Add a CSV importer for bank statements" in " ".join(found["key_actions"])
    assert "Here is an importer." not in text_of(result)


def test_cascade_reads_rules_and_memories_and_says_it_cannot_read_transcripts(home: Path) -> None:
    windsurf = home / ".codeium" / "windsurf"
    write(
        windsurf / "memories" / "global_rules.md", "Always run the ledger tests before a commit.\n"
    )
    (windsurf / "cascade").mkdir(parents=True)
    (windsurf / "cascade" / "3f2a9c1e.pb").write_bytes(b"\x0a\x12\x08\x96\x01opaque")
    result = readers_health_and_read("cascade", home)
    assert "Always run the ledger tests before a commit." in text_of(result)
    assert "opaque" not in text_of(result)


def readers_health_and_read(agent: str, home: Path) -> ReadResult:
    readers, _ = load_readers(agent)
    message = readers[agent].health(reader_context(home)).message
    assert re.search(r"\b1 (cascade )?conversation", message, re.I), message
    return read(agent, home)


CLINE_UI = [
    {
        "ts": 1772633500425,
        "type": "say",
        "say": "task",
        "text": "Add a CSV importer for bank statements",
    },
    {
        "ts": 1772633518112,
        "type": "say",
        "say": "tool",
        "text": json.dumps({"tool": "newFileCreated", "path": "ledgerline/importers/csv_bank.py"}),
        "partial": False,
    },
    {"ts": 1772633531004, "type": "say", "say": "completion_result", "text": "Created it."},
]


def cline_task(home: Path, extension: str, project: Path) -> None:
    task = (
        home / ".config" / "Code" / "User" / "globalStorage" / extension / "tasks" / "1772633500421"
    )
    write(task / "ui_messages.json", json.dumps(CLINE_UI))
    request = (
        "<task>\nAdd a CSV importer for bank statements\n</task>\n\n<environment_details>\n"
        f"# Current Working Directory ({project}) Files\nledgerline/\n</environment_details>"
    )
    write(
        task / "api_conversation_history.json",
        json.dumps([{"role": "user", "content": [{"type": "text", "text": request}]}]),
    )


@pytest.mark.parametrize(
    ("agent", "extension"),
    [("roo-code", "rooveterinaryinc.roo-cline"), ("kilo-code", "kilocode.kilo-code")],
)
def test_a_cline_family_fork_reads_its_own_extension_folder_only(
    home: Path, agent: str, extension: str
) -> None:
    project = home / "src" / "ledgerline"
    project.mkdir(parents=True)
    cline_task(home, extension, project)
    (found,) = sessions(read(agent, home))
    assert found["date"] == "2026-03-04"
    assert found["cwd"] == str(project)
    assert found["key_actions"][0] == "Add a CSV importer for bank statements"
    assert "ledgerline/importers/csv_bank.py" in found["files_touched"]
    assert sessions(read("cline", home)) == [], "a fork's task is its own agent's, not Cline's"
