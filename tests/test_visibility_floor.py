"""Visibility only goes up unless the local operator says otherwise (issue 13, leaks 1 and 2).

Through real parts: a real ``bourdon serve --transport http`` on 127.0.0.1 with a trusted member
and its token, real libraries and a real bare git remote in tmp folders, the real CLI.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bourdon.access.trust import MemberRegistry
from bourdon.cli.main import main
from bourdon.formats import yamlio
from bourdon.replicate.remotes import add_remote
from bourdon.replicate.sync import sync
from bourdon.store.git.process import git_env
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance, trailers
from bourdon.testing import manifest
from bourdon.testing.remotes import bare_repository, every_object
from bourdon.testing.serving import child_env, free_port, stop_process, wait_for_port
from tests.test_writes import call

AGENT = "claude-code"
SECRET = "Vesper merger"
SECRET_SUMMARY = "private-summary-of-the-vesper-deal"
SECRET_ALIAS = "private-alias-vsp"
SECRET_TAG = "private-tag-vsp"
SECRET_WS = "Quiet layoffs"
SECRET_WS_SUMMARY = "private-workstream-summary"
TRUSTED = "ops-laptop"
OPERATOR = Provenance(caller="operator")


def private_rows() -> dict[str, Any]:
    return manifest(
        AGENT,
        known_entities=[
            {"name": "Ledgerline", "type": "project", "summary": "Bookkeeping.", "visibility": "team"},
            {
                "name": SECRET,
                "type": "decision",
                "summary": SECRET_SUMMARY,
                "aliases": [SECRET_ALIAS],
                "tags": [SECRET_TAG],
                "last_touched": "2026-11-01",
                "visibility": "private",
            },
        ],
        known_workstreams=[
            {"name": SECRET_WS, "status": "active", "summary": SECRET_WS_SUMMARY,
             "visibility": "private"},
        ],
    )


# -- leak 1: a trusted HTTP member cannot un-hide a private row ---------------------------


QUARANTINED = "desk-chat"


class Served:
    def __init__(self, root: Path, url: str, tokens: dict[str, str]) -> None:
        self.root, self.url, self.tokens = root, url, tokens


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    root, user = tmp_path / "lib", tmp_path / "user"
    with Library.init(root) as library:
        library.import_manifest(yamlio.dump(private_rows()), what=AGENT, provenance=OPERATOR)
    registry = MemberRegistry(user / ".bourdon")
    tokens = {
        TRUSTED: registry.add(TRUSTED, "trusted"),
        QUARANTINED: registry.add(QUARANTINED, "quarantined"),
    }
    port = free_port()
    err = tmp_path / "server.stderr"
    with open(err, "wb") as e:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bourdon", "--library", str(root), "serve", "--transport",
             "http", "--host", "127.0.0.1", "--port", str(port), "--no-watch"],
            env=child_env(user), stdout=subprocess.DEVNULL, stderr=e, stdin=subprocess.DEVNULL,
        )
    try:
        wait_for_port(proc, port, log=err)
        yield Served(root, f"http://127.0.0.1:{port}/mcp", tokens)
    finally:
        stop_process(proc)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.asynccontextmanager
async def member(served: Served, who: str = TRUSTED) -> AsyncIterator[Client]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {served.tokens[who]}"}
    async with (
        create_mcp_http_client(headers, timeout=httpx2.Timeout(20.0)) as hc,
        Client(streamable_http_client(served.url, http_client=hc), cache=None) as client,
    ):
        yield client


def live_row(root: Path, section: str, name: str) -> dict[str, Any]:
    with Library.open(root) as library:
        rows = library.read(AGENT).data[section]
    return next(r for r in rows if r["name"].lower() == name.lower())


@pytest.mark.anyio
async def test_a_trusted_member_cannot_make_a_private_row_public(served: Served) -> None:
    async with member(served) as client:
        await call(
            client,
            "commit_to_federation",
            agent_id=AGENT,
            entities=[{"name": SECRET, "visibility": "public"}],
            workstreams=[{"name": SECRET_WS, "visibility": "team"}],
        )
        found = await call(client, "find_entity", name=SECRET)
        shown = json.dumps(found)
        for secret in (SECRET_SUMMARY, SECRET_ALIAS, SECRET_TAG):
            assert secret not in shown
        work = json.dumps(await call(client, "list_workstreams", agent_id=AGENT))
        assert SECRET_WS_SUMMARY not in work
    assert live_row(served.root, "known_entities", SECRET)["visibility"] == "private"
    assert live_row(served.root, "known_workstreams", SECRET_WS)["visibility"] == "private"


@pytest.mark.anyio
async def test_a_commit_answer_reads_the_same_for_a_hidden_name_and_a_new_one(
    served: Served,
) -> None:
    keys = ("added", "updated", "removed", "total", "counts", "no_op",
            "entities_added", "entities_updated", "total_entities",
            "workstreams_added", "workstreams_updated", "total_workstreams")
    async with member(served) as client:
        hidden = await call(
            client, "commit_to_federation", agent_id=AGENT,
            entities=[{"name": SECRET, "summary": "what the member knows"}],
        )
        # The hidden row stays hidden, so the second write meets the same visible state.
        fresh = await call(
            client, "commit_to_federation", agent_id=AGENT,
            entities=[{"name": "Brand new name", "summary": "what the member knows"}],
        )
    assert {k: hidden.get(k) for k in keys} == {k: fresh.get(k) for k in keys}
    assert hidden["added"] == 1 and hidden["updated"] == 0


@pytest.mark.anyio
async def test_a_staged_write_honours_expected_digest(served: Served) -> None:
    note = {"date": "2026-11-30", "text": "from the desk"}
    async with member(served, QUARANTINED) as client:
        first = await call(client, "commit_to_federation", agent_id=QUARANTINED,
                           agent_type="other", notes=[note])
        assert first["staged"] is True
        stale = "sha256:" + "0" * 64
        refused = await client.call_tool("commit_to_federation", {
            "agent_id": QUARANTINED, "notes": [{**note, "text": "second"}],
            "expected_digest": stale})
        assert refused.is_error
        assert refused.structured_content is not None
        error = refused.structured_content["error"]
        assert error["status"] == 409
        assert refused.structured_content.get("current_digest") == first["digest"]
        again = await call(client, "commit_to_federation", agent_id=QUARANTINED,
                           notes=[{**note, "text": "second"}], expected_digest=first["digest"])
        assert again["staged"] is True and again["added"] == 1


# -- leak 2: whoever can push to the remote cannot un-hide a private row -------------------


def test_a_row_pushed_to_the_remote_cannot_make_a_private_row_public(tmp_path: Path) -> None:
    remote = bare_repository(tmp_path / "remote.git")
    victim = Library.init(tmp_path / "victim", machine="victim")
    attacker = Library.init(tmp_path / "attacker", machine="attacker")
    try:
        for library in (victim, attacker):
            add_remote(library, "origin", str(remote))
        victim.import_manifest(yamlio.dump(private_rows()), what=AGENT, provenance=OPERATOR)
        sync(victim, "origin")
        sync(attacker, "origin")
        attacker.commit(
            AGENT,
            {"known_entities": [
                {"name": SECRET, "visibility": "public", "last_touched": "2026-12-31"}
            ], "known_workstreams": [
                {"name": SECRET_WS, "visibility": "public", "last_touched": "2026-12-31"}
            ]},
            provenance=Provenance(caller="attacker"),
        )
        sync(attacker, "origin")
        report = sync(victim, "origin")
        [received] = report.received
        assert {"section": "known_entities", "row": SECRET, "fields": ["visibility"],
                "winner": "local"} in received.conflicts
        rows = {r["name"]: r for r in victim.read(AGENT).data["known_entities"]}
        assert rows[SECRET]["visibility"] == "private"
        assert rows[SECRET]["summary"] == SECRET_SUMMARY
        ws = {r["name"]: r for r in victim.read(AGENT).data["known_workstreams"]}
        assert ws[SECRET_WS]["visibility"] == "private"
        published = b"".join(content for _, content in every_object(remote))
        for secret in (SECRET_SUMMARY, SECRET_ALIAS, SECRET_TAG, SECRET_WS_SUMMARY):
            assert secret.encode() not in published
    finally:
        victim.close()
        attacker.close()


# -- the operator may lower, explicitly, and it is recorded -------------------------------


def test_only_the_operator_lowers_a_row_and_the_commit_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    with Library.init(root) as library:
        library.import_manifest(yamlio.dump(private_rows()), what=AGENT, provenance=OPERATOR)
    rows = tmp_path / "rows.yaml"
    rows.write_text(f"known_entities:\n  - name: {SECRET}\n    visibility: public\n")

    assert main(["--library", str(root), "commit", AGENT, "--file", str(rows)]) == 0
    assert live_row(root, "known_entities", SECRET)["visibility"] == "private"
    capsys.readouterr()

    assert main(["--library", str(root), "commit", AGENT, "--file", str(rows),
                 "--allow-lower-visibility"]) == 0
    assert live_row(root, "known_entities", SECRET)["visibility"] == "public"
    message = subprocess.run(
        ["git", "log", "-1", "--format=%B"], cwd=root, env=git_env(), capture_output=True,
        text=True, check=True,
    ).stdout
    assert trailers(message).get("Lowered") == f"known_entities {SECRET!r}: private -> public"


# -- item 16: a sync says which rows both sides changed, which fields, and who won ----------


def test_sync_reports_every_conflict_and_records_it_in_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = bare_repository(tmp_path / "remote.git")
    a, b = tmp_path / "laptop", tmp_path / "desktop"
    for root, machine in ((a, "laptop"), (b, "desktop")):
        with Library.init(root, machine=machine) as library:
            add_remote(library, "origin", str(remote))
    row = {"name": "Ledgerline", "type": "project", "summary": "v1", "visibility": "team",
           "last_touched": "2026-11-01"}
    with Library.open(a, machine="laptop") as library:
        library.commit(AGENT, manifest(AGENT, known_entities=[row]), provenance=OPERATOR)
        sync(library, "origin")
    with Library.open(b, machine="desktop") as library:
        sync(library, "origin")
        library.commit(AGENT, {"known_entities": [
            {**row, "summary": "desktop's", "type": "library", "last_touched": "2026-11-20"}]},
            provenance=OPERATOR)
        sync(library, "origin")
    with Library.open(a, machine="laptop") as library:
        library.commit(AGENT, {"known_entities": [
            {**row, "summary": "laptop's", "last_touched": "2026-11-10"}]}, provenance=OPERATOR)
    capsys.readouterr()

    assert main(["--library", str(a), "sync", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["syncs"][0]
    [received] = report["received"]
    assert received["conflicts"] == [
        {"section": "known_entities", "row": "Ledgerline", "fields": ["summary"],
         "winner": "remote"}
    ]
    with Library.open(a) as library:
        [version] = [v for v in library.history(AGENT) if v.op == "sync"]
        assert version.to_dict()["conflicts"] == [
            "known_entities 'Ledgerline' summary: remote won"
        ]
        assert library.read(AGENT).data["known_entities"][0]["summary"] == "desktop's"
    capsys.readouterr()
    assert main(["--library", str(a), "history", AGENT]) == 0  # people see it in history too
    assert "conflict: known_entities 'Ledgerline' summary: remote won" in capsys.readouterr().out

    # The same conflict, printed, on the other side's next sync.
    with Library.open(b, machine="desktop") as library:
        library.commit(AGENT, {"known_entities": [
            {**row, "summary": "desktop again", "last_touched": "2026-11-25"}]},
            provenance=OPERATOR)
    with Library.open(a, machine="laptop") as library:
        library.commit(AGENT, {"known_entities": [
            {**row, "summary": "laptop again", "last_touched": "2026-11-30"}]},
            provenance=OPERATOR)
        sync(library, "origin")
    capsys.readouterr()
    assert main(["--library", str(b), "sync"]) == 0
    out = capsys.readouterr().out
    assert "origin: conflict in claude-code: known_entities 'Ledgerline' summary: remote won" in out
