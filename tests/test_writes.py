"""The write and history tools through the real MCP client: commit, versions, explain, rollback.

Most tests drive ``create_server`` in-process with ``Client`` (the caller is the local operator
on stdio, exactly as under ``bourdon serve``); the acceptance runs (8 concurrent clients, the
same-digest races, describe_caller) drive real ``bourdon serve`` subprocesses over stdio.
Nothing is mocked: real git, temporary folders. Figures are printed; run with ``pytest -s``.
"""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from bourdon.digest import digest
from bourdon.serve.server import create_server
from bourdon.store.git.process import git_env
from bourdon.store.library import Library
from bourdon.testing.serving import child_env

pytestmark = pytest.mark.anyio

CLIENTS = 8
COMMITS_PER_CLIENT = 125
RACE_ROUNDS = 10
TRAILER_KEYS = ("Op", "Agent", "Caller", "Digest")
OPERATOR_SOURCE = {"kind": "commit", "name": "operator", "machine": socket.gethostname()}
RUN_TIMEOUT = 600  # seconds for a whole concurrent run: a hang fails instead of blocking


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    Library.init(tmp_path / "lib").close()
    return tmp_path / "lib"


@pytest.fixture
async def client(root: Path) -> AsyncIterator[Client]:
    async with Client(create_server(root, watch=False)) as c:
        yield c


# -- helpers ---------------------------------------------------------------------------------


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    answer: dict[str, Any] = result.structured_content
    return answer


