"""The MCP server, driven through the real MCP client: in-process, over stdio and over HTTP."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from bourdon.query.index import Index
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import make_library, manifest
from bourdon.testing.serving import child_env, free_port, stop_process, wait_for_port

pytestmark = pytest.mark.anyio

# The read tools of the Bourdon tool reference: parameter -> default ("required" if none).
REFERENCE: dict[str, dict[str, Any]] = {
    "trace_entity": {"entity": "required", "access_level": "team", "include_private": False},
    "search_federation": {
        "query": "required",
        "top_k": 5,
        "min_score": 0.01,
        "source": None,
        "access_level": "team",
    },
    "find_entity": {
        "name": "required",
        "access_level": "public",
        "include_private": False,
        "federation_hop": 0,
    },
    "query_agent_memory": {
        "agent": "required",
        "topic": "required",
        "access_level": "public",
        "include_private": False,
    },
    "get_cross_agent_summary": {
        "project": "required",
        "access_level": "public",
        "include_private": False,
        "federation_hop": 0,
    },
    "list_recent_work": {
        "since": None,
        "agent": None,
        "access_level": "public",
        "include_private": False,
        "limit": None,
        "cursor": None,
        "summary": False,
        "federation_hop": 0,
    },
    "list_workstreams": {
        "status": None,
        "agent": None,
        "access_level": "public",
        "include_private": False,
    },
    "list_notes": {
        "since": None,
        "agent": None,
        "access_level": "public",
        "include_private": False,
        "limit": None,
        "cursor": None,
    },
    "list_agents": {"federation_hop": 0},
    "export_agents": {},
}
SAMPLE_AGENTS = ["claude-code", "claude-desktop-chat", "codex", "cursor", "gemini-cli"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def sample_root(tmp_path: Path) -> Path:
    make_library(tmp_path / "lib").close()
    return tmp_path / "lib"


@pytest.fixture
async def client(sample_root: Path) -> AsyncIterator[Client]:
    async with Client(create_server(sample_root, watch=False), mode="legacy") as c:
        yield c


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def fail(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error, f"{tool} should have failed: {result.structured_content}"
    assert result.structured_content is not None
    error: dict[str, Any] = result.structured_content["error"]
    return error


def check_tools_match_the_reference(tools: list[Any]) -> None:
    by_name = {t.name: t for t in tools}
    for name, params in REFERENCE.items():
        assert name in by_name, f"{name} missing from tools/list"
        schema = by_name[name].input_schema
        props = schema.get("properties", {})
        for param, default in params.items():
            assert param in props, f"{name} lacks parameter {param}"
            if default == "required":
                assert param in schema.get("required", []), f"{name}.{param} must be required"
            else:
                assert props[param].get("default") == default, f"{name}.{param} default"
        assert set(schema.get("required", [])) == {p for p, d in params.items() if d == "required"}
        annotations = by_name[name].annotations
        assert annotations is not None and annotations.read_only_hint
        assert annotations.idempotent_hint


# -- the wire surface ------------------------------------------------------------------


async def test_tools_list_has_every_read_tool_with_the_reference_parameters(client: Client) -> None:
    tools = (await client.list_tools()).tools
    check_tools_match_the_reference(tools)
    # describe_caller is annotated like every read tool, as the reference annotates it.
    hints = next(t for t in tools if t.name == "describe_caller").annotations
    assert hints is not None
    assert (hints.read_only_hint, hints.idempotent_hint, hints.destructive_hint) == (
        True, True, False)  # fmt: skip


async def test_resources_are_listed(client: Client) -> None:
    resources = [str(r.uri) for r in (await client.list_resources()).resources]
    templates = [
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    ]
    assert resources == ["agent-library://agents"]
    assert set(templates) == {
        "agent-library://agents/{agent_id}/memory",
        "agent-library://entities/{name}",
    }


# -- each tool against the sample library ----------------------------------------------


async def test_find_entity_aggregates_an_entity_across_agents(client: Client) -> None:
    answer = await call(client, "find_entity", name="Priya Raman", access_level="team")
    top = answer["matches"][0]
    assert top["name"] == "Priya Raman" and top["match"] == "exact" and top["score"] == 100
    assert top["agents"] == ["claude-code", "claude-desktop-chat", "codex", "cursor"]
    assert top["types"] == ["person"]
    assert set(top["summaries"]) == set(top["agents"])
    assert answer["meta"]["access_level"] == "team"
    assert answer["name"] == "Priya Raman" and answer["include_private"] is False


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("bourdon", "exact"),
        ("BOURDON", "exact"),  # other case
        ("bdn", "alias"),
        ("Ledger-Line", "alias"),
        ("bourdn", "fuzzy"),  # one typo in a 7-character name
        ("burdn", "fuzzy"),  # two typos
        ("Priya Ramen", "fuzzy"),
        ("rapidfuz", "fuzzy"),
        ("ledger line", "fuzzy"),  # other punctuation
    ],
)
async def test_find_entity_finds_names_aliases_and_near_misses(
    client: Client, query: str, kind: str
) -> None:
    answer = await call(client, "find_entity", name=query, access_level="team")
    assert answer["matches"], f"nothing found for {query!r}"
    assert answer["matches"][0]["match"] == kind


@pytest.mark.parametrize("query", ["kubernetes", "Jane Doe", "quantum-flux", "zzzzzz", "bo"])
async def test_find_entity_of_an_unknown_name_finds_nothing(client: Client, query: str) -> None:
    answer = await call(client, "find_entity", name=query, access_level="team")
    assert answer["matches"] == []
    assert answer["meta"]["total_matches"] == 0


async def test_find_entity_offers_near_misses_only_when_nothing_matches_exactly(
    tmp_path: Path,
) -> None:
    library = Library.init(tmp_path / "lib")
    rows = [
        {"name": n, "visibility": "public"}
        for n in ("harbor-gateway", "harbor-gatewax", "harbour gateways")
    ]
    library.commit("a", {"agent": {"type": "other"}, "known_entities": rows})
    async with Client(create_server(library.root, watch=False)) as c:
        exact = await call(c, "find_entity", name="harbor-gateway")
        near = await call(c, "find_entity", name="harbor-gatewyy")
    assert [(m["name"], m["match"]) for m in exact["matches"]] == [("harbor-gateway", "exact")]
    assert [(m["name"], m["match"]) for m in near["matches"]] == [
        ("harbor-gateway", "fuzzy"),
        ("harbor-gatewax", "fuzzy"),
    ]
    assert near["matches"][0]["score"] >= near["matches"][1]["score"]


async def test_query_agent_memory_looks_in_one_agent_only(client: Client) -> None:
    answer = await call(
        client, "query_agent_memory", agent="codex", topic="ledgerline", access_level="team"
    )
    assert answer["agent"] == "codex"
    assert [m["agents"] for m in answer["matches"]] == [["codex"]]
    error = await fail(client, "query_agent_memory", agent="nobody", topic="x")
    assert error["status"] == 404 and "known agents" in error["message"]


async def test_cross_agent_summary_gathers_agents_sessions_and_entities(client: Client) -> None:
    answer = await call(
        client, "get_cross_agent_summary", project="ledgerline", access_level="team"
    )
    assert answer["project"] == "ledgerline"
    assert {"claude-code", "codex", "cursor"} <= set(answer["agents"])
    assert answer["entities"][0]["name"] == "ledgerline"
    dates = [s["date"] for s in answer["recent_sessions"]]
    assert dates == sorted(dates, reverse=True) and dates
    assert all(
        "ledgerline" in [f.lower() for f in s["project_focus"]] for s in answer["recent_sessions"]
    )
    assert any(w["name"] == "OFX import" for w in answer["workstreams"])


async def test_cross_agent_summary_is_paginated(client: Client) -> None:
    first = await call(
        client, "get_cross_agent_summary", project="ledgerline", access_level="team", limit=2
    )
    assert len(first["recent_sessions"]) == 2 and first["has_more"]
    second = await call(
        client,
        "get_cross_agent_summary",
        project="ledgerline",
        access_level="team",
        limit=2,
        cursor=first["next_cursor"],
    )
    assert first["recent_sessions"][-1]["date"] >= second["recent_sessions"][0]["date"]
    assert first["recent_sessions"] != second["recent_sessions"]


async def test_list_recent_work_pages_newest_first(client: Client) -> None:
    answer = await call(
        client, "list_recent_work", since="2026-11-01", access_level="team", limit=3
    )
    assert len(answer["sessions"]) == 3 and answer["has_more"] and answer["next_cursor"]
    assert [s["date"] for s in answer["sessions"]] == sorted(
        (s["date"] for s in answer["sessions"]), reverse=True
    )
    assert set(answer["sessions"][0]) >= {
        "agent",
        "date",
        "cwd",
        "project_focus",
        "key_actions",
        "files_touched",
    }
    short = await call(client, "list_recent_work", since="2026-11-01", summary=True)
    assert all("key_actions" not in s and "files_touched" not in s for s in short["sessions"])


async def test_list_recent_work_defaults_to_a_14_day_window(client: Client) -> None:
    answer = await call(client, "list_recent_work", access_level="team")
    applied = answer["meta"]["since_applied"]
    assert all(s["date"] >= applied for s in answer["sessions"])
    assert answer["meta"]["limit"] == 20


async def test_list_recent_work_clamps_the_limit(client: Client) -> None:
    answer = await call(client, "list_recent_work", since="2000-01-01", limit=1000)
    assert answer["meta"]["limit"] == 100
    answer = await call(client, "list_recent_work", since="2000-01-01", limit=0)
    assert answer["meta"]["limit"] == 1 and len(answer["sessions"]) == 1


async def test_list_workstreams_dedupes_by_name_and_filters_status(client: Client) -> None:
    answer = await call(client, "list_workstreams", access_level="team")
    names = [w["name"].lower() for w in answer["workstreams"]]
    assert len(names) == len(set(names)) and names
    done = await call(client, "list_workstreams", status="done", access_level="team")
    assert done["workstreams"] and all(w["status"] == "done" for w in done["workstreams"])
    error = await fail(client, "list_workstreams", status="finished")
    assert error["status"] == 400 and "active, paused, done, archived" in error["message"]


async def test_list_notes_pages_like_recent_work(client: Client) -> None:
    answer = await call(client, "list_notes", since="2026-10-01", access_level="team", limit=2)
    assert len(answer["notes"]) == 2 and answer["has_more"]
    assert set(answer["notes"][0]) == {"agent", "date", "text", "related_entities", "tags"}


async def test_list_agents_and_export_agents(client: Client) -> None:
    assert (await call(client, "list_agents"))["agents"] == SAMPLE_AGENTS
    export = await call(client, "export_agents")
    assert export["schema"] == "bourdon.agents/v1"
    assert {a["id"] for a in export["agents"]} == set(SAMPLE_AGENTS)
    assert all(
        a["source_kind"] == "local" and a["source"] == export["machine"] for a in export["agents"]
    )
    assert all(r["visibility"] != "private" for a in export["agents"] for r in a["recent_activity"])


async def test_resources_answer_at_public(client: Client) -> None:
    agents = json.loads((await client.read_resource("agent-library://agents")).contents[0].text)
    assert agents == SAMPLE_AGENTS
    memory = json.loads(
        (await client.read_resource("agent-library://agents/codex/memory")).contents[0].text
    )
    assert memory["agent"]["id"] == "codex"
    assert all(row.get("visibility") == "public" for row in memory["known_entities"])
    missing = json.loads(
        (await client.read_resource("agent-library://agents/nobody/memory")).contents[0].text
    )
    assert missing["error"]["status"] == 404
    entity = json.loads(
        (await client.read_resource("agent-library://entities/rapidfuzz")).contents[0].text
    )
    assert entity and entity[0]["name"] == "rapidfuzz"


# -- errors ------------------------------------------------------------------------------


async def test_turn_start_answers_carry_the_reference_keys(tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    library.commit("a", {"agent": {"type": "other"},
                         "known_entities": [{"name": "harbor-gateway", "summary": "the gate",
                                             "visibility": "public"}],
                         "recent_sessions": [{"date": "2026-11-30", "cwd": "/src/harbor",
                                              "project_focus": ["harbor-gateway"],
                                              "key_actions": ["moved the gate"]}]})  # fmt: skip
    async with Client(create_server(library.root, watch=False)) as c:

        async def bucket(prompt: str) -> tuple[str, list[str]]:
            answer = await call(c, "prepare_recognition_context", prompt=prompt)
            assert (answer["hydration"], answer["hydration_chars"]) == ("", 0)
            return answer["confidence"], [m["confidence"] for m in answer["matched_entities"]]

        # The reference's buckets: the prompt is the name, mentions it, or names a near miss.
        assert await bucket("harbor-gateway") == ("high", ["high"])
        assert await bucket("what broke in harbor-gateway today") == ("medium", ["medium"])
        # A near miss of a name of common words counts only capitalised, as a proper noun.
        assert await bucket("what broke in Harbor-Gatewya today") == ("low", ["low"])
        assert await bucket("nothing known here") == ("none", [])

        deeper = await call(c, "get_deeper_context", prompt="fix harbor-gateway")
        assert deeper["reason"] == "" and deeper["context_chars"] == len(deeper["context"])
        assert deeper["context"].splitlines() == [
            "## harbor-gateway (topic)", "known by: a", "- (a) the gate",
            "- session 2026-11-30 (a): moved the gate"]  # fmt: skip
        empty = await call(c, "get_deeper_context", prompt="nothing known here")
        assert (empty["context"], empty["context_chars"]) == ("", 0) and empty["reason"]

        brief = await call(c, "compile_codex_turn", prompt="fix harbor-gateway", cwd="/src/harbor")
        assert brief["repo"] == {"name": "harbor", "root": None, "remote": None}
        (item,) = brief["items"]
        assert (item["rank"], item["score"], item["source"], item["source_agents"]) == (
            1, 100.0 + 2.0, "local", ["a"])  # fmt: skip
        assert item["reason"] == item["why"] == "named in the prompt"
        assert item["evidence"] == ["known by a"]
        assert (await call(c, "describe_caller"))["version"] == 1


@pytest.mark.parametrize(
    ("tool", "args", "status", "says"),
    [
        ("find_entity", {"name": "  "}, 400, "name is empty"),
        ("find_entity", {"name": "x", "access_level": "admin"}, 400, "public, team, private"),
        ("list_recent_work", {"cursor": "not-a-cursor"}, 400, "next_cursor"),
        ("list_recent_work", {"since": "yesterday"}, 400, "ISO date"),
        ("list_recent_work", {"agent": "ghost"}, 404, "no agent 'ghost'"),
        ("list_notes", {"agent": "../etc"}, 400, "not a slug"),
        ("get_cross_agent_summary", {"project": ""}, 400, "project is empty"),
        ("list_notes", {"cursor": "eyJ2IjoxfQ"}, 400, "next_cursor"),
    ],
)
async def test_bad_input_is_a_tool_error_saying_what_to_send(
    client: Client, tool: str, args: dict[str, Any], status: int, says: str
) -> None:
    error = await fail(client, tool, **args)
    assert error["status"] == status
    assert says in error["message"]
    assert error["retryable"] is False


async def test_a_cursor_of_one_list_is_refused_by_another(client: Client) -> None:
    page = await call(client, "list_recent_work", since="2000-01-01", limit=1)
    error = await fail(client, "list_notes", cursor=page["next_cursor"])
    assert error["status"] == 400


# -- freshness ---------------------------------------------------------------------------


def bourdon(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bourdon", "--library", str(root), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_writes_by_another_process_are_visible_on_the_next_call(sample_root: Path) -> None:
    async with Client(create_server(sample_root, watch=False)) as c:
        before = await call(c, "find_entity", name="tidewater", access_level="team")
        assert before["matches"] == []
        done = bourdon(
            sample_root,
            "commit",
            "codex",
            "--file",
            "-",
            stdin="known_entities:\n  - name: tidewater\n    visibility: team\n",
        )
        assert done.returncode == 0, done.stderr
        after = await call(c, "find_entity", name="tidewater", access_level="team")
        assert after["matches"][0]["agents"] == ["codex"]

        version = Library.open(sample_root).history("codex")[1].version_id
        done = bourdon(sample_root, "rollback", "codex", version)
        assert done.returncode == 0, done.stderr
        gone = await call(c, "find_entity", name="tidewater", access_level="team")
        assert gone["matches"] == []


async def test_an_invalid_manifest_is_skipped_with_a_warning_and_the_rest_serves(
    sample_root: Path,
) -> None:
    async with Client(create_server(sample_root, watch=True)) as c:
        await call(c, "list_agents")
        (sample_root / "agents" / "cursor.l5.yaml").write_text("agent: [broken\n", encoding="utf-8")
        answer = await _eventually(c, "list_agents", lambda a: "cursor" not in a["agents"])
        assert answer["agents"] == [a for a in SAMPLE_AGENTS if a != "cursor"]
        assert any("agents/cursor.l5.yaml skipped" in w for w in answer["meta"]["warnings"])
        found = await call(c, "find_entity", name="Priya Raman", access_level="team")
        assert "cursor" not in found["matches"][0]["agents"]
        assert found["matches"][0]["agents"]

        (sample_root / "agents" / "stray.l5.yaml").write_bytes(b"\xff\xfe not yaml")
        answer = await call(c, "list_agents")
        assert any("stray.l5.yaml skipped" in w for w in answer["meta"]["warnings"])


async def _eventually(c: Client, tool: str, ready: Any, **args: Any) -> dict[str, Any]:
    """In-place edits are seen through the file watcher: allow it a moment (bounded)."""
    deadline = time.monotonic() + 5
    while True:
        answer = await call(c, tool, **args)
        if ready(answer) or time.monotonic() > deadline:
            return answer
        await _sleep(0.02)


async def _sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


async def test_a_shared_index_serves_what_the_library_writes(tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    index = Index(library.root)
    async with Client(create_server(library.root, index=index, watch=False)) as c:
        assert (await call(c, "list_agents"))["agents"] == []
        library.commit(
            "notes-bot",
            {"agent": {"type": "note-capture"}, "notes": [{"date": "2026-11-30", "text": "hello"}]},
            provenance=Provenance(caller="test"),
        )
        assert (await call(c, "list_agents"))["agents"] == ["notes-bot"]
        notes = await call(c, "list_notes", since="2026-11-01", access_level="team")
        assert [n["text"] for n in notes["notes"]] == ["hello"]


# -- pagination --------------------------------------------------------------------------


async def test_walking_next_cursor_returns_every_visible_session_once(tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    expected = set()
    for a in range(3):
        rows = []
        for i in range(40):
            day = f"2026-{1 + (i * 7 + a) % 11:02d}-{1 + (i * 5) % 28:02d}"
            visibility = ("public", "team", "private")[(i + a) % 3]
            rows.append(
                {
                    "date": day,
                    "cwd": f"/src/p{i % 4}",
                    "session_id": f"s{a}-{i}",
                    "visibility": visibility,
                }
            )
            if visibility != "private":
                expected.add((f"agent{a}", f"s{a}-{i}"))
        library.import_manifest(
            _dump(manifest(f"agent{a}", recent_sessions=rows)), what=f"agent{a}"
        )
    async with Client(create_server(library.root, watch=False)) as c:
        seen: list[tuple[str, str]] = []
        dates: list[str] = []
        cursor = None
        for _ in range(100):
            page = await call(
                c,
                "list_recent_work",
                since="2000-01-01",
                access_level="team",
                limit=7,
                cursor=cursor,
            )
            seen += [(s["agent"], s["session_id"]) for s in page["sessions"]]
            dates += [s["date"] for s in page["sessions"]]
            if not page["has_more"]:
                assert page["next_cursor"] is None
                break
            cursor = page["next_cursor"]
    assert len(seen) == len(set(seen)) == len(expected)
    assert set(seen) == expected
    assert dates == sorted(dates, reverse=True)


def _dump(data: dict[str, Any]) -> bytes:
    from bourdon.formats import yamlio

    return yamlio.dump(data)


# -- transports --------------------------------------------------------------------------


async def test_the_server_answers_over_stdio(sample_root: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bourdon", "--library", str(sample_root), "serve"],
        env=child_env(tmp_path),
    )
    async with Client(params) as c:
        check_tools_match_the_reference((await c.list_tools()).tools)
        answer = await call(c, "find_entity", name="bdn", access_level="team")
        assert answer["matches"][0]["name"] == "bourdon"
        error = await fail(c, "find_entity", name="")
        assert error["status"] == 400


@pytest.fixture
def http_server(sample_root: Path, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A real `bourdon serve --transport http` on 127.0.0.1, and a trusted member's token."""
    from bourdon.access.trust import MemberRegistry

    token = MemberRegistry(tmp_path / ".bourdon").add("laptop", "trusted")
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bourdon",
            "--library",
            str(sample_root),
            "serve",
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        env=child_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(proc, port)
        yield f"http://127.0.0.1:{port}/mcp", token
    finally:
        stop_process(proc)


