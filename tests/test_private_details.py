"""Details that are not rows, and still must not leave: values in warnings, the server's paths,
counts of hidden rows in history subjects.

One real ``bourdon serve --transport http`` subprocess on 127.0.0.1; its members come from its
registry (``desk`` quarantined, granted ``atlas``, ``claude-code``, ``polbad`` and
``dirbad``; ``ops`` trusted) and call it with the real MCP client. Canary strings sit where only the local operator
may read them: in the name of a private tag of a manifest the index cannot serve (``polbad``),
in the paths of the server's machine (its home, its library, a reader's store named in the drift
verdict and the hook failure log), and in the private rows of ``atlas`` that two writes added.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bourdon.access.trust import MemberRegistry
from bourdon.formats import yamlio
from bourdon.ingest.failures import hook_failures_path, record_hook_failure
from bourdon.ingest.watermarks import save_watermark
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest
from tests.support.served import HttpServer, call, member

pytestmark = pytest.mark.anyio

HEX = secrets.token_hex(4)
TAG_CANARY = f"privtag{HEX}"  # the name of a private tag: says what someone keeps private
STORE = f"/srv/store-{HEX}/projects"  # a reader's store on the server's machine
PRIVATE_ROW = f"privrow{HEX}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def build(root: Path) -> None:
    fixture = Provenance(caller="fixture")
    with Library.init(root) as library:
        for data in (
            manifest("atlas", known_entities=[{"name": "atlas-core", "visibility": "public"}]),
            manifest("claude-code", known_entities=[{"name": "bourdon", "visibility": "public"}]),
        ):
            library.import_manifest(yamlio.dump(data), what=data["agent"]["id"], provenance=fixture)
        # Two private rows: "+2" to the operator, "+0" to anyone else.
        library.commit("atlas", {
            "known_entities": [{"name": PRIVATE_ROW, "summary": PRIVATE_ROW, "visibility": "private"}],
            "notes": [{"date": "2026-11-20", "text": PRIVATE_ROW, "visibility": "private"}],
        }, provenance=fixture)
        # One public row and one private: "+2" to the operator, "+1" to anyone else.
        library.commit("atlas", {"known_entities": [
            {"name": "atlas-edge", "summary": "public", "visibility": "public"},
            {"name": f"{PRIVATE_ROW}-2", "summary": PRIVATE_ROW, "visibility": "private"},
        ]}, provenance=fixture)
    # A manifest whose private tags are a string, not a list: the index cannot serve it.
    bad = manifest("polbad", visibility_policy={"default": "team", "private_tags": TAG_CANARY})
    (root / "agents" / "polbad.l5.yaml").write_bytes(yamlio.dump(bad))
    # A manifest that cannot be read at all (a folder where a file should be).
    (root / "agents" / "dirbad.l5.yaml").mkdir()
    # The reader claude-code stopped yielding: its verdict and its hook failure name its store.
    save_watermark(root, "claude-code", {
        "reader": "claude-code", "rows": 3, "outcome": "missing",
        "reason": f"no claude-code store ({STORE})", "checked_at": "2026-11-30T00:00:00Z",
        "drifting": {"reader": "claude-code", "checked_at": "2026-11-30T00:00:00Z",
                     "reason": f"the store is gone ({STORE})"},
    })
    record_hook_failure(hook_failures_path(root), "export", "claude-code",
                        f"could not read {STORE}/session.jsonl")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    base = tmp_path_factory.mktemp(f"details-{HEX}")
    server = HttpServer(base / "library", base / "user")
    server.user.mkdir()
    build(server.root)
    registry = MemberRegistry(server.home)
    server.tokens["desk"] = registry.add("desk", "quarantined", ["atlas", "claude-code", "polbad", "dirbad"])
    server.tokens["ops"] = registry.add("ops", "trusted")
    server.start()
    try:
        server.wait()
        yield server
    finally:
        server.stop()


# -- warnings name the file, the row and the field, never the value -------------------------


@pytest.mark.parametrize("who", ["desk", "ops"])
async def test_a_warning_names_the_field_and_never_quotes_its_value(
    served: HttpServer, who: str
) -> None:
    async with member(served, who) as client:
        listed, listed_text = await call(client, "list_agents")
        _, found_text = await call(client, "find_entity", name="atlas-core")
        status, status_text = await call(client, "memory_status")
    warning = [w for w in listed["meta"]["warnings"] if "polbad" in w]
    assert warning, listed["meta"]["warnings"]  # the problem is still told, where it is
    assert "agents/polbad.l5.yaml" in warning[0] and "/visibility_policy/private_tags" in warning[0]
    assert "is not of type 'array'" in warning[0]
    skipped = [text for text in status["index"]["skipped"] if "polbad" in text]
    assert skipped and "/visibility_policy/private_tags" in skipped[0]
    for text in (listed_text, found_text, status_text):
        assert TAG_CANARY not in text


# -- the server's paths are not shown to quarantined members --------------------------------


async def test_memory_status_and_recognition_show_a_quarantined_member_no_path(
    served: HttpServer,
) -> None:
    async with member(served, "desk") as desk:
        status, status_text = await call(desk, "memory_status")
        recognized, recognized_text = await call(
            desk, "prepare_recognition_context", prompt="what about bourdon?"
        )
        listed, listed_text = await call(desk, "list_agents")
    assert any("agents/dirbad.l5.yaml" in w for w in listed["meta"]["warnings"])
    entry = {e["reader"]: e for e in status["readers"]}["claude-code"]
    assert entry["drifting"] is True and entry["health"]["ok"] is False  # still told what is wrong
    assert entry["last_hook_failure"]["when"]
    assert [d["agent"] for d in recognized["drifting_surfaces"]] == ["claude-code"]
    for text in (status_text, recognized_text, listed_text):
        for path in (STORE, str(served.root), str(served.user), "/srv/"):
            assert path not in text


async def test_a_trusted_member_still_sees_where_the_store_was(served: HttpServer) -> None:
    async with member(served, "ops") as ops:
        status, _ = await call(ops, "memory_status")
    entry = {e["reader"]: e for e in status["readers"]}["claude-code"]
    assert STORE in entry["drift"]["reason"]
    assert str(served.user) in entry["health"]["message"]  # where it looked: this user's home


# -- history subjects count only rows the caller may see -----------------------------------


def subjects(answer: dict[str, Any]) -> list[str]:
    return [v["subject"] for v in answer["versions"]]


@pytest.mark.parametrize("who", ["desk", "ops"])
async def test_history_subjects_count_only_rows_the_caller_may_see(
    served: HttpServer, who: str
) -> None:
    async with member(served, who) as client:
        versions, text = await call(client, "list_memory_versions", agent_id="atlas")
        shorter, _ = await call(client, "list_memory_versions", agent_id="atlas", limit=2)
    assert subjects(versions)[:2] == ["merge atlas: +1 ~0 -0 rows", "merge atlas: +0 ~0 -0 rows"]
    assert subjects(shorter) == subjects(versions)[:2]
    assert PRIVATE_ROW not in text
    async with Client(
        create_server(served.root, watch=False, home=served.user / ".bourdon"), cache=None
    ) as operator:
        mine, _ = await call(operator, "list_memory_versions", agent_id="atlas")
    assert subjects(mine)[:2] == ["merge atlas: +2 ~0 -0 rows", "merge atlas: +2 ~0 -0 rows"]


VALUE = f"secretvalue{HEX}"
BAD_FIELDS: dict[str, tuple[dict[str, Any], str]] = {
    "agent-type": ({"agent": {"id": "x", "type": VALUE}}, "/agent/type"),
    "spec-version": ({"spec_version": VALUE}, "/spec_version"),
    "last-updated": ({"last_updated": VALUE}, "/last_updated"),
    "private-tags": ({"visibility_policy": {"private_tags": VALUE}}, "/visibility_policy"),
    "policy-default": ({"visibility_policy": {"default": VALUE}}, "/visibility_policy/default"),
    "capabilities": ({"capabilities": VALUE}, "/capabilities"),
    "entity-date": ({"known_entities": [{"name": "e", "last_touched": VALUE}]},
                    "/known_entities/0/last_touched"),
    "entity-visibility": ({"known_entities": [{"name": "e", "visibility": VALUE}]},
                          "/known_entities/0/visibility"),
    "session-date": ({"recent_sessions": [{"date": VALUE}]}, "/recent_sessions/0/date"),
    "workstream-status": ({"known_workstreams": [{"name": "w", "status": VALUE}]},
                          "/known_workstreams/0/status"),
    "note-date": ({"notes": [{"date": VALUE, "text": "t"}]}, "/notes/0/date"),
}


@pytest.mark.parametrize("case", BAD_FIELDS)
def test_a_refused_manifest_names_the_field_and_never_its_value(case: str) -> None:
    from bourdon.errors import SchemaError
    from bourdon.formats import schema

    change, path = BAD_FIELDS[case]
    data = {**manifest("x"), **change}
    with pytest.raises(SchemaError) as refused:
        schema.validate(data)
    said = [refused.value.message, *refused.value.problems]
    assert any(path in text for text in said), said
    assert not any(VALUE in text for text in said), said