async def fail(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error, f"{tool} should have failed: {result.structured_content}"
    assert result.structured_content is not None
    error: dict[str, Any] = result.structured_content["error"]
    return error


def git(root: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, env=git_env(), capture_output=True, timeout=120, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode("utf-8", "replace")


def commit_count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def trailers(message: str) -> dict[str, str]:
    found = {}
    for line in message.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key.startswith("Bourdon-"):
            found[key[len("Bourdon-") :]] = value.strip()
    return found


def trailers_of(root: Path, commit: str) -> dict[str, str]:
    return trailers(git(root, "log", "-1", "--format=%B", commit))


def parse_log(root: Path) -> list[tuple[str, dict[str, str]]]:
    """``(commit, trailers)`` of every commit on HEAD, newest first."""
    out = git(root, "log", "--format=%H%x1f%B%x1e", "HEAD")
    commits = []
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if record:
            commit, _, body = record.partition("\x1f")
            commits.append((commit.strip(), trailers(body)))
    return commits


def assert_fsck_clean(root: Path) -> None:
    done = subprocess.run(
        ["git", "fsck", "--full", "--strict", "--no-progress"],
        cwd=root,
        env=git_env(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    said = (done.stdout + done.stderr).decode(errors="replace")
    assert done.returncode == 0, f"git fsck --full --strict failed: {said}"


def rows(root: Path, agent: str, section: str = "known_entities") -> list[dict[str, Any]]:
    with Library.open(root) as library:
        return list(library.read(agent).data.get(section) or [])


def names(root: Path, agent: str) -> list[str]:
    return [r["name"] for r in rows(root, agent)]


def live_digest(root: Path, agent: str) -> str | None:
    with Library.open(root) as library:
        return library.current_digest(agent)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def stdio(root: Path, home: Path) -> StdioServerParameters:
    """``bourdon serve`` over stdio on ``root``, with its own HOME and BOURDON_HOME."""
    home.mkdir(parents=True, exist_ok=True)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "bourdon", "--library", str(root), "serve"],
        env=child_env(home),
    )


@contextlib.asynccontextmanager
async def stdio_clients(root: Path, tmp: Path, count: int) -> AsyncIterator[list[Client]]:
    """``count`` clients, each talking to its own ``bourdon serve`` subprocess over stdio."""
    async with contextlib.AsyncExitStack() as stack:
        clients = []
        for n in range(count):
            params = stdio(root, tmp / f"home-{n}")
            clients.append(await stack.enter_async_context(Client(params)))
        yield clients


# -- commit_to_federation --------------------------------------------------------------------


async def test_a_new_agent_needs_agent_type(client: Client, root: Path) -> None:
    before = commit_count(root)
    error = await fail(client, "commit_to_federation", agent_id="notes-bot",
                       entities=[{"name": "x"}])  # fmt: skip
    assert error["status"] == 400 and error["code"] == "bad_input"
    assert "agent.type" in error["message"] and "note-capture" in error["message"]
    error = await fail(client, "commit_to_federation", agent_id="notes-bot", agent_type="robot",
                       entities=[{"name": "x"}])  # fmt: skip
    assert error["status"] == 400
    assert commit_count(root) == before, "a refused commit wrote something"

    done = await call(client, "commit_to_federation", agent_id="notes-bot",
                      agent_type="note-capture", entities=[{"name": "x"}])  # fmt: skip
    assert done["created"] is True and done["staged"] is False
    assert (done["added"], done["updated"], done["total"]) == (1, 0, 1)
    assert commit_count(root) == before + 1

    # Merging into an existing agent needs no type, and a different one is ignored.
    more = await call(client, "commit_to_federation", agent_id="notes-bot", agent_type="other",
                      entities=[{"name": "y"}])  # fmt: skip
    assert more["created"] is False and more["total"] == 2
    with Library.open(root) as library:
        assert library.read("notes-bot").agent_type == "note-capture"


async def test_merge_unions_rows_and_replace_writes_only_what_is_given(
    client: Client, root: Path
) -> None:
    await call(client, "commit_to_federation", agent_id="desk", agent_type="other",
               role_narrative="keeps the desk",
               entities=[{"name": "Alpha", "summary": "one", "tags": ["a"]}, {"name": "beta"}])  # fmt: skip
    merged = await call(
        client,
        "commit_to_federation",
        agent_id="desk",
        entities=[{"name": "alpha", "summary": "two", "tags": ["b"]}, {"name": "gamma"}],
    )
    assert merged["mode"] == "merge"
    assert (merged["added"], merged["updated"], merged["removed"], merged["total"]) == (1, 1, 0, 3)
    assert merged["counts"] == {"known_entities": 3, "recent_sessions": 0,
                                "known_workstreams": 0, "notes": 0}  # fmt: skip
    # The reference's counts, by section, and its absolute path for a local caller.
    assert {k: merged[k] for k in REFERENCE_COUNTS} == {
        "entities_added": 1, "entities_updated": 1, "sessions_added": 0, "sessions_updated": 0,
        "workstreams_added": 0, "workstreams_updated": 0, "notes_added": 0, "notes_updated": 0,
        "total_entities": 3, "total_sessions": 0, "total_workstreams": 0, "total_notes": 0,
    }  # fmt: skip
    assert merged["path"] == str(root / "agents" / "desk.l5.yaml")
    by_name = {r["name"]: r for r in rows(root, "desk")}
    assert list(by_name) == ["Alpha", "beta", "gamma"], "names keep their first spelling, in order"
    assert by_name["Alpha"]["summary"] == "two" and by_name["Alpha"]["tags"] == ["a", "b"]

    replaced = await call(
        client,
        "commit_to_federation",
        agent_id="desk",
        mode="replace",
        entities=[{"name": "beta"}, {"name": "delta"}],
        notes=[{"date": "2026-11-30", "text": "only this"}],
    )
    # beta is kept unchanged (neither added nor updated); delta and the note are new; Alpha
    # and gamma are gone.
    assert replaced["mode"] == "replace"
    assert (replaced["added"], replaced["updated"], replaced["removed"], replaced["total"]) == (
        2, 0, 2, 3)  # fmt: skip
    assert (replaced["entities_added"], replaced["notes_added"], replaced["total_entities"],
            replaced["total_notes"]) == (1, 1, 2, 1)  # fmt: skip
    assert names(root, "desk") == ["beta", "delta"]
    with Library.open(root) as library:
        manifest = library.read("desk")
        assert manifest.agent_type == "other", "replace keeps the agent's identity"
        assert manifest.data["agent"]["role_narrative"] == "keeps the desk"
        assert [n["text"] for n in manifest.data["notes"]] == ["only this"]

    error = await fail(client, "commit_to_federation", agent_id="desk", mode="upsert",
                       entities=[{"name": "x"}])  # fmt: skip
    assert error["status"] == 400 and "merge, replace" in error["message"]


REFERENCE_COUNTS = [f"{s}_{k}" for s in ("entities", "sessions", "workstreams", "notes")
                    for k in ("added", "updated")] + [
    f"total_{s}" for s in ("entities", "sessions", "workstreams", "notes")]  # fmt: skip

ROWS: dict[str, Any] = {
    "entities": [{"name": "ledgerline", "type": "project", "summary": "OFX import", "tags": ["x"]}],
    "sessions": [{"date": "2026-11-30", "cwd": "/src/ledgerline", "key_actions": ["fixed it"]}],
    "workstreams": [{"name": "OFX import", "summary": "parse bank files"}],
    "notes": [{"date": "2026-11-30", "text": "banks lie about encodings"}],
}


async def test_resending_the_same_rows_is_a_no_op_without_a_commit(
    client: Client, root: Path
) -> None:
    first = await call(client, "commit_to_federation", agent_id="desk", agent_type="other", **ROWS)
    assert "no_op" not in first, "the no_op key must be absent on a real write"
    assert first["version_id"] and first["added"] == 4
    count, at = commit_count(root), head(root)

    again = await call(client, "commit_to_federation", agent_id="desk", **ROWS)
    assert again["no_op"] is True
    assert again["digest"] == first["digest"] == again["previous_digest"]
    assert again["version_id"] is None
    assert again["last_updated"] == first["last_updated"], "a no-op must not bump the timestamp"
    assert (again["added"], again["updated"], again["total"]) == (0, 0, 4)
    assert [again[f"{s}_added"] for s in ("entities", "sessions", "workstreams", "notes")] == [
        0, 0, 0, 0]  # fmt: skip
    assert [again[f"total_{s}"] for s in ("entities", "sessions", "workstreams", "notes")] == [
        1, 1, 1, 1]  # fmt: skip

    subset = await call(client, "commit_to_federation", agent_id="desk",
                        entities=ROWS["entities"])  # fmt: skip
    assert subset["no_op"] is True and subset["digest"] == first["digest"]
    same = await call(client, "commit_to_federation", agent_id="desk", mode="replace", **ROWS)
    assert same.get("no_op") is True, f"replace with the very same rows wrote: {same}"
    assert commit_count(root) == count and head(root) == at, "a no-op made a commit"
    versions = await call(client, "list_memory_versions", agent_id="desk")
    assert [v["version_id"] for v in versions["versions"]] == [first["version_id"]]

    changed = await call(client, "commit_to_federation", agent_id="desk",
                         notes=[{"date": "2026-11-30", "text": "a second note"}])  # fmt: skip
    assert "no_op" not in changed and changed["version_id"]
    assert changed["previous_digest"] == first["digest"] != changed["digest"]
    assert commit_count(root) == count + 1


async def test_a_stale_expected_digest_is_a_409_carrying_the_current_digest(
    client: Client, root: Path
) -> None:
    first = await call(client, "commit_to_federation", agent_id="desk", agent_type="other",
                       entities=[{"name": "a"}])  # fmt: skip
    second = await call(client, "commit_to_federation", agent_id="desk",
                        entities=[{"name": "b"}], expected_digest=first["digest"])  # fmt: skip
    assert second["previous_digest"] == first["digest"]
    count = commit_count(root)

    error = await fail(client, "commit_to_federation", agent_id="desk",
                       entities=[{"name": "c"}], expected_digest=first["digest"])  # fmt: skip
    assert error["status"] == 409 and error["code"] == "conflict"
    assert error["current_digest"] == second["digest"] == live_digest(root, "desk")
    assert commit_count(root) == count and names(root, "desk") == ["a", "b"]
    # Clients of the reference read the stale write's digests at the top level.
    body = (await client.call_tool("commit_to_federation", {
        "agent_id": "desk", "entities": [{"name": "c"}], "expected_digest": first["digest"]})
    ).structured_content  # fmt: skip
    assert body is not None and body["error"]["status"] == 409
    assert (body["current_digest"], body["expected_digest"]) == (second["digest"], first["digest"])
    assert (body["agent_id"], body["mode"]) == ("desk", "merge") and body["detail"]

    # A digest8 works as expected_digest, current or stale.
    third = await call(client, "commit_to_federation", agent_id="desk",
                       entities=[{"name": "c"}], expected_digest=second["digest8"])  # fmt: skip
    error = await fail(client, "commit_to_federation", agent_id="desk",
                       entities=[{"name": "d"}], expected_digest=first["digest8"])  # fmt: skip
    assert error["status"] == 409 and error["current_digest"] == third["digest"]
    error = await fail(client, "commit_to_federation", agent_id="desk",
                       entities=[{"name": "d"}], expected_digest="yesterday")  # fmt: skip
    assert error["status"] == 400
    assert names(root, "desk") == ["a", "b", "c"]


async def test_session_and_transcript_are_recorded_as_provenance(
    client: Client, root: Path
) -> None:
    done = await call(
        client,
        "commit_to_federation",
        agent_id="desk",
        agent_type="other",
        entities=[{"name": "a"}],
        session_id="sess-42",
        transcript_ref="file:///home/ada/.claude/projects/x/sess-42.jsonl",
    )
    top = (await call(client, "list_memory_versions", agent_id="desk"))["versions"][0]
    assert top["version_id"] == done["version_id"] and top["digest"] == done["digest"]
    assert top["session_id"] == "sess-42"
    assert top["transcript_ref"] == "file:///home/ada/.claude/projects/x/sess-42.jsonl"
    assert (top["op"], top["caller"]) == ("merge", "operator")

    found = trailers_of(root, done["version_id"])
    assert found["Session"] == "sess-42"
    assert found["Transcript"] == "file:///home/ada/.claude/projects/x/sess-42.jsonl"
    assert (found["Op"], found["Agent"], found["Caller"]) == ("merge", "desk", "operator")
    assert found["Digest"] == done["digest"]


async def test_workstreams_without_a_status_are_active(client: Client, root: Path) -> None:
    await call(
        client,
        "commit_to_federation",
        agent_id="desk",
        agent_type="other",
        workstreams=[{"name": "w1"}, {"name": "w2", "status": "paused"}],
    )
    status = {w["name"]: w["status"] for w in rows(root, "desk", "known_workstreams")}
    assert status == {"w1": "active", "w2": "paused"}
    answer = await call(client, "list_workstreams", status="active", access_level="team")
    assert [w["name"] for w in answer["workstreams"]] == ["w1"]

    error = await fail(client, "commit_to_federation", agent_id="desk",
                       workstreams=[{"name": "w4", "status": "finished"}])  # fmt: skip
    assert error["status"] == 400


async def test_a_null_workstream_status_defaults_to_active_too(client: Client, root: Path) -> None:
    """JSON callers send ``"status": null`` for an unset optional field: that is omitted."""
    await call(client, "commit_to_federation", agent_id="desk", agent_type="other",
               workstreams=[{"name": "w3", "status": None}])  # fmt: skip
    (row,) = rows(root, "desk", "known_workstreams")
    assert row.get("status") == "active", f"status null was stored as {row!r}"


async def test_updating_a_workstream_without_a_status_keeps_its_status(
    client: Client, root: Path
) -> None:
    """The default is for a new workstream: an omitted field leaves a merged row's field alone.

    Reporting progress on a finished workstream ({"name", "summary"}) must not silently turn
    it back to active.
    """
    await call(client, "commit_to_federation", agent_id="desk", agent_type="other",
               workstreams=[{"name": "OFX import", "status": "done"}])  # fmt: skip
    await call(client, "commit_to_federation", agent_id="desk",
               workstreams=[{"name": "OFX import", "summary": "shipped in 1.2"}])  # fmt: skip
    (row,) = rows(root, "desk", "known_workstreams")
    assert row["summary"] == "shipped in 1.2"
    assert row["status"] == "done", (
        f"a merge that did not mention status changed it from 'done' to {row['status']!r}"
    )


def local_and_utc_days() -> set[str]:
    """Today's date on the local clock and in UTC (they differ for part of every day)."""
    return {datetime.now().date().isoformat(), datetime.now(UTC).date().isoformat()}


async def test_a_session_without_a_date_is_dated_today_and_an_empty_one_is_kept_empty(
    client: Client, root: Path
) -> None:
    await call(client, "commit_to_federation", agent_id="desk", agent_type="other",
               entities=[{"name": "a"}])  # fmt: skip
    count = commit_count(root)
    error = await fail(
        client, "commit_to_federation", agent_id="desk", sessions=[{"date": "yesterday"}]
    )
    assert error["status"] == 400 and "sessions[0].date" in error["message"], error
    assert commit_count(root) == count
    # No date at all (or null): today's, and the answer says so.
    undated = [{"cwd": "/src/x"}, {"cwd": "/src/y", "date": None}]
    before = datetime.now().date().isoformat()  # a call across midnight may give either day
    done = await call(client, "commit_to_federation", agent_id="desk-today", agent_type="other",
                      sessions=undated)  # fmt: skip
    today = {before, datetime.now().date().isoformat()}
    assert any("sessions[0], sessions[1]" in w for w in done["meta"]["warnings"]), done["meta"]
    assert {s["date"] for s in rows(root, "desk-today", "recent_sessions")} <= today

    before_days = local_and_utc_days()
    await call(client, "commit_to_federation", agent_id="desk",
               sessions=[{"date": "", "cwd": "/src/undated"},
                         {"date": "2026-11-02", "cwd": "/src/dated"}])  # fmt: skip
    today = before_days | local_and_utc_days()
    dates = {s["cwd"]: s["date"] for s in rows(root, "desk", "recent_sessions")}
    assert dates == {"/src/undated": "", "/src/dated": "2026-11-02"}
    assert not today & set(dates.values()), "today's date was substituted for an empty one"
    with Library.open(root) as library:
        raw = library.read_bytes("desk").decode()
    rows_text = [line for line in raw.splitlines() if not line.startswith("last_updated")]
    assert not any(day in line for line in rows_text for day in today), raw


async def test_bare_strings_in_list_fields_become_one_item_lists(
    client: Client, root: Path
) -> None:
    await call(
        client,
        "commit_to_federation",
        agent_id="desk",
        agent_type="other",
        entities=[{"name": "ledgerline", "tags": "finance", "aliases": "ledger-line"}],
        sessions=[{"date": "2026-11-30", "cwd": "/src/l", "project_focus": "ledgerline",
                   "key_actions": "fixed the OFX parser", "files_touched": "src/ofx.py"}],
        workstreams=[{"name": "OFX", "related_entities": "ledgerline", "tags": "import"}],
        notes=[{"date": "2026-11-30", "text": "n", "related_entities": "ledgerline",
                "tags": "encoding"}],
    )  # fmt: skip
    (entity,) = rows(root, "desk")
    assert entity["tags"] == ["finance"] and entity["aliases"] == ["ledger-line"]
    (session,) = rows(root, "desk", "recent_sessions")
    assert session["project_focus"] == ["ledgerline"]
    assert session["key_actions"] == ["fixed the OFX parser"]
    assert session["files_touched"] == ["src/ofx.py"]
    (workstream,) = rows(root, "desk", "known_workstreams")
    assert workstream["related_entities"] == ["ledgerline"] and workstream["tags"] == ["import"]
    (note,) = rows(root, "desk", "notes")
    assert note["related_entities"] == ["ledgerline"] and note["tags"] == ["encoding"]

    # A bare string merged into an existing list is one more item, not its characters.
    await call(client, "commit_to_federation", agent_id="desk",
               entities=[{"name": "ledgerline", "tags": "ofx"}])  # fmt: skip
    assert rows(root, "desk")[0]["tags"] == ["finance", "ofx"]


async def test_rows_written_carry_the_committing_source(client: Client, root: Path) -> None:
    await call(client, "commit_to_federation", agent_id="desk", agent_type="other", **ROWS)
    with Library.open(root) as library:
        data = library.read("desk").data
    for section in ("known_entities", "recent_sessions", "known_workstreams", "notes"):
        assert data[section], section
        for row in data[section]:
            assert row["source"] == OPERATOR_SOURCE, (section, row)


# -- acceptance: commit, then export-style regeneration --------------------------------------


async def test_a_commit_then_export_style_regeneration_keeps_the_committed_rows(
    client: Client, root: Path
) -> None:
    committed = await call(
        client,
        "commit_to_federation",
        agent_id="claude-code",
        agent_type="code-assistant",
        entities=[{"name": "decision-log", "summary": "committed by the operator"}],
        sessions=[{"date": "2026-11-28", "cwd": "/src/chat", "key_actions": ["planned"]}],
        notes=[{"date": "2026-11-29", "text": "remember the OFX edge case"}],
        session_id="chat-1",
    )
    assert committed["total"] == 3
    committed_rows = {
        s: rows(root, "claude-code", s) for s in ("known_entities", "recent_sessions", "notes")
    }

    # A reader stub: a fresh dict of rows, the reader's whole view of its native store.
    fresh1 = {
        "agent": {"type": "code-assistant"},
        "known_entities": [{"name": "ledgerline", "summary": "v1"}, {"name": "rapidfuzz"}],
        "recent_sessions": [{"date": "2026-11-30", "cwd": "/src/ledgerline", "session_id": "r1"}],
    }
    fresh2 = {
        "known_entities": [{"name": "ledgerline", "summary": "v2"}, {"name": "tidewater"}],
        "recent_sessions": [{"date": "2026-12-01", "cwd": "/src/tidewater", "session_id": "r2"}],
        "notes": [{"date": "2026-12-01", "text": "a note the reader found"}],
    }
    with Library.open(root) as library:
        first = library.regenerate("claude-code", fresh1, reader="claude-code")
        after_first = library.read("claude-code").data
        second = library.regenerate("claude-code", fresh2, reader="claude-code")
        after_second = library.read("claude-code").data

    # First: 2 entities + 1 session added, nothing of the commit touched.
    assert (first.stats.total_added, first.stats.total_updated, first.stats.total_removed) == (
        3, 0, 0)  # fmt: skip
    assert first.totals["total"] == 6
    assert [r["name"] for r in after_first["known_entities"]] == [
        "decision-log", "ledgerline", "rapidfuzz"]  # fmt: skip
    # Second: tidewater, session r2 and the note added; ledgerline updated; rapidfuzz and
    # session r1 (no longer in the reader's view) removed.
    assert (second.stats.total_added, second.stats.total_updated, second.stats.total_removed) == (
        3, 1, 2)  # fmt: skip
    assert second.totals == {"known_entities": 3, "recent_sessions": 2,
                             "known_workstreams": 0, "notes": 2, "total": 7}  # fmt: skip
    for data in (after_first, after_second):
        for section, kept in committed_rows.items():
            for row in kept:
                assert row in data[section], f"committed {section} row lost: {row}"
    entities = {r["name"]: r for r in after_second["known_entities"]}
    assert set(entities) == {"decision-log", "ledgerline", "tidewater"}
    assert entities["ledgerline"]["summary"] == "v2"
    assert entities["decision-log"]["source"] == OPERATOR_SOURCE
    assert entities["tidewater"]["source"]["kind"] == "reader"
    assert [s.get("session_id") for s in after_second["recent_sessions"]] == [None, "r2"]

    # And the server serves it: the committed row is found, the dropped one is not.
    found = await call(client, "query_agent_memory", agent="claude-code", topic="decision-log",
                       access_level="team")  # fmt: skip
    assert [m["name"] for m in found["matches"]] == ["decision-log"]
    gone = await call(client, "find_entity", name="rapidfuzz", access_level="team")
    assert all(m["name"] != "rapidfuzz" for m in gone["matches"])
    versions = (await call(client, "list_memory_versions", agent_id="claude-code"))["versions"]
    assert [(v["op"], v["caller"]) for v in versions] == [
        ("export", "reader:claude-code"), ("export", "reader:claude-code"),
        ("merge", "operator")]  # fmt: skip


# -- list_memory_versions --------------------------------------------------------------------


async def test_a_reference_client_undoes_the_last_write_with_the_first_row_not_current(
    client: Client,
) -> None:
    # The reference lists the states writes replaced; its clients roll back to the first one.
    await call(client, "commit_to_federation", agent_id="undo", agent_type="other",
               entities=[{"name": "kept"}])  # fmt: skip
    await call(client, "commit_to_federation", agent_id="undo", entities=[{"name": "regret"}])
    versions = (await call(client, "list_memory_versions", agent_id="undo"))["versions"]
    assert [v["current"] for v in versions] == [True, False]
    previous = next(v for v in versions if not v["current"])
    undone = await call(client, "rollback_agent_memory", agent_id="undo",
                        version_id=previous["version_id"])  # fmt: skip
    assert undone["rolled_back"] is True
    names = await call(client, "query_agent_memory", agent="undo", topic="regret",
                       access_level="team")  # fmt: skip
    assert names["matches"] == []
    after = (await call(client, "list_memory_versions", agent_id="undo"))["versions"]
    assert after[0]["current"] and after[0]["digest"] == previous["digest"]


async def test_list_memory_versions_is_newest_first_and_bounded(client: Client, root: Path) -> None:
    with Library.open(root) as library:
        library.commit("busy", {"agent": {"type": "other"}})
        for i in range(104):
            library.commit("busy", {"notes": [{"date": "2026-11-30", "text": f"n{i}"}]})
    in_git = git(root, "log", "--format=%H", "--", "agents/busy.l5.yaml").split()
    assert len(in_git) == 105

    page = await call(client, "list_memory_versions", agent_id="busy")
    assert page["agent_id"] == "busy"
    assert page["meta"]["limit"] == 20 and page["meta"]["truncated"] is True
    assert [v["version_id"] for v in page["versions"]] == in_git[:20]
    times = [v["time"] for v in page["versions"]]
    assert times == sorted(times, reverse=True)
    for v in page["versions"]:
        assert {"version_id", "digest8", "op", "caller", "time"} <= set(v)
        assert v["digest8"] == v["digest"].removeprefix("sha256:")[:8]
        assert (v["op"], v["caller"]) == ("merge", "operator")
        # The reference's snapshot fields: its agent, when (UTC, seconds) and how many bytes.
        assert v["agent_id"] == "busy" and v["taken_at"] == v["time"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", v["taken_at"])
        blob = git(root, "show", f"{v['version_id']}:agents/busy.l5.yaml")
        assert v["size_bytes"] == len(blob.encode())
    assert page["count"] == 20

    most = await call(client, "list_memory_versions", agent_id="busy", limit=1000)
    assert most["meta"]["limit"] == 100 and len(most["versions"]) == 100
    assert [v["version_id"] for v in most["versions"]] == in_git[:100]
    five = await call(client, "list_memory_versions", agent_id="busy", limit=5)
    assert len(five["versions"]) == 5
    short = await call(client, "commit_to_federation", agent_id="fresh", agent_type="other",
                       entities=[{"name": "x"}])  # fmt: skip
    only = await call(client, "list_memory_versions", agent_id="fresh")
    assert [v["version_id"] for v in only["versions"]] == [short["version_id"]]
    assert only["meta"]["truncated"] is False

    error = await fail(client, "list_memory_versions", agent_id="ghost")
    assert error["status"] == 404
    error = await fail(client, "list_memory_versions", agent_id="../etc")
    assert error["status"] == 400


# -- explain_memory_change -------------------------------------------------------------------


async def test_explain_memory_change_names_the_write_and_what_it_changed(
    client: Client, root: Path
) -> None:
    await call(client, "commit_to_federation", agent_id="desk", agent_type="other",
               entities=[{"name": "x"}, {"name": "y", "summary": "old"}],
               session_id="s1")  # fmt: skip
    second = await call(
        client,
        "commit_to_federation",
        agent_id="desk",
        entities=[{"name": "y", "summary": "new"}, {"name": "z"}],
        notes=[{"date": "2026-11-30", "text": "why y changed"}],
        session_id="s2",
        transcript_ref="file:///t/s2.jsonl",
    )
    third = await call(client, "commit_to_federation", agent_id="desk", mode="replace",
                       entities=[{"name": "z"}], session_id="s3")  # fmt: skip

    for asked in (second["digest"], second["digest8"], second["digest"].removeprefix("sha256:")):
        answer = await call(client, "explain_memory_change", agent_id="desk", digest=asked)
        assert answer["digest"] == second["digest"] and answer["digest8"] == second["digest8"]
        assert answer["version_id"] == second["version_id"]
        assert (answer["op"], answer["caller"]) == ("merge", "operator")
        assert (answer["session_id"], answer["transcript_ref"]) == ("s2", "file:///t/s2.jsonl")
        changes = answer["changes"]
        assert changes["added"] == {
            "known_entities": ["z"],
            "notes": ["2026-11-30 | why y changed"],
        }
        assert changes["changed"] == {"known_entities": ["y"]}
        assert changes["removed"] == {}
        # The reference's shape of the same facts: found, and the write as its record.
        assert answer["found"] is True
        assert answer["write"] == {
            "ts": answer["time"], "agent_id": "desk", "op": "commit", "caller": "operator",
            "session_id": "s2", "transcript_ref": "file:///t/s2.jsonl", "taint_floor": "trusted",
            "base_digest": second["previous_digest"], "new_digest": second["digest"],
            "counts": {"entities_added": 1, "notes_added": 1, "entities_updated": 1},
        }  # fmt: skip
        warnings = answer["meta"]["warnings"]
        assert any("session_id" in w and "transcript_ref" in w and "caller" in w
                   for w in warnings), warnings  # fmt: skip

    replaced = await call(client, "explain_memory_change", agent_id="desk",
                          digest=third["digest8"])  # fmt: skip
    assert (replaced["op"], replaced["session_id"], replaced["transcript_ref"]) == (
        "replace", "s3", None)  # fmt: skip
    assert replaced["changes"]["removed"] == {"known_entities": ["x", "y"],
                                              "notes": ["2026-11-30 | why y changed"]}  # fmt: skip
    assert replaced["changes"]["added"] == {}

    # A digest no write produced is an answer, as in the reference; an unknown agent is a 404.
    unknown = await call(client, "explain_memory_change", agent_id="desk", digest="0" * 64)
    assert unknown == {"agent_id": "desk", "digest": "0" * 64, "found": False,
                       "detail": "no recorded write produced that state",
                       "meta": {"warnings": []}}  # fmt: skip
    error = await fail(client, "explain_memory_change", agent_id="nobody", digest="0" * 64)
    assert error["status"] == 404
    error = await fail(client, "explain_memory_change", agent_id="desk", digest="abc")
    assert error["status"] == 400


# -- rollback_agent_memory -------------------------------------------------------------------


async def _three_versions(client: Client) -> list[dict[str, Any]]:
    v1 = await call(client, "commit_to_federation", agent_id="desk", agent_type="other",
                    entities=[{"name": "a", "summary": "first"}, {"name": "b"}],
                    session_id="s1")  # fmt: skip
    v2 = await call(client, "commit_to_federation", agent_id="desk",
                    entities=[{"name": "a", "summary": "second"}, {"name": "c"}],
                    session_id="s2")  # fmt: skip
    v3 = await call(client, "commit_to_federation", agent_id="desk",
                    notes=[{"date": "2026-11-30", "text": "bad idea"}], session_id="s3")  # fmt: skip
    return [v1, v2, v3]


@pytest.mark.parametrize(
    "asks",
    [{"dry_run": True}, {"confirm": False}, {"dry_run": True, "confirm": True}],
    ids=["dry_run", "confirm=false as before", "dry_run wins over confirm"],
)
async def test_a_rollback_asked_as_a_dry_run_only_previews(
    client: Client, root: Path, asks: dict[str, bool]
) -> None:
    v1, _, v3 = await _three_versions(client)
    count, at = commit_count(root), head(root)
    on_disk = (root / "agents" / "desk.l5.yaml").read_bytes()

    preview = await call(client, "rollback_agent_memory", agent_id="desk",
                         version_id=v1["version_id"], **asks)  # fmt: skip
    assert preview["preview"] is True
    assert preview["current_digest"] == v3["digest"] == live_digest(root, "desk")
    would = preview["would_change"]
    assert would["removed"] == {"known_entities": ["c"], "notes": ["2026-11-30 | bad idea"]}
    assert would["changed"] == {"known_entities": ["a"]}
    assert would["added"] == {}
    assert "rolled_back" not in preview
    assert commit_count(root) == count and head(root) == at, "a preview wrote something"
    assert (root / "agents" / "desk.l5.yaml").read_bytes() == on_disk
    versions = await call(client, "list_memory_versions", agent_id="desk")
    assert len(versions["versions"]) == 3


async def test_a_plain_rollback_restores_as_the_reference_does(client: Client, root: Path) -> None:
    v1, _, v3 = await _three_versions(client)
    count = commit_count(root)
    with Library.open(root) as library:
        bytes_v1 = library.read_bytes("desk", v1["version_id"])

    done = await call(client, "rollback_agent_memory", agent_id="desk",
                      version_id=v1["version_id"])  # fmt: skip
    # The reference's answer keys, with its meaning, next to bourdon's.
    assert done["restored_version"] == done["version_id"] == v1["version_id"]
    assert done["path"] == "agents/desk.l5.yaml"
    assert (done["replaced_digest"], done["digest"]) == (v3["digest"], v1["digest"])
    assert done["rolled_back"] is True and "preview" not in done
    assert commit_count(root) == count + 1
    assert (root / "agents" / "desk.l5.yaml").read_bytes() == bytes_v1
    # Itself a version, so the plain call can be undone by another plain call.
    undone = await call(client, "rollback_agent_memory", agent_id="desk",
                        version_id=v3["version_id"])  # fmt: skip
    assert undone["digest"] == v3["digest"] == live_digest(root, "desk")

    error = await fail(client, "rollback_agent_memory", agent_id="desk", version_id="f" * 40)
    assert error["status"] == 404
    error = await fail(client, "rollback_agent_memory", agent_id="ghost",
                       version_id=v1["version_id"])  # fmt: skip
    assert error["status"] == 404
    assert commit_count(root) == count + 2, "a refused rollback wrote something"


async def test_rollback_restores_the_exact_bytes_and_is_itself_undoable(
    client: Client, root: Path
) -> None:
    v1, _, v3 = await _three_versions(client)
    with Library.open(root) as library:
        bytes_v1 = library.read_bytes("desk", v1["version_id"])
        bytes_v3 = library.read_bytes("desk", v3["version_id"])
    count = commit_count(root)

    done = await call(client, "rollback_agent_memory", agent_id="desk",
                      version_id=v1["version_id"], confirm=True, session_id="undo-1")  # fmt: skip
    assert done["rolled_back"] is True
    assert (done["previous_digest"], done["digest"]) == (v3["digest"], v1["digest"])
    assert done["restored"] == {"added": 0, "updated": 1, "removed": 2}
    assert v3["version_id"] in (done["undo"] or "")
    assert commit_count(root) == count + 1
    with Library.open(root) as library:
        assert library.read_bytes("desk") == bytes_v1
    assert (root / "agents" / "desk.l5.yaml").read_bytes() == bytes_v1
    found = trailers_of(root, done["new_version_id"])
    assert (found["Op"], found["Restores"], found["Session"], found["Caller"]) == (
        "rollback", v1["version_id"], "undo-1", "operator")  # fmt: skip
    top = (await call(client, "list_memory_versions", agent_id="desk"))["versions"][0]
    assert (top["version_id"], top["op"]) == (done["new_version_id"], "rollback")
    served = await call(client, "find_entity", name="c", access_level="team")
    assert all(m["name"] != "c" for m in served["matches"]), "the server still serves 'c'"

    # The restored state was produced before: explain names the first write, and the rollback.
    explained = await call(client, "explain_memory_change", agent_id="desk", digest=v1["digest"])
    assert explained["version_id"] == v1["version_id"] and explained["session_id"] == "s1"
    assert explained["again_in"] == [done["new_version_id"]]

    # Rolling back the rollback, this time with expected_digest = the current digest.
    undone = await call(client, "rollback_agent_memory", agent_id="desk",
                        version_id=v3["version_id"], expected_digest=done["digest"])  # fmt: skip
    assert undone["rolled_back"] is True and undone["digest"] == v3["digest"]
    with Library.open(root) as library:
        assert library.read_bytes("desk") == bytes_v3
    assert commit_count(root) == count + 2

    # A stale expected_digest: 409 with the live digest, nothing written.
    at = head(root)
    error = await fail(client, "rollback_agent_memory", agent_id="desk",
                       version_id=v1["version_id"], expected_digest=done["digest"])  # fmt: skip
    assert error["status"] == 409 and error["current_digest"] == v3["digest"]
    assert head(root) == at and commit_count(root) == count + 2
    with Library.open(root) as library:
        assert library.read_bytes("desk") == bytes_v3


# -- over stdio ------------------------------------------------------------------------------


async def test_describe_caller_over_stdio_is_the_trusted_operator(
    root: Path, tmp_path: Path
) -> None:
    async with Client(stdio(root, tmp_path / "home")) as c:
        me = await call(c, "describe_caller")
    assert (me["member_id"], me["tier"], me["transport"]) == ("operator", "trusted", "stdio")
    assert me["writes"] == "live" and me["can_rollback"] is True
    assert me["writable_namespaces"] == "all" and me["readable_namespaces"] == "all"
    assert me["authenticated"] is False


async def test_the_write_tools_over_stdio(root: Path, tmp_path: Path) -> None:
    async with Client(stdio(root, tmp_path / "home")) as c:
        first = await call(c, "commit_to_federation", agent_id="desk", agent_type="other",
                           session_id="stdio-1", **ROWS)  # fmt: skip
        count = commit_count(root)
        again = await call(c, "commit_to_federation", agent_id="desk", **ROWS)
        assert again["no_op"] is True and again["digest"] == first["digest"]
        assert commit_count(root) == count
        second = await call(c, "commit_to_federation", agent_id="desk",
                            entities=[{"name": "b"}], expected_digest=first["digest"])  # fmt: skip
        error = await fail(c, "commit_to_federation", agent_id="desk",
                           entities=[{"name": "c"}], expected_digest=first["digest"])  # fmt: skip
        assert error["status"] == 409 and error["current_digest"] == second["digest"]
        versions = (await call(c, "list_memory_versions", agent_id="desk"))["versions"]
        assert [v["session_id"] for v in versions] == [None, "stdio-1"]
        preview = await call(c, "rollback_agent_memory", agent_id="desk",
                             version_id=first["version_id"], dry_run=True)  # fmt: skip
        assert preview["preview"] is True and commit_count(root) == count + 1
        done = await call(c, "rollback_agent_memory", agent_id="desk",
                          version_id=first["version_id"],
                          expected_digest=preview["current_digest"])  # fmt: skip
        assert done["digest"] == first["digest"]
    with Library.open(root) as library:
        assert library.read_bytes("desk") == library.read_bytes("desk", first["version_id"])


@pytest.mark.slow
async def test_concurrent_stdio_clients_lose_no_commit(root: Path, tmp_path: Path) -> None:
    """8 clients x 125 commits over stdio: 1,000/1,000 rows, one commit each, fsck clean."""
    before = commit_count(root)
    latencies: list[float] = []
    failures: list[str] = []

    async def commits(c: Client, n: int) -> None:
        for i in range(COMMITS_PER_CLIENT):
            agent = "shared" if i % 2 == 0 else f"own-{n}"
            start = time.perf_counter()
            result = await c.call_tool(
                "commit_to_federation",
                {
                    "agent_id": agent,
                    "agent_type": "code-assistant",
                    "entities": [{"name": f"p{n}-e{i}"}],
                    "session_id": f"s{n}-{i}",
                },
            )
            latencies.append(time.perf_counter() - start)
            if result.is_error:
                failures.append(f"client {n} commit {i}: {result.structured_content}")

    async with stdio_clients(root, tmp_path, CLIENTS) as clients:
        started = time.perf_counter()
        with anyio.fail_after(RUN_TIMEOUT):
            async with anyio.create_task_group() as tg:
                for n, c in enumerate(clients):
                    tg.start_soon(commits, c, n)
        wall = time.perf_counter() - started
    total = CLIENTS * COMMITS_PER_CLIENT
    print(
        f"\n[mcp concurrent] {CLIENTS} stdio clients x {COMMITS_PER_CLIENT} commits = {total} in "
        f"{wall:.1f} s ({total / wall:.0f} commits/s); commit_to_federation latency incl. lock "
        f"wait p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms, max {max(latencies) * 1000:.0f} ms"
    )
    assert not failures, "\n".join(failures[:20])

    expected = {f"p{n}-e{i}" for n in range(CLIENTS) for i in range(COMMITS_PER_CLIENT)}
    present: set[str] = set()
    with Library.open(root) as library:
        for agent in ["shared", *(f"own-{n}" for n in range(CLIENTS))]:
            held = [r["name"] for r in library.read(agent).data["known_entities"]]
            assert len(held) == len(set(held)), f"{agent} holds a row twice"
            present |= set(held)
        assert len(expected & present) == total, f"lost: {sorted(expected - present)[:20]}"
        assert present == expected
        shared = {f"p{n}-e{i}" for n in range(CLIENTS) for i in range(0, COMMITS_PER_CLIENT, 2)}
        assert {r["name"] for r in library.read("shared").data["known_entities"]} == shared

        assert commit_count(root) == before + total
        writes = parse_log(root)[:total]
        sessions = []
        for commit, found in writes:
            missing = [k for k in TRAILER_KEYS if not found.get(k)]
            assert not missing, f"commit {commit} lacks trailers {missing}: {found}"
            assert (found["Op"], found["Caller"]) == ("merge", "operator"), (commit, found)
            writer, seq = found["Session"][1:].split("-")
            assert found["Agent"] == ("shared" if int(seq) % 2 == 0 else f"own-{writer}"), found
            sessions.append(found["Session"])
        assert sorted(sessions) == sorted(
            f"s{n}-{i}" for n in range(CLIENTS) for i in range(COMMITS_PER_CLIENT)
        ), "every commit must land exactly once"
        for commit, found in writes[::50]:
            data = library.read(found["Agent"], commit).data
            assert digest(data) == found["Digest"], f"Bourdon-Digest of {commit} is not its own"
    for agent_file in (root / "agents").glob("*.l5.yaml"):
        rel = agent_file.relative_to(root).as_posix()
        assert agent_file.read_bytes() == git(root, "show", f"HEAD:{rel}").encode(), rel
    assert_fsck_clean(root)


async def race_once(
    c: Client, n: int, rnd: int, expected: str, go: anyio.Event, answers: dict[int, Any]
) -> None:
    """One racer of one round: wait for the start signal, then commit with ``expected``."""
    await go.wait()
    answers[n] = await c.call_tool(
        "commit_to_federation",
        {
            "agent_id": "race",
            "entities": [{"name": f"r{rnd}-c{n}"}],
            "expected_digest": expected,
            "session_id": f"r{rnd}-c{n}",
        },
    )


async def test_same_expected_digest_over_mcp_has_exactly_one_winner(
    root: Path, tmp_path: Path
) -> None:
    with Library.open(root) as library:
        seeded = library.commit(
            "race", {"agent": {"type": "code-assistant"}, "known_entities": [{"name": "seed"}]}
        )
    winners: list[str] = []
    losers: set[str] = set()
    current = seeded.digest
    async with stdio_clients(root, tmp_path, CLIENTS) as clients:
        for rnd in range(RACE_ROUNDS):
            answers: dict[int, Any] = {}
            go = anyio.Event()
            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg:
                    for n, c in enumerate(clients):
                        tg.start_soon(race_once, c, n, rnd, current, go, answers)
                    await anyio.sleep(0.05)  # every client is waiting on the same event
                    go.set()
            won = {n: a.structured_content for n, a in answers.items() if not a.is_error}
            lost = {n: a.structured_content for n, a in answers.items() if a.is_error}
            assert len(won) == 1, f"round {rnd}: {len(won)} winners with one digest: {won}"
            ((n, winner),) = won.items()
            assert winner["previous_digest"] == current, f"round {rnd}: won on top of another"
            assert winner["digest"] == live_digest(root, "race")
            assert len(lost) == CLIENTS - 1
            for m, body in lost.items():
                error = body["error"]
                assert error["status"] == 409, f"round {rnd}, client {m}: {error}"
                assert error["current_digest"] == winner["digest"], (
                    f"round {rnd}: a loser's current_digest is not the winner's new digest"
                )
            winners.append(f"r{rnd}-c{n}")
            losers |= {f"r{rnd}-c{m}" for m in lost}
            current = winner["digest"]

    held = names(root, "race")
    assert len(held) == len(set(held)), "a row was applied twice"
    assert sorted(held) == sorted(["seed", *winners])
    assert not losers & set(held), "a losing write was applied"
    with Library.open(root) as library:
        history = library.history("race", limit=None)
    assert len(history) == 1 + RACE_ROUNDS
    assert [v.session for v in history[:-1]] == list(reversed(winners))
    assert_fsck_clean(root)
