"""Arguments a tool cannot act on are refused as bad input (400), never a 500 and never a silent
change of meaning (issue 13, item 17): forged cursors, an empty ``expected_digest`` (which would
turn the lost-update check off), an empty ``version_id``, and an ``access_level`` spelled in any
other case than the documented ``public``, ``team``, ``private``. A closed set stays so even
though tools/list lists it as an enum, and a row at fault is named by its index in what the
caller sent (``notes[1].text``); a note or session without a date is dated today, and said.

Driven through the real MCP client against ``create_server`` in-process (the local operator).
"""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bourdon.serve.server import create_server
from bourdon.testing import make_library

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    root = tmp_path / "sample"
    make_library(root).close()
    async with Client(create_server(root, watch=False, home=tmp_path / "home")) as c:
        yield c


async def answer(client: Client, tool: str, **args: Any) -> tuple[bool, dict[str, Any]]:
    result = await client.call_tool(tool, args)
    assert result.structured_content is not None, result.content
    return result.is_error, result.structured_content


def forged(payload: object) -> str:
    text = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(text).decode().rstrip("=")


def cursors(kind: str) -> dict[str, str]:
    """Cursors of the right encoding and kind whose position no row can be compared with."""
    return {
        "after of numbers": forged({"v": 1, "k": kind, "after": [1, 2, 3], "since": None}),
        "after of nulls": forged({"v": 1, "k": kind, "after": [None, None], "since": None}),
        "after of lists": forged({"v": 1, "k": kind, "after": [[1], {"a": 1}], "since": None}),
        "after mixing": forged(
            {"v": 1, "k": kind, "after": ["2026-11-20", 7, "x", "y", "z"], "since": None}
        ),
        "after too long": forged(
            {"v": 1, "k": kind, "after": ["2026-11-20", "a", "b", "c", "d", 1, 2], "since": None}
        ),
        "since not a date": forged(
            {"v": 1, "k": kind, "after": ["2026-11-20", "a", "", "", 0], "since": "yesterday"}
        ),
    }


TOOLS = {
    "list_recent_work": ("sessions", {"access_level": "team"}),
    "list_notes": ("notes", {"access_level": "team"}),
    "get_cross_agent_summary": ("summary", {"project": "bourdon", "access_level": "team"}),
}


async def test_a_forged_cursor_is_a_400_that_says_what_to_pass(client: Client) -> None:
    got = {}
    for tool, (kind, args) in TOOLS.items():
        for label, cursor in cursors(kind).items():
            failed, body = await answer(client, tool, cursor=cursor, **args)
            error = body.get("error", {}) if failed else {}
            got[f"{tool} / {label}"] = (
                failed,
                error.get("status"),
                "cursor" in error.get("message", ""),
            )
    wrong = {cell: seen for cell, seen in got.items() if seen != (True, 400, True)}
    assert wrong == {}, wrong


async def test_a_cursor_the_server_gave_still_pages(client: Client) -> None:
    failed, first = await answer(
        client, "list_recent_work", since="2000-01-01", access_level="team", limit=1
    )
    assert not failed and first["has_more"]
    failed, second = await answer(
        client, "list_recent_work", access_level="team", limit=1, cursor=first["next_cursor"]
    )
    assert not failed and second["sessions"] and second["sessions"] != first["sessions"]


async def test_an_empty_expected_digest_is_refused_not_ignored(client: Client) -> None:
    row = {"name": "lost update probe", "visibility": "team"}
    failed, body = await answer(
        client, "commit_to_federation", agent_id="codex", entities=[row], expected_digest=""
    )
    assert failed and body["error"]["status"] == 400, body
    assert "expected_digest" in body["error"]["message"]
    failed, found = await answer(
        client, "find_entity", name="lost update probe", access_level="team"
    )
    assert not failed and found["matches"] == []  # nothing was written

    failed, versions = await answer(client, "list_memory_versions", agent_id="codex")
    assert not failed
    older = versions["versions"][-1]["version_id"]
    failed, body = await answer(
        client, "rollback_agent_memory", agent_id="codex", version_id=older, expected_digest=""
    )
    assert failed and body["error"]["status"] == 400, body
    assert "expected_digest" in body["error"]["message"]


async def test_an_empty_version_id_is_refused_not_previewed(client: Client) -> None:
    for extra in ({}, {"dry_run": True}, {"confirm": False}):
        failed, body = await answer(
            client, "rollback_agent_memory", agent_id="codex", version_id="", **extra
        )
        assert failed and body["error"]["status"] == 400, (extra, body)
        assert "version_id" in body["error"]["message"]


@pytest.mark.parametrize("level", ["TEAM", "Team", "Public", " team", "team "])
async def test_access_level_is_lower_case_as_documented(client: Client, level: str) -> None:
    failed, body = await answer(client, "find_entity", name="bourdon", access_level=level)
    assert failed and body["error"]["status"] == 400, body
    assert "public, team, private" in body["error"]["message"]


async def test_the_documented_access_levels_answer(client: Client) -> None:
    for level in ("public", "team", "private"):
        failed, body = await answer(client, "find_entity", name="bourdon", access_level=level)
        assert not failed and body["meta"]["requested_access_level"] == level


# -- rows a caller commits ------------------------------------------------------------------