@contextlib.asynccontextmanager
async def http_client(url: str, token: str) -> AsyncIterator[Client]:
    """An MCP client over streamable HTTP that sends a bearer token (and closes its socket)."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers) as hc,
        Client(streamable_http_client(url, http_client=hc)) as client,
    ):
        yield client


async def test_the_server_answers_over_streamable_http(http_server: tuple[str, str]) -> None:
    url, token = http_server
    async with http_client(url, token) as c:
        check_tools_match_the_reference((await c.list_tools()).tools)
        answer = await call(c, "get_cross_agent_summary", project="bourdon", access_level="team")
        assert "claude-code" in answer["agents"]
        error = await fail(c, "list_recent_work", agent="ghost")
        assert error["status"] == 404
        me = await call(c, "describe_caller")
        assert (me["member_id"], me["tier"], me["transport"]) == ("laptop", "trusted", "http")


def test_serve_prints_how_to_connect_on_stderr_never_stdout(
    sample_root: Path, tmp_path: Path
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bourdon", "--library", str(sample_root), "serve"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(tmp_path),
        check=False,
    )
    assert proc.stdout == ""
    assert "5 agents" in proc.stderr and f'"command": {json.dumps(sys.executable)}' in proc.stderr
    assert str(sample_root) in proc.stderr


def test_serve_refuses_a_folder_that_is_not_a_library(tmp_path: Path) -> None:
    done = bourdon(tmp_path / "nothing", "serve")
    assert done.returncode == 7
    assert "bourdon init" in done.stderr
