"""What a member is shown of the peers: tiers and grants hold for peer rows, and no peer can
forge a line of the prompt fragment.

Real parts only: server A (``bourdon serve --transport http``) lists a real bourdon peer B and a
forging peer F (``peers_forging.py``), each a subprocess on 127.0.0.1. A's members come from its
registry: ``desk`` is quarantined with a grant of ``a-code``, ``ops`` is trusted. They call A
with the real MCP client over HTTP.

- A quarantined member is answered from A's library only, as far as its grants go: peers'
  agents are not among its namespaces (grants name this library's agents), so no peer row,
  peer agent or peer name reaches it, whatever federated tool it calls.
- Every string a peer sends that goes into ``prompt_context`` is one line: whatever line break
  a peer puts in an agent name, an entity name or a type, the fragment keeps its bounds (12
  lines, 1,200 characters) and every line is bourdon's own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bourdon.access.trust import MemberRegistry
from bourdon.formats import yamlio
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest
from bourdon.testing.serving import stop_process
from tests.support.served import HttpServer, call, member

pytestmark = pytest.mark.anyio

FORGER = Path(__file__).with_name("peers_forging.py")
SINCE = "2000-01-01"
B_CANARY = "basilisk-b-7d21"  # in B's public and team rows: only trusted members may see it
A_HIDDEN = "vaultword-a-93c4"  # in an agent of A that desk was not granted
FEDERATED: dict[str, dict[str, Any]] = {
    "find_entity": {"name": "bourdon", "access_level": "team"},
    "list_agents": {},
    "list_recent_work": {"since": SINCE, "access_level": "team", "limit": 50},
    "get_cross_agent_summary": {"project": "bourdon", "access_level": "team"},
    "prepare_recognition_context": {"prompt": f"what about bourdon and {B_CANARY}?"},
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def code_manifest(agent_id: str, word: str) -> dict[str, Any]:
    return manifest(
        agent_id,
        known_entities=[
            {"name": "bourdon", "type": "project", "summary": f"{word} knows bourdon",
             "visibility": "public"},
            {"name": word, "type": "project", "summary": f"only {word}", "visibility": "team"},
        ],
        recent_sessions=[
            {"date": "2026-11-20", "session_id": f"{word}-s", "cwd": f"/src/{word}",
             "project_focus": ["bourdon"], "key_actions": [f"{word} work"],
             "visibility": "public"},
        ],
    )


def make_library(root: Path, *manifests: dict[str, Any]) -> Path:
    with Library.init(root) as library:
        for data in manifests:
            library.import_manifest(
                yamlio.dump(data), what=data["agent"]["id"], provenance=Provenance(caller="fixture")
            )
    return root


@dataclass
class World:
    a: HttpServer
    b: HttpServer
    forger_port: int


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("peer-access")
    for name in ("a", "b"):
        (base / f"user-{name}").mkdir()
    hidden = code_manifest("a-vault", A_HIDDEN)
    a = HttpServer(
        make_library(base / "lib-a", code_manifest("a-code", "ambergris"), hidden), base / "user-a"
    )
    b = HttpServer(make_library(base / "lib-b", code_manifest("b-code", B_CANARY)), base / "user-b")
    for server in (a, b):  # generous deadlines: what is shown must not depend on the box's load
        server.args += ["--peer-deadline", "20", "--recognition-deadline", "20"]
    a.tokens["desk"] = MemberRegistry(a.home).add("desk", "quarantined", ["a-code"])
    a.tokens["ops"] = MemberRegistry(a.home).add("ops", "trusted")
    a.tokens["homebody"] = MemberRegistry(a.home).add("homebody", "trusted", keep_home=True)
    a.env["BOURDON_PEER_TOKEN_B"] = MemberRegistry(b.home).add("a", "trusted", peer=True)
    with open(base / "forger.log", "wb") as err:
        forger = subprocess.Popen([sys.executable, str(FORGER)], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=err)
    try:
        assert forger.stdout is not None
        line = forger.stdout.readline()  # the forger prints its port once bound
        assert line, (base / "forger.log").read_text()
        port = int(json.loads(line)["forging"])
        a.args += ["--peer", f"b={b.url}", "--peer", f"forge=http://127.0.0.1:{port}/mcp"]
        a.start()
        b.start()
        a.wait()
        b.wait()
        yield World(a, b, port)
    finally:
        a.stop()
        b.stop()
        stop_process(forger)


def agents_named(tool: str, answer: dict[str, Any]) -> set[str]:
    if tool in ("list_agents", "get_cross_agent_summary"):
        return set(answer["agents"])
    if tool == "find_entity":
        return {a for m in answer["matches"] for a in m["agents"]}
    if tool == "list_recent_work":
        return {s["agent"] for s in answer["sessions"]}
    return {a for m in answer["matched_entities"] for a in m["agents"]}


# -- tiers and grants hold for peer rows ----------------------------------------------------


@pytest.mark.parametrize("tool", FEDERATED)
async def test_a_quarantined_member_is_shown_no_peer_row(world: World, tool: str) -> None:
    async with member(world.a, "desk") as desk:
        answer, text = await call(desk, tool, **FEDERATED[tool])
    assert agents_named(tool, answer) == {"a-code"}  # its grant, and nothing of the peers
    for leak in (B_CANARY, "b-code", "peer:", "forge", "SYSTEM", A_HIDDEN, "a-vault",
                 str(world.b.port), str(world.forger_port)):
        assert leak not in text, (tool, leak)


@pytest.mark.parametrize("tool", FEDERATED)
async def test_a_trusted_member_is_shown_the_peers_rows(world: World, tool: str) -> None:
    async with member(world.a, "ops") as ops:
        answer, _ = await call(ops, tool, **FEDERATED[tool])
    agents = agents_named(tool, answer)
    assert ("b-code" if tool == "list_agents" else "peer:b:b-code") in agents


@pytest.mark.parametrize("tool", FEDERATED)
async def test_a_member_that_keeps_prompts_home_is_shown_no_peer_row(
    world: World, tool: str
) -> None:
    """A peer's rows come as answers, not manifests: which of them are verbatim prompts or
    instruction notes cannot be told, so none is shown to a member that keeps those home."""
    async with member(world.a, "homebody") as homebody:
        answer, text = await call(homebody, tool, **FEDERATED[tool])
    assert not {a for a in agents_named(tool, answer) if a.startswith("peer:") or a == "b-code"}
    for leak in (B_CANARY, "peer:", "SYSTEM", str(world.b.port), str(world.forger_port)):
        assert leak not in text, (tool, leak)


# -- no peer forges a line of the prompt fragment -------------------------------------------

LINE_BREAKS = {"\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"}


async def test_no_peer_string_starts_a_line_of_its_own_in_the_prompt_fragment(
    world: World,
) -> None:
    async with member(world.a, "ops") as ops:
        answer, _ = await call(ops, "prepare_recognition_context", prompt="tell me about bourdon")
    fragment = answer["prompt_context"]
    assert "peer:forge:" in fragment  # the forger's matches did join the fragment
    lines = fragment.splitlines()  # every separator a model or a client may break lines on
    assert lines == fragment.split("\n")
    assert 1 < len(lines) <= 12 and len(fragment) <= 1200
    assert answer["meta"]["truncated"] is True  # more matches than the fragment holds
    for line in lines:
        assert line.startswith("[bourdon"), line
        assert not line.startswith("[bourdon] SYSTEM"), line
        assert not any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in line), line
    assert not set(fragment) & (LINE_BREAKS - {"\n"})
