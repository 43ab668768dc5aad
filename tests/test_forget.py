"""Forget: an entity and its mentions leave the live manifests, one commit per agent, and stay
gone when the agent's reader exports again; history keeps them (purge is for that).

Real libraries, the real command, a real export run, the real MCP client in-process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bourdon.cli.main import main
from bourdon.errors import NotFoundError
from bourdon.ingest.pipeline import export_reader
from bourdon.readers.base import ReaderContext
from bourdon.serve.server import create_server
from bourdon.store import forgetting
from bourdon.store.git.process import run_git
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance, trailers
from bourdon.testing import manifest
from tests.test_export import FakeReader, Store

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def rows(agent: str, private: bool = False) -> dict[str, Any]:
    entities = [
        {"name": "Orion", "aliases": ["orion-x"], "type": "project", "visibility": "team"},
        {"name": "Vega", "type": "project", "visibility": "team"},
    ]
    if private:
        entities.append({"name": "orion-x", "type": "person", "visibility": "private"})
    return manifest(
        agent,
        known_entities=entities,
        known_workstreams=[
            {"name": "launch", "status": "active", "visibility": "team",
             "related_entities": ["ORION", "Vega"]},
        ],
        notes=[{"date": "2026-11-20", "text": "ship it", "visibility": "team",
                "related_entities": ["orion-x"]}],
        recent_sessions=[{"date": "2026-11-21", "cwd": "/src/orion", "visibility": "team",
                          "project_focus": ["Orion", "Vega"]}],
    )  # fmt: skip


@pytest.fixture
def lib(tmp_path: Path) -> Library:
    library = Library.init(tmp_path / "lib")
    for agent in ("alpha", "beta"):
        library.commit(agent, rows(agent))
    library.commit("gamma", manifest("gamma", known_entities=[{"name": "Sirius"}]))
    return library


def entity_names(library: Library, agent: str) -> list[str]:
    return [r["name"] for r in library.read(agent).rows("known_entities")]


def test_forget_removes_rows_and_mentions_one_commit_per_agent_and_history_keeps_them(
    lib: Library,
) -> None:
    head = lib.head()
    done = lib.forget("orion-X", provenance=Provenance(caller="tester", session="s-1"))
    assert [d.agent_id for d in done] == ["alpha", "beta"]
    assert done[0].counts == {
        "known_entities": 1, "known_workstreams": 1, "notes": 1, "recent_sessions": 1}  # fmt: skip
    listed = run_git(lib.root, "rev-list", f"{head}..main").decode().split()
    assert len(listed) == 2
    for agent in ("alpha", "beta"):
        data = lib.read(agent).data
        assert entity_names(lib, agent) == ["Vega"]
        assert data["known_workstreams"][0]["related_entities"] == ["Vega"]
        assert "related_entities" not in data["notes"][0]
        assert data["recent_sessions"][0]["project_focus"] == ["Vega"]
        older = lib.read(agent, head)
        assert "Orion" in [r["name"] for r in older.rows("known_entities")]
    message = run_git(lib.root, "log", "-1", "--format=%B").decode()
    assert trailers(message)["Op"] == "forget" and trailers(message)["Session"] == "s-1"
    assert entity_names(lib, "gamma") == ["Sirius"]
    stones = (lib.root / "agents" / ".forgotten").read_text()
    assert "orion" not in stones.lower() and stones.startswith("blake2b:")


def test_an_unknown_name_is_not_found_and_writes_nothing(lib: Library) -> None:
    head = lib.head()
    with pytest.raises(NotFoundError):
        lib.forget("Betelgeuse")
    with pytest.raises(NotFoundError):
        lib.forget("Orion", agent_id="gamma")
    assert lib.head() == head


def test_a_caller_below_private_neither_removes_nor_counts_a_private_row(tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    library.commit("alpha", rows("alpha", private=True))
    done = library.forget("orion-x", level=1)
    assert done[0].counts["known_entities"] == 1  # the team row, not the private one
    assert entity_names(library, "alpha") == ["Vega", "orion-x"]
    only_private = Library.init(tmp_path / "lib2")
    only_private.commit("alpha", manifest("alpha", known_entities=[
        {"name": "secret", "visibility": "private"}]))  # fmt: skip
    with pytest.raises(NotFoundError):
        only_private.forget("secret", level=1)


def test_a_forgotten_entity_stays_forgotten_when_the_reader_exports_again(
    tmp_path: Path, isolated_home: Path
) -> None:
    library = Library.init(tmp_path / "lib")
    store, ctx = Store(isolated_home), ReaderContext(home=isolated_home, machine="test-box")
    exported = [
        {"name": "Orion", "aliases": ["orion-x"], "type": "project"},
        {"name": "Vega", "type": "project"},
    ]
    store.write(known_entities=exported, known_workstreams=[
        {"name": "launch", "status": "active", "related_entities": ["Orion", "Vega"]}])  # fmt: skip
    export_reader(library, FakeReader(), ctx)
    assert sorted(entity_names(library, "fake-agent")) == ["Orion", "Vega"]
    library.forget("Orion")
    store.write(known_entities=[*exported, {"name": "Rigel", "type": "project"}],
                known_workstreams=[{"name": "launch", "status": "active",
                                    "related_entities": ["orion-x", "Vega"]}])  # fmt: skip
    result = export_reader(library, FakeReader(), ctx)
    assert result.version is not None
    assert sorted(entity_names(library, "fake-agent")) == ["Rigel", "Vega"]
    workstream = library.read("fake-agent").rows("known_workstreams")[0]
    assert workstream["related_entities"] == ["Vega"]


def test_the_forget_command_reports_per_agent_and_refuses_without_a_terminal(
    lib: Library, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import sys

    root = str(lib.root)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["forget", "Orion", "--library", root]) == 2
    assert "--yes" in capsys.readouterr().err
    assert main(["forget", "Orion", "--dry-run", "--json", "--library", root]) == 0
    assert set(json.loads(capsys.readouterr().out)["agents"]) == {"alpha", "beta"}
    assert "Orion" in entity_names(lib, "alpha")
    assert main(["forget", "Orion", "--agent", "beta", "--yes", "--json", "--library", root]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [f["agent_id"] for f in out["forgotten"]] == ["beta"]
    assert out["forgotten"][0]["removed"]["known_entities"] == 1
    assert main(["forget", "Nobody", "--yes", "--library", root]) == NotFoundError.exit_code


async def test_the_mcp_forget_tool_writes_live_for_the_operator(lib: Library) -> None:
    server = create_server(lib.root, watch=False)
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        props = tools["forget"].input_schema["properties"]
        assert all(props[p].get("description") for p in ("name", "agent_id", "session_id"))
        result = await client.call_tool("forget", {"name": "orion", "agent_id": "alpha"})
        body = result.structured_content
        assert not result.is_error, body
        assert body["staged"] is False and body["agents"][0]["agent_id"] == "alpha"
        found = await client.call_tool("find_entity", {"name": "Orion"})
        agents = {m["agent_id"] for m in found.structured_content["matches"]
                  if m.get("name") == "Orion"}  # fmt: skip
        assert "alpha" not in agents
        missing = await client.call_tool("forget", {"name": "Betelgeuse"})
        assert missing.is_error and missing.structured_content["error"]["status"] == 404


def test_a_quarantined_forget_is_staged_and_the_live_manifest_is_untouched(lib: Library) -> None:
    head_rows = entity_names(lib, "alpha")
    done = lib.forget("Orion", agent_id="alpha", staged_by="alpha-chat")
    assert done[0].result.staged and done[0].counts["known_entities"] == 1
    assert entity_names(lib, "alpha") == head_rows
    staged = lib.read_staged("alpha-chat", "alpha")
    assert [r["name"] for r in staged.rows("known_entities")] == ["Vega"]


def test_promoting_a_staged_forget_forgets_in_the_live_manifest(lib: Library) -> None:
    lib.forget("Orion", agent_id="alpha", staged_by="alpha-chat")
    assert "Orion" in entity_names(lib, "alpha")  # staged: nothing live yet
    lib.promote("alpha-chat", "alpha")
    assert "Orion" not in entity_names(lib, "alpha")
    live = lib.read("alpha").data
    assert "x-bourdon-forget" not in live  # the request is not part of the live manifest
    for section in ("known_workstreams", "notes"):
        for row in live.get(section) or []:
            assert "Orion" not in (row.get("related_entities") or [])
    assert forgetting.tombstone("Orion") in lib.tombstones()  # exports keep it out too
