"""Moving from the reference: a library and a member registry the real bourdon 0.32.2 wrote are
taken over by ``bourdon init`` and ``bourdon member import`` without losing a row or a token.

The reference writes a library over MCP (stdio): 2 agents, 3 commits, a rollback; a quarantined
member stages a write over its HTTP server. Then our ``bourdon init`` adopts the folder and our
server answers from it, and the tokens the reference enrolled authenticate against our HTTP
server, before and after ``bourdon member import``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
import yaml
from mcp import Client

from bourdon.serve.server import create_server
from bourdon.store.library import Library
from tests.interop.harness import Reference, call, http_client, serve_ours

pytestmark = pytest.mark.anyio


@dataclass
class Adopted:
    library: Path
    home: Path  # the reference's home: .bourdon/federation.yaml is its registry
    tokens: dict[str, str]
    reference_versions: dict[str, int]  # list_memory_versions' count, as the reference said
    provenance: dict[str, list[dict[str, Any]]]  # its provenance lines, read before adoption
    staged: dict[str, Any]  # the reference's answer to the quarantined member's commit
    init: subprocess.CompletedProcess[str]


def ours(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """Our ``bourdon ARGS`` in a child process, with ``home`` as its home."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "BOURDON_HOME": str(home / ".bourdon")}
    return subprocess.run(
        [sys.executable, "-m", "bourdon", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


async def write_with_the_reference(reference: Reference, library: Path, home: Path) -> Adopted:
    tokens = {
        "laptop": reference.add_member(home, "laptop", "trusted"),
        "guest": reference.add_member(home, "guest", "quarantined"),
        "reader": reference.add_member(home, "reader", "trusted"),
    }
    reference.run("agent", "set-access", "reader", "public", home=home)
    async with Client(reference.stdio(library, home)) as client:
        await call(
            client,
            "commit_to_federation",
            agent_id="alpha-agent",
            agent_type="code-assistant",
            entities=[
                {"name": "Ledgerline", "type": "project", "summary": "books", "visibility": "team"},
                {"name": "secretproj", "summary": "hidden", "visibility": "private"},
            ],
            session_id="s-1",
            transcript_ref="t/1.jsonl",
        )
        await call(
            client,
            "commit_to_federation",
            agent_id="beta-agent",
            agent_type="other",
            entities=[{"name": "Ledgerline", "summary": "beta view", "visibility": "public"}],
        )
        await call(
            client,
            "commit_to_federation",
            agent_id="alpha-agent",
            entities=[{"name": "Ledgerline", "summary": "books v2"}, {"name": "newthing"}],
        )
        first = (await call(client, "list_memory_versions", agent_id="alpha-agent"))["versions"]
        await call(
            client,
            "rollback_agent_memory",
            agent_id="alpha-agent",
            version_id=first[0]["version_id"],
        )
        counts = {
            agent: (await call(client, "list_memory_versions", agent_id=agent))["count"]
            for agent in ("alpha-agent", "beta-agent")
        }
    with reference.serve_http(library, home) as url:
        async with http_client(url, tokens["guest"]) as guest:
            staged = await call(
                guest,
                "commit_to_federation",
                agent_id="guest",
                agent_type="other",
                entities=[{"name": "guest idea", "visibility": "team"}],
            )
    provenance = {
        path.stem: [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for path in sorted((library / "provenance").glob("*.jsonl"))
    }
    return Adopted(
        library, home, tokens, counts, provenance, staged, ours("init", str(library), home=home)
    )


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def adopted(reference: Reference, tmp_path_factory: pytest.TempPathFactory) -> Adopted:
    base = tmp_path_factory.mktemp("adopt-reference")
    (base / "home").mkdir()
    return await write_with_the_reference(reference, base / "lib", base / "home")


async def test_bourdon_init_adopts_the_library_the_reference_wrote(adopted: Adopted) -> None:
    assert adopted.init.returncode == 0, adopted.init.stderr
    assert "Adopted the reference library" in adopted.init.stdout
    # Everything the reference wrote is read as it is: not one file or row is reported.
    assert "warning" not in (adopted.init.stdout + adopted.init.stderr).lower()
    assert adopted.reference_versions == {"alpha-agent": 2, "beta-agent": 0}
    with Library.open(adopted.library) as library:
        assert library.agent_ids() == ["alpha-agent", "beta-agent"]
        for agent, count in adopted.reference_versions.items():
            assert len(library.history(agent)) >= count
            # Each write the reference recorded is a version here, with its op and caller.
            ops = [(v.op, v.caller) for v in reversed(library.history(agent))]
            assert ops == [(line["op"], line["caller"]) for line in adopted.provenance[agent]]
    # One time order across agents: the order the reference's writes happened in.
    log = subprocess.run(
        ["git", "-C", str(adopted.library), "log", "--reverse", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    writes = sorted(
        (line for agent in adopted.reference_versions for line in adopted.provenance[agent]),
        key=lambda line: line["ts"],
    )
    adopted_subjects = [s for s in log if ": adopted from " in s]
    assert [s.split(" ")[:2] for s in adopted_subjects] == [
        [line["op"], line["agent_id"] + ":"] for line in writes
    ]
    moved = adopted.library / ".bourdon" / "imported"
    assert sorted(p.name for p in (moved / "versions" / "alpha-agent").iterdir()) != []
    assert (moved / "provenance" / "alpha-agent.jsonl").is_file()
    assert not (adopted.library / "versions").exists()


async def test_our_server_lists_at_least_the_references_versions(adopted: Adopted) -> None:
    server = create_server(adopted.library, watch=False, home=adopted.home)
    async with Client(server) as client:
        for agent, count in adopted.reference_versions.items():
            versions = (await call(client, "list_memory_versions", agent_id=agent))["versions"]
            assert len(versions) >= count


async def test_explain_finds_every_digest_of_the_references_provenance(adopted: Adopted) -> None:
    with Library.open(adopted.library) as library:
        for agent in adopted.reference_versions:
            for line in adopted.provenance[agent]:
                for wanted in (line["new_digest"], line["new_digest"][:8]):
                    found = library.explain(agent, wanted)
                    assert found.version.reference_digest == line["new_digest"]
    server = create_server(adopted.library, watch=False, home=adopted.home)
    async with Client(server) as client:
        for agent in adopted.reference_versions:
            for line in adopted.provenance[agent]:
                answer = await call(client, "explain_memory_change", agent_id=agent,
                                    digest=line["new_digest"][:8])  # fmt: skip
                assert answer["found"] is True
                assert answer["reference_digest"] == line["new_digest"]
                # The first write that produced the state (a rollback repeats an earlier one).
                first = next(x for x in adopted.provenance[agent]
                             if x["new_digest"] == line["new_digest"])  # fmt: skip
                assert (answer["op"], answer["caller"]) == (first["op"], first["caller"])


async def test_find_entity_at_team_returns_both_agents_rows(adopted: Adopted) -> None:
    server = create_server(adopted.library, watch=False, home=adopted.home)
    async with Client(server) as client:
        found = await call(client, "find_entity", name="ledgerline", access_level="team")
    agents = {agent for match in found["matches"] for agent in match["agents"]}
    assert {"alpha-agent", "beta-agent"} <= agents
    assert "secretproj" not in json.dumps(found)


async def test_a_commit_through_bourdon_keeps_the_references_rows_and_their_origin(
    adopted: Adopted, tmp_path: Path
) -> None:
    copy = tmp_path / "lib"
    shutil.copytree(adopted.library, copy)
    before_text = (copy / "agents" / "alpha-agent.l5.yaml").read_text(encoding="utf-8")
    before = yaml.safe_load(before_text)
    server = create_server(copy, watch=False, home=adopted.home)
    async with Client(server) as client:
        done = await call(client, "commit_to_federation", agent_id="alpha-agent",
                          entities=[{"name": "bourdon-added", "visibility": "team"}])  # fmt: skip
    assert done["entities_added"] == 1 and done["entities_updated"] == 0
    after_text = (copy / "agents" / "alpha-agent.l5.yaml").read_text(encoding="utf-8")
    after = yaml.safe_load(after_text)
    assert before["known_entities"], "the reference wrote no entity"
    for section in ("known_entities", "recent_sessions", "known_workstreams", "notes"):
        old = before.get(section) or []
        # Every row the reference wrote is still there as it wrote it, origin included.
        assert all(row in after[section] for row in old), section
        assert all(row.get("origin") == "committed" for row in old)
    assert after_text.count("origin: committed") == before_text.count("origin: committed")


async def test_the_quarantined_members_write_stays_staged(adopted: Adopted, tmp_path: Path) -> None:
    staged_file = adopted.library / "staging" / "guest" / "guest.l5.yaml"
    assert staged_file.is_file(), adopted.staged
    listed = ours("--library", str(adopted.library), "staging", "list", "--json", home=adopted.home)
    assert listed.returncode == 0, listed.stderr
    assert [(s["caller"], s["agent_id"]) for s in json.loads(listed.stdout)["staged"]] == [
        ("guest", "guest")
    ]
    # Promoted (in a copy), the rows go live and the reference's review notes do not.
    copy = tmp_path / "lib"
    shutil.copytree(adopted.library, copy)
    promoted = ours("--library", str(copy), "staging", "promote", "guest", home=adopted.home)
    assert promoted.returncode == 0, promoted.stderr
    live = (copy / "agents" / "guest.l5.yaml").read_text(encoding="utf-8")
    assert "guest idea" in live
    assert "taint_floor" not in live


@pytest.fixture(scope="module")
def our_http(adopted: Adopted) -> Iterator[str]:
    with serve_ours(adopted.library, adopted.home) as url:
        yield url


async def who(url: str, token: str) -> dict[str, Any]:
    async with http_client(url, token) as client:
        answer: dict[str, Any] = await call(client, "describe_caller")
        return answer


async def test_reference_tokens_authenticate_before_and_after_member_import(
    adopted: Adopted, our_http: str
) -> None:
    registry = adopted.home / ".bourdon" / "federation.yaml"
    original = registry.read_bytes()
    assert b"agents:" in original  # the reference's own shape, unconverted
    before = {name: await who(our_http, token) for name, token in adopted.tokens.items()}
    assert {name: seen.get("tier") for name, seen in before.items()} == {
        "laptop": "trusted",
        "guest": "quarantined",
        "reader": "trusted",
    }
    wrong = httpx2.post(
        our_http, headers={"Authorization": "Bearer bdn_" + "0" * 48}, json={}, timeout=10
    )
    assert wrong.status_code == 401

    converted = ours("member", "import", "--json", home=adopted.home)
    assert converted.returncode == 0, converted.stderr
    assert json.loads(converted.stdout)["converted"] is True
    assert (registry.parent / "federation.yaml.reference.bak").read_bytes() == original
    # The running server reads the registry again when its bytes change: same tokens, same tiers.
    after = {name: await who(our_http, token) for name, token in adopted.tokens.items()}
    assert {name: seen.get("tier") for name, seen in after.items()} == {
        "laptop": "trusted",
        "guest": "quarantined",
        "reader": "trusted",
    }


async def test_a_members_access_ceiling_set_by_the_reference_holds(
    adopted: Adopted, our_http: str
) -> None:
    async with http_client(our_http, adopted.tokens["reader"]) as client:
        found = await call(client, "find_entity", name="ledgerline", access_level="team")
    # 'reader' may read public rows only: beta's public Ledgerline, not alpha's team one.
    assert found["meta"]["access_level"] == "public"
    assert {agent for match in found["matches"] for agent in match["agents"]} == {"beta-agent"}