async def test_a_note_or_session_without_a_date_is_dated_today_and_said(client: Client) -> None:
    before = datetime.date.today().isoformat()  # a call across midnight may give either day
    failed, body = await answer(
        client,
        "commit_to_federation",
        agent_id="codex",
        notes=[{"date": "2026-11-01", "text": "dated"}, {"text": "undated probe note"}],
        sessions=[{"cwd": "/src/probe", "key_actions": ["probe"]}],
    )
    today = {before, datetime.date.today().isoformat()}
    assert not failed, body
    warnings = body["meta"]["warnings"]
    assert any(w.startswith("sessions[0]:") and any(d in w for d in today) for w in warnings), (
        warnings
    )
    assert any(w.startswith("notes[1]:") and any(d in w for d in today) for w in warnings), warnings
    assert not any("notes[0]" in w for w in warnings)
    failed, notes = await answer(
        client, "list_notes", agent="codex", since="2000-01-01", access_level="team"
    )
    assert {n["text"]: n["date"] for n in notes["notes"]}["undated probe note"] in today


async def test_a_bad_row_is_named_by_its_index_in_what_the_caller_sent(client: Client) -> None:
    # codex already holds entities and notes: an index into the merged lists would differ.
    failed, body = await answer(
        client,
        "commit_to_federation",
        agent_id="codex",
        entities=[{"name": "fine"}, {"summary": "no name"}],
        notes=[{"date": "2026-11-02", "text": "ok"}, {"date": "2026-11-02", "text": ""}],
    )
    assert failed and body["error"]["status"] == 400, body
    problems = body["error"]["problems"]
    assert any(p.startswith("entities[1]:") and "'name'" in p for p in problems), problems
    assert any(p.startswith("notes[1].text:") for p in problems), problems
    assert not any(p.startswith("/") for p in problems)


async def test_fields_of_the_callers_own_are_kept_and_others_named(
    client: Client, tmp_path: Path
) -> None:
    failed, body = await answer(
        client,
        "commit_to_federation",
        agent_id="codex",
        entities=[{"name": "kept extension probe", "x-origin": "probe"}],
    )
    assert not failed, body
    written = (tmp_path / "sample" / "agents" / "codex.l5.yaml").read_text(encoding="utf-8")
    assert "x-origin: probe" in written
    failed, body = await answer(
        client, "commit_to_federation", agent_id="codex", entities=[{"name": "y", "origin": "z"}]
    )
    assert failed and body["error"]["status"] == 400, body
    assert body["error"]["message"].startswith("entities[0]: unknown field 'origin'")
    assert "x-origin" in body["error"]["message"]


@pytest.mark.parametrize("value", ["MERGE", "upsert"])
async def test_a_closed_set_outside_its_enum_is_still_a_400_naming_the_values(
    client: Client, value: str
) -> None:
    failed, body = await answer(
        client, "commit_to_federation", agent_id="codex", mode=value, entities=[{"name": "q"}]
    )
    assert failed and body["error"]["status"] == 400, body
    assert "merge, replace" in body["error"]["message"]
    failed, body = await answer(
        client, "commit_to_federation", agent_id="codex", on_clamp=value, entities=[{"name": "q"}]
    )
    assert failed and body["error"]["status"] == 400, body
    assert "spill, evict, reject" in body["error"]["message"]


# -- on_clamp: list items a merge drops past their limit --------------------------------------

FULL = [f"tag{i}" for i in range(32)]  # an entity's tags are limited to 32


async def clamped(client: Client, on_clamp: str | None) -> tuple[bool, dict[str, Any]]:
    """Fill a team entity's tags to the limit, then merge two more in."""
    name = f"clamp probe {on_clamp}"
    row = {"name": name, "tags": FULL, "visibility": "team"}
    failed, body = await answer(client, "commit_to_federation", agent_id="codex", entities=[row])
    assert not failed, body
    more = {"name": name, "tags": ["new-a", "new-b"]}
    args = {} if on_clamp is None else {"on_clamp": on_clamp}
    return await answer(client, "commit_to_federation", agent_id="codex", entities=[more], **args)


async def tags_of(client: Client, name: str) -> list[str]:
    failed, found = await answer(client, "find_entity", name=name, access_level="team")
    assert not failed and found["matches"], found
    return list(found["matches"][0]["tags"])


async def test_on_clamp_reject_refuses_and_writes_nothing(client: Client) -> None:
    failed, body = await clamped(client, "reject")
    assert failed and body["error"]["status"] == 400, body
    assert "entities[0].tags" in body["error"]["message"]
    assert body["error"]["list_items_evicted"][0]["items"] == ["tag0", "tag1"]
    assert await tags_of(client, "clamp probe reject") == FULL


async def test_on_clamp_evict_drops_the_oldest_and_lists_them(client: Client) -> None:
    failed, body = await clamped(client, "evict")
    assert not failed, body
    assert [e["items"] for e in body["list_items_evicted"]] == [["tag0", "tag1"]]
    assert body["list_items_evicted"][0]["row"] == "entities[0]"
    assert await tags_of(client, "clamp probe evict") == [*FULL[2:], "new-a", "new-b"]
    failed, notes = await answer(
        client, "search_federation", query="tag0", access_level="team", kind="note"
    )
    assert notes["results"] == []


async def test_on_clamp_spill_by_default_keeps_the_dropped_items_in_a_note(client: Client) -> None:
    failed, body = await clamped(client, None)
    assert not failed, body
    assert body["meta"]["on_clamp"] == "spill" and body["notes_added"] == 1
    assert await tags_of(client, "clamp probe None") == [*FULL[2:], "new-a", "new-b"]
    failed, notes = await answer(
        client, "list_notes", agent="codex", since="2000-01-01", access_level="team"
    )
    spilled = [n for n in notes["notes"] if "bourdon:clamp-spill" in n["tags"]]
    assert len(spilled) == 1 and "tag0; tag1" in spilled[0]["text"], spilled
    assert "clamp probe None" in spilled[0]["text"]
    # The note is no more visible than the row its items came from.
    failed, public = await answer(client, "list_notes", agent="codex", since="2000-01-01")
    assert not any("bourdon:clamp-spill" in n["tags"] for n in public["notes"])
