"""An export that resumes from where the last one stopped writes exactly the rows a full read
writes, whatever happened to the store in between: lines appended to a session, a new session, a
last line caught half-written and completed later, a file rewritten shorter, a file removed.

Judged through the CLI, on two libraries: one follows the store export after export (and may
resume), the other reads the final store once, from nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.stores.claude_code import last_record, write_store

ROWS = ("known_entities", "recent_sessions", "known_workstreams", "notes")


def bourdon(home: Path, library: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HOME": str(home),
        "BOURDON_HOME": str(home / ".bourdon"),
        "BOURDON_LIBRARY": str(library),
    }
    done = subprocess.run(
        [sys.executable, "-m", "bourdon", "--library", str(library), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return done


def rows(library: Path) -> dict[str, Any]:
    data = yaml.safe_load((library / "agents" / "claude-code.l5.yaml").read_text(encoding="utf-8"))
    return {kind: data.get(kind) or [] for kind in ROWS}


def transcripts(home: Path) -> list[Path]:
    """The ordinary sessions' files (each has a record with a session and a cwd), by size."""
    found = (home / ".claude" / "projects").glob("*/*.jsonl")
    return sorted((p for p in found if last_record(p)), key=lambda p: (p.stat().st_size, p.name))


def follow(path: Path) -> dict[str, Any]:
    record = last_record(path)
    assert record is not None, path
    return record


def prompt_line(after: dict[str, Any], text: str, minutes: int) -> bytes:
    """A user prompt as Claude Code writes it (native-stores.md 1.3), following ``after``."""
    stamp = datetime.fromisoformat(after["timestamp"].replace("Z", "+00:00")) + timedelta(
        minutes=minutes
    )
    record = {
        "parentUuid": after.get("uuid"),
        "isSidechain": False,
        "userType": "external",
        "cwd": after["cwd"],
        "sessionId": after["sessionId"],
        "version": after.get("version", "2.1.0"),
        "gitBranch": after.get("gitBranch", "main"),
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": f"00000000-0000-4000-8000-{minutes:012d}",
        "timestamp": stamp.astimezone(UTC).isoformat().replace("+00:00", "Z"),
    }
    return json.dumps(record).encode("utf-8") + b"\n"


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def step_append(home: Path) -> None:
    path = transcripts(home)[-1]
    append(path, prompt_line(follow(path), "rename the ledger export flag to --out", 7))


def step_new_session(home: Path) -> None:
    source = transcripts(home)[0]
    first = follow(source)
    target = source.parent / "5f0c2d7e-1111-4222-8333-444455556666.jsonl"
    first = {**first, "sessionId": "5f0c2d7e-1111-4222-8333-444455556666", "uuid": None}
    target.write_bytes(prompt_line(first, "draft the quarterly close checklist for Ledgerline", 3))


def step_half_line(home: Path) -> None:
    path = transcripts(home)[-1]
    line = prompt_line(follow(path), "add a retry to the bank feed importer", 11)
    append(path, line[: len(line) // 2])


def step_complete_half_line(home: Path) -> None:
    path = transcripts(home)[-1]
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    whole = prompt_line(follow(path), "add a retry to the bank feed importer", 11)
    assert whole.startswith(data[cut:]), "the half line is still the last bytes of the file"
    path.write_bytes(data[:cut] + whole)


def step_rewrite_shorter(home: Path) -> None:
    path = transcripts(home)[len(transcripts(home)) // 2]
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[: max(1, len(lines) // 2)]))


def step_remove(home: Path) -> None:
    transcripts(home)[1].unlink()


STEPS: list[Callable[[Path], None]] = [
    step_append,
    step_new_session,
    step_half_line,
    step_complete_half_line,
    step_append,
    step_rewrite_shorter,
    step_remove,
]


@pytest.mark.parametrize("steps", [len(STEPS)])
def test_export_after_each_change_equals_a_full_read_of_the_final_store(
    tmp_path: Path, steps: int
) -> None:
    home = tmp_path / "home"
    write_store(home, sessions=30)
    followed = tmp_path / "followed"
    bourdon(home, followed, "init", str(followed))
    bourdon(home, followed, "export", "claude-code")
    for n, step in enumerate(STEPS[:steps]):
        step(home)
        bourdon(home, followed, "export", "claude-code")
        fresh = tmp_path / f"fresh-{n}"
        bourdon(home, fresh, "init", str(fresh))
        bourdon(home, fresh, "export", "claude-code")
        assert rows(followed) == rows(fresh), f"after {step.__name__}"
    # The changes reached the rows: the test is not comparing two stale copies.
    text = json.dumps(rows(followed))
    assert "draft the quarterly close checklist" in text
    assert "rename the ledger export flag" in text
