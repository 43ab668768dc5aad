"""Peers both ways with the reference implementation, over streamable HTTP on 127.0.0.1.

(a) A reference server, on a library it wrote itself, is a peer of ``bourdon serve
    --transport http --peer ref=URL``: its rows reach our find_entity (at team and at
    public), list_agents and prepare_recognition_context tagged ``peer:ref:<agent>``. The
    reference marks no row with a ``visibility``; such a row is taken at the level it was
    asked for, so its public rows reach a public-level answer and its team rows do not.
(b) Our server is a peer of the reference (``--peer <our URL>``, our member token in
    ``BOURDON_PEER_TOKEN``): the same three tools on the reference show our rows tagged with
    the name the reference gives a peer, which is its URL.

Private rows on either side carry canaries that no answer may ever hold.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from bourdon.federation.client import MAX_ANSWER_BYTES, Federation, answer_payload
from bourdon.federation.peers import Peer
from bourdon.formats import yamlio
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest
from bourdon.testing.serving import child_env
from tests.interop.harness import Reference, call, http_client, serve_ours

pytestmark = pytest.mark.anyio

REF_CANARY = "CANARY-REF-PRIVATE-41d7"
OUR_CANARY = "CANARY-OURS-PRIVATE-8e2a"
PROMPT = "Back on Ledgerline and Quillmark, using Ourwidget; see Hushref and Hushours"

# What the reference's library holds, written through its own commit_to_federation.
REF_ROWS: list[dict[str, Any]] = [
    {
        "agent_id": "ref-alpha",
        "agent_type": "code-assistant",
        "entities": [
            {
                "name": "Ledgerline",
                "type": "project",
                "summary": "alpha: team notes on ledgers",
                "visibility": "team",
            },
            {
                "name": "Quillmark",
                "type": "project",
                "summary": "alpha: quill is public",
                "visibility": "public",
            },
            {"name": "Hushref", "type": "topic", "summary": REF_CANARY, "visibility": "private"},
        ],
    },
    {
        "agent_id": "ref-beta",
        "agent_type": "other",
        "entities": [
            {
                "name": "Ledgerline",
                "type": "project",
                "summary": "beta: the public ledger view",
                "visibility": "public",
            },
        ],
    },
    {
        "agent_id": "ref-gamma",
        "agent_type": "other",
        "entities": [
            {
                "name": "Ledgerline",
                "type": "project",
                "summary": REF_CANARY,
                "visibility": "private",
            },
        ],
    },
]


def write_our_library(root: Path) -> Path:
    """``our-code``: a team row on the shared entity, a public one only we know; ``our-diary``:
    private rows, each with our canary."""
    code = manifest(
        "our-code",
        known_entities=[
            {
                "name": "Ledgerline",
                "type": "project",
                "summary": "ours: team view of ledgers",
                "visibility": "team",
            },
            {
                "name": "Ourwidget",
                "type": "library",
                "summary": "ours: a public widget",
                "visibility": "public",
            },
        ],
    )
    diary = manifest(
        "our-diary",
        "other",
        known_entities=[
            {
                "name": "Ledgerline",
                "type": "project",
                "summary": OUR_CANARY,
                "visibility": "private",
            },
            {"name": "Hushours", "type": "topic", "summary": OUR_CANARY, "visibility": "private"},
        ],
    )
    with Library.init(root) as library:
        for data in (code, diary):
            library.import_manifest(
                yamlio.dump(data), what=data["agent"]["id"], provenance=Provenance(caller="fixture")
            )
    return root


async def _write_reference_library(reference: Reference, library: Path, home: Path) -> None:
    async with Client(reference.stdio(library, home)) as client:
        for rows in REF_ROWS:
            written = await call(client, "commit_to_federation", **rows)
            assert written.get("entities_added") == len(rows["entities"]), written


def ours(*args: str, home: Path) -> str:
    """``bourdon ARGS`` (ours) in a child process with ``home`` as its home; its stdout."""
    done = subprocess.run(
        [sys.executable, "-m", "bourdon", *args],
        env=child_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def enrol(home: Path, name: str, *flags: str) -> str:
    """Enrol a trusted member of our server; its token."""
    out = json.loads(ours("member", "add", name, "--tier", "trusted", *flags, "--json", home=home))
    token = out["token"]
    assert isinstance(token, str) and token.startswith("bdn_")
    return token


@dataclass(frozen=True)
class World:
    ref_url: str  # the reference, with our server as its peer (b)
    ref_token: str  # a trusted member of the reference, for the test's own client
    our_url: str  # our server, with the reference as its peer "ref" (a)
    our_token: str  # a trusted member of ours, for the test's own client
    our_peer_url: str  # our server the reference asks: the name it tags our rows with


@pytest.fixture(scope="module")
def world(reference: Reference, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """Two reference servers and two of ours on 127.0.0.1, each direction on its own pair:
    a server that asks is never the one that is asked, so no answer is federated twice."""
    base = tmp_path_factory.mktemp("peers-both-ways")
    ref_lib, ref_home = base / "ref-lib", base / "ref-home"
    our_lib, our_home = base / "our-lib", base / "our-home"
    ref_home.mkdir()
    our_home.mkdir()
    anyio.run(_write_reference_library, reference, ref_lib, ref_home)
    write_our_library(our_lib)
    member_for_ours = reference.add_member(ref_home, "our-server", "trusted")
    ref_token = reference.add_member(ref_home, "test-client", "trusted")
    member_for_ref = enrol(our_home, "reference-server", "--peer")
    our_token = enrol(our_home, "test-client")
    with contextlib.ExitStack() as stack:
        ref_peer = stack.enter_context(reference.serve_http(ref_lib, ref_home))
        our_peer = stack.enter_context(serve_ours(our_lib, our_home))
        our_url = stack.enter_context(
            serve_ours(
                our_lib,
                our_home,
                "--peer",
                f"ref={ref_peer}",
                "--recognition-deadline",
                "10",
                "--peer-deadline",
                "20",
                BOURDON_PEER_TOKEN_REF=member_for_ours,
            )
        )
        ref_url = stack.enter_context(
            reference.serve_http(
                ref_lib, ref_home, "--peer", our_peer, BOURDON_PEER_TOKEN=member_for_ref
            )
        )
        yield World(ref_url, ref_token, our_url, our_token, our_peer)


def leaks(answer: Any) -> bool:
    text = json.dumps(answer)
    return REF_CANARY in text or OUR_CANARY in text


def by_name(matches: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {m["name"]: m for m in matches}


# -- (a) the reference is our peer ---------------------------------------------------------


async def test_a_reference_peers_rows_reach_our_find_entity_at_team_tagged(world: World) -> None:
    async with http_client(world.our_url, world.our_token) as client:
        shared = await call(client, "find_entity", name="ledgerline", access_level="team")
        only_theirs = await call(client, "find_entity", name="quillmark", access_level="team")
    assert shared["peers_responded"] == 1, shared.get("peer_errors")
    assert [m["name"] for m in shared["matches"]] == ["Ledgerline"]
    (match,) = shared["matches"]
    assert match["agents"] == ["our-code", "peer:ref:ref-alpha", "peer:ref:ref-beta"]
    assert match["summaries"] == {
        "our-code": "ours: team view of ledgers",
        "peer:ref:ref-alpha": "alpha: team notes on ledgers",
        "peer:ref:ref-beta": "beta: the public ledger view",
    }
    assert match["visibility"] == "team"
    (quill,) = only_theirs["matches"]
    assert quill["name"] == "Quillmark"
    assert quill["agents"] == ["peer:ref:ref-alpha"]
    assert quill["summaries"] == {"peer:ref:ref-alpha": "alpha: quill is public"}
    # Unmarked by the reference, asked at team: taken at team, never above.
    assert quill["visibility"] == "team"
    assert not leaks(shared) and not leaks(only_theirs)


async def test_a_reference_peers_public_rows_reach_a_public_find_entity(world: World) -> None:
    async with http_client(world.our_url, world.our_token) as client:
        shared = await call(client, "find_entity", name="ledgerline", access_level="public")
        only_theirs = await call(client, "find_entity", name="quillmark")  # public by default
    assert shared["peers_responded"] == 1, shared.get("peer_errors")
    # Our Ledgerline row is team and the reference's alpha row is team: only beta's is public.
    (match,) = shared["matches"]
    assert match["agents"] == ["peer:ref:ref-beta"]
    assert match["summaries"] == {"peer:ref:ref-beta": "beta: the public ledger view"}
    assert match["visibility"] == "public"
    (quill,) = only_theirs["matches"]
    assert (quill["agents"], quill["visibility"]) == (["peer:ref:ref-alpha"], "public")
    assert "alpha: team notes" not in json.dumps(shared)
    assert not leaks(shared) and not leaks(only_theirs)


async def test_a_reference_peers_agents_join_our_list_agents(world: World) -> None:
    async with http_client(world.our_url, world.our_token) as client:
        listed = await call(client, "list_agents")
    assert listed["peers_responded"] == 1, listed.get("peer_errors")
    # Untagged, as the wire contract says of list_agents (provenance is in the other tools).
    assert listed["agents"] == ["our-code", "our-diary", "ref-alpha", "ref-beta", "ref-gamma"]


async def test_a_reference_peers_matches_join_our_recognition_tagged(world: World) -> None:
    async with http_client(world.our_url, world.our_token) as client:
        team = await call(client, "prepare_recognition_context", prompt=PROMPT)
        public = await call(
            client, "prepare_recognition_context", prompt=PROMPT, access_level="public"
        )
    assert team["peers_responded"] == 1, team.get("peer_errors")
    found = by_name(team["matched_entities"])
    assert set(found) == {"Ledgerline", "Quillmark", "Ourwidget"}
    expected = ["our-code", "peer:ref:ref-alpha", "peer:ref:ref-beta"]
    assert found["Ledgerline"]["source_agents"] == expected
    assert found["Ledgerline"]["agents"] == expected
    assert found["Quillmark"]["source_agents"] == ["peer:ref:ref-alpha"]
    assert found["Quillmark"]["visibility"] == "team"
    assert "[bourdon:peer:ref:ref-alpha] Quillmark (project)" in team["prompt_context"].split("\n")
    assert public["peers_responded"] == 1, public.get("peer_errors")
    found = by_name(public["matched_entities"])
    assert set(found) == {"Ledgerline", "Quillmark", "Ourwidget"}
    assert found["Ledgerline"]["source_agents"] == ["peer:ref:ref-beta"]
    assert found["Quillmark"]["source_agents"] == ["peer:ref:ref-alpha"]
    assert not leaks(team) and not leaks(public)


# -- (b) we are the reference's peer -------------------------------------------------------


async def test_our_rows_reach_the_reference_find_entity_tagged(world: World) -> None:
    ours_tag = f"peer:{world.our_peer_url}:our-code"
    async with http_client(world.ref_url, world.ref_token) as client:
        team = await call(client, "find_entity", name="ledgerline", access_level="team")
        public = await call(client, "find_entity", name="ledgerline")  # the reference: public
        only_ours = await call(client, "find_entity", name="ourwidget")
    assert team["matches"] == [
        {
            "name": "Ledgerline",
            "agents": ["ref-alpha", "ref-beta", ours_tag],
            "types": ["project"],
            "summaries": {
                "ref-alpha": "alpha: team notes on ledgers",
                "ref-beta": "beta: the public ledger view",
                ours_tag: "ours: team view of ledgers",
            },
            "tags": [],
        }
    ]
    # At public the reference asks us at public: our team row stays home.
    assert [m["agents"] for m in public["matches"]] == [["ref-beta"]]
    assert only_ours["matches"] == [
        {
            "name": "Ourwidget",
            "agents": [ours_tag],
            "types": ["library"],
            "summaries": {ours_tag: "ours: a public widget"},
            "tags": [],
        }
    ]
    assert not leaks(team) and not leaks(public) and not leaks(only_ours)


async def test_our_agents_join_the_reference_list_agents(world: World) -> None:
    async with http_client(world.ref_url, world.ref_token) as client:
        listed = await call(client, "list_agents")
    assert listed == {"agents": ["our-code", "our-diary", "ref-alpha", "ref-beta", "ref-gamma"]}


async def test_our_matches_join_the_reference_recognition_tagged(world: World) -> None:
    ours_tag = f"peer:{world.our_peer_url}:our-code"
    async with http_client(world.ref_url, world.ref_token) as client:
        await call(client, "find_entity", name="ourwidget")  # the reference's client warmed up
        # The reference gives a peer 200 ms here, a figure it does not let anyone change; a
        # busy machine can miss it, so a few tries (each one real call, never a wait).
        for _ in range(3):
            answer = await call(client, "prepare_recognition_context", prompt=PROMPT)
            if answer["peers_responded"] == 1:
                break
    assert answer["peers_responded"] == 1, answer["peer_latencies_us"]
    found = {m["name"]: m for m in answer["matched_entities"]}
    assert set(found) == {"Ledgerline", "Quillmark", "Ourwidget"}
    assert found["Ledgerline"]["source_agents"] == ["ref-alpha", "ref-beta", ours_tag]
    assert found["Ourwidget"]["source_agents"] == [ours_tag]
    assert found["Ourwidget"]["type"] == "library"
    assert f"[peer:{world.our_peer_url}] " in answer["prompt_context"]
    assert not leaks(answer)


# -- how a peer's answer is read -----------------------------------------------------------


def test_an_answer_sent_only_as_json_text_is_read_like_structured_content() -> None:
    """What the reference's own peer client reads, and what servers without structured
    content send: the JSON object in the text content."""
    from mcp.types import CallToolResult, TextContent

    rows = {"matches": [{"name": "Quillmark", "agents": ["ref-alpha"]}]}
    text_only = CallToolResult(content=[TextContent(type="text", text=json.dumps(rows))])
    assert answer_payload(text_only) == rows
    both = CallToolResult(content=[TextContent(type="text", text="{}")], structured_content=rows)
    assert answer_payload(both) == rows
    for refused in (
        CallToolResult(content=[TextContent(type="text", text="not json")]),
        CallToolResult(content=[TextContent(type="text", text='["a", "list"]')]),
        CallToolResult(content=[TextContent(type="text", text='{"error": "stale write"}')]),
        CallToolResult(content=[TextContent(type="text", text=json.dumps(rows))], is_error=True),
    ):
        with pytest.raises(RuntimeError, match="peer answered an error"):
            answer_payload(refused)


async def test_a_peer_answer_over_the_byte_budget_is_dropped_not_read(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    """The reference answers over SSE, ours with JSON bodies: both are cut at the budget, and
    the server log says why (over SSE the SDK only says the stream ended)."""
    asked = {"name": "ledgerline", "access_level": "team", "federation_hop": 1}
    for url, token in ((world.ref_url, world.ref_token), (world.our_url, world.our_token)):
        for budget, answers in ((MAX_ANSWER_BYTES, True), (512, False)):
            caplog.clear()
            federation = Federation([Peer("p", url)], {"p": token}, max_answer_bytes=budget)
            try:
                (answer,) = await federation.ask("find_entity", asked, 20.0)
            finally:
                await federation.aclose()
            assert (answer.payload is not None) is answers, (url, budget, answer.error)
            said = [r.getMessage() for r in caplog.records if r.name == "bourdon.federation"]
            if answers:
                assert [m["name"] for m in answer.payload["matches"]] == ["Ledgerline"]
                assert said == []
            else:
                assert answer.error and not answer.timed_out, answer
                assert said and all(f"from {url} was over 512 bytes" in m for m in said), said
