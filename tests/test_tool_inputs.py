"""Arguments a tool cannot act on are refused as bad input (400), never a 500 and never a silent
change of meaning (issue 13, item 17): forged cursors, an empty ``expected_digest`` (which would
turn the lost-update check off), an empty ``version_id``, and an ``access_level`` spelled in any
other case than the documented ``public``, ``team``, ``private``.

Driven through the real MCP client against ``create_server`` in-process (the local operator).
"""

from __future__ import annotations

import base64
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
            got[f"{tool} / {label}"] = (failed, error.get("status"), "cursor" in error.get("message", ""))
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
    failed, found = await answer(client, "find_entity", name="lost update probe", access_level="team")
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
