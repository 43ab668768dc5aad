"""search_federation and ``bourdon search``: full-text search over a real library.

Real git libraries in tmp_path, the real MCP client in-process and over stdio, the CLI
in-process, a real peer server in a subprocess.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from bourdon.access.visibility import resolve
from bourdon.cli.main import main
from bourdon.formats import yamlio
from bourdon.query.index import Index
from bourdon.query.search import search, search_federation
from bourdon.query.searchtables import tables_of
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.store.searchfile import search_file
from bourdon.testing import make_library, manifest
from bourdon.testing.serving import child_env

ALPHA = manifest(
    "alpha",
    known_entities=[
        {"name": "Ledgerline", "type": "project", "summary": "A CLI that imports bank statements",
         "tags": ["finance"], "visibility": "team", "last_touched": "2026-11-20"},
        {"name": "ofx-reader", "type": "file", "summary": "The OFX importer of Ledgerline",
         "visibility": "public", "last_touched": "2026-10-02"},
        {"name": "Harbor", "type": "project", "summary": "The line of ledger services",
         "visibility": "team", "last_touched": "2026-09-01"},
    ],
    recent_sessions=[
        {"date": "2026-11-01", "cwd": "/src/ledgerline", "project_focus": ["Ledgerline"],
         "key_actions": ["importing the CSV files of the bank"], "visibility": "team"},
        {"date": "2026-11-21", "cwd": "/src/harbor", "project_focus": ["Harbor"],
         "key_actions": ["wrote the ledger line parser"], "visibility": "team"},
    ],
    notes=[
        {"date": "2026-11-15", "text": "The ledger line format keeps one entry per line",
         "visibility": "team"},
    ],
)  # fmt: skip
BETA = manifest(
    "beta",
    known_entities=[
        {"name": f"widget-{i}", "type": "file", "summary": f"ledger helper number {i}",
         "visibility": "team"}
        for i in range(7)
    ],
    known_workstreams=[
        {"name": "Import pipeline", "status": "active", "summary": "Faster imports for banks",
         "related_entities": ["Ledgerline"], "visibility": "team"},
    ],
)  # fmt: skip


def put(library: Library, data: dict[str, Any]) -> None:
    library.import_manifest(yamlio.dump(data), provenance=Provenance(caller="test"))


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    library = make_library(tmp_path / "lib", sample=False)
    put(library, ALPHA)
    put(library, BETA)
    library.close()
    yield tmp_path / "lib"


@pytest.fixture
def index(root: Path) -> Index:
    idx = Index(root)
    idx.refresh()
    return idx


def ids(answer: dict[str, Any]) -> list[str]:
    return [r["doc_id"] for r in answer["results"]]


def labels(answer: dict[str, Any]) -> set[str]:
    return {r["metadata"].get("name") or r["metadata"]["date"] for r in answer["results"]}


def find(index: Index, query: str, **kw: Any) -> dict[str, Any]:
    return search_federation(index, query, **{"limit": 50, **kw})


# -- matching and ranking ------------------------------------------------------------------


def test_stemming_finds_other_forms_of_a_word(index: Index) -> None:
    answer = find(index, "importing")
    assert {"Ledgerline", "ofx-reader", "2026-11-01", "Import pipeline"} <= labels(answer)
    assert "Harbor" not in labels(answer)


def test_a_prefix_query_finds_every_word_it_starts(index: Index) -> None:
    assert {"Ledgerline", "ofx-reader", "Import pipeline"} <= labels(find(index, "impo*"))
    assert find(index, "impo")["results"] == []  # without the star, impo is a word of its own


def test_a_phrase_needs_its_words_together_a_bag_does_not(index: Index) -> None:
    phrase = labels(find(index, '"ledger line"'))
    bag = labels(find(index, "ledger line"))
    assert phrase == {"2026-11-21", "2026-11-15"}
    assert "Harbor" in bag and phrase < bag  # "line of ledger" has both words, apart


def test_results_carry_the_reference_keys_an_id_and_a_marked_snippet(index: Index) -> None:
    answer = search_federation(index, "OFX")
    assert set(answer) >= {"query", "total_matches", "results"}
    [hit] = answer["results"]
    assert set(hit) == {"doc_id", "score", "source", "snippet", "metadata"}
    assert hit["doc_id"].startswith("entity:alpha:ofx-reader:")
    assert hit["source"] == "entity" and hit["score"] > 0
    assert "**ofx**" in hit["snippet"].casefold()
    assert hit["metadata"] == {"agent": "alpha", "kind": "entity", "name": "ofx-reader",
                               "match": ["name", "text"]}  # fmt: skip
    assert "visibility" not in json.dumps(answer["results"])


def test_a_name_outranks_a_summary(index: Index) -> None:
    answer = find(index, "harbor")
    assert ids(answer)[0].startswith("entity:alpha:Harbor:")


def test_hostile_queries_are_answered_not_failed(index: Index) -> None:
    for query in [
        '"',
        "AND(",
        '"ledger',
        "NEAR(a b)",
        "*",
        "ledger)*",
        "col:ledger",
        "-x",
        "^ledger",
        "a OR",
        "NOT",
        '""',
        "' OR 1=1 --",
        "ledger\x00line",
        "\\",
    ]:
        answer = search_federation(index, query)
        assert isinstance(answer["results"], list), query
    assert search_federation(index, "AND(")["results"] == []


def test_an_empty_query_is_a_400_and_bounds_are_clamped(index: Index) -> None:
    from bourdon.errors import InputError

    with pytest.raises(InputError):
        search_federation(index, "  ")
    assert search_federation(index, "ledger", top_k=500)["meta"]["top_k"] == 50
    assert search_federation(index, "ledger", top_k=0)["meta"]["top_k"] == 1
    assert len(search_federation(index, "ledger", top_k=0)["results"]) == 1


def test_min_score_drops_weak_matches(index: Index) -> None:
    # min_score is a share of the best score: FTS5's BM25 has no fixed scale.
    everything = find(index, "ledger imports")
    strong = find(index, "ledger imports", min_score=0.5)
    assert 1 <= len(strong["results"]) < len(everything["results"])
    assert strong["meta"]["matched"] == everything["meta"]["matched"]  # every match is counted
    assert all(r["score"] >= everything["results"][0]["score"] / 2 for r in strong["results"])


# -- filters and paging --------------------------------------------------------------------


def test_agent_kind_and_date_filters(index: Index) -> None:
    assert {r["metadata"]["agent"] for r in find(index, "ledger", agent="beta")["results"]} == {
        "beta"
    }
    assert {r["source"] for r in find(index, "ledger", kind="session")["results"]} == {"session"}
    assert find(index, "ledger", source="note")["results"][0]["source"] == "note"
    dated = find(index, "ledger imports", since="2026-11-10", until="2026-11-20", min_score=0)
    assert labels(dated) == {"Ledgerline", "2026-11-15"}
    from bourdon.errors import InputError, NotFoundError

    with pytest.raises(NotFoundError):
        find(index, "ledger", agent="nobody")
    with pytest.raises(InputError):
        find(index, "ledger", kind="clip")


def test_pages_cover_every_match_once_in_order(index: Index) -> None:
    whole = find(index, "ledger")
    seen: list[str] = []
    cursor = None
    while True:
        page = search_federation(index, "ledger", top_k=3, cursor=cursor)
        assert page["meta"]["matched"] == whole["meta"]["matched"]
        seen += ids(page)
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        cursor = page["next_cursor"]
    assert seen == ids(whole) and len(seen) == len(set(seen)) == whole["meta"]["matched"]
    from bourdon.errors import InputError

    first = search_federation(index, "ledger", top_k=3)
    with pytest.raises(InputError):
        search_federation(index, "imports", cursor=first["next_cursor"])
    with pytest.raises(InputError):
        search_federation(index, "ledger", cursor="not-a-cursor")


# -- the index file ------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_index_file_is_rebuilt(root: Path, index: Index, damage: str) -> None:
    before = find(index, "ledger")
    path = search_file(root)
    tables_of(root)._drop()  # as a new process finds it: no connection open
    if damage == "garbage":
        path.write_bytes(b"this is not a database at all" * 100)
    else:
        for extra in ("-wal", "-shm"):
            Path(f"{path}{extra}").unlink(missing_ok=True)
        find(index, "ledger")  # made again, whole
        tables_of(root)._drop()
        assert not path.exists()
        find(index, "ledger")
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        tables_of(root)._conn.close()  # type: ignore[union-attr]
        tables_of(root)._conn = None
        size = path.stat().st_size
        with path.open("r+b") as fh:
            fh.truncate(size // 2)
    assert find(index, "ledger") == before
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone() == ("ok",)


def test_one_agents_commit_updates_only_its_rows(root: Path, index: Index) -> None:
    assert find(index, "zeppelin")["results"] == []
    library = Library.open(root)
    changed = json.loads(json.dumps(ALPHA))
    changed["notes"].append({"date": "2026-11-30", "text": "a zeppelin of ledgers",
                             "visibility": "team"})  # fmt: skip
    put(library, changed)
    library.close()
    index.refresh()
    answer = find(index, "zeppelin")
    assert labels(answer) == {"2026-11-30"}
    assert tables_of(root).updated == ["alpha"]


def test_a_locked_index_file_does_not_fail_a_search(root: Path, index: Index) -> None:
    find(index, "ledger")
    library = Library.open(root)
    changed = json.loads(json.dumps(BETA))
    changed["known_entities"][0]["summary"] = "a quokka"
    put(library, changed)
    library.close()
    index.refresh()
    other = sqlite3.connect(search_file(root), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    try:
        answer = find(index, "quokka")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert labels(answer) == {"widget-0"}
    assert find(index, "quokka") == answer  # and the file catches up once free


def test_the_index_file_is_git_ignored(root: Path, index: Index) -> None:
    import subprocess

    find(index, "ledger")
    out = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"], cwd=root, capture_output=True, text=True
    ).stdout  # fmt: skip
    assert "search.sqlite" not in out.replace(".bourdon/\n", "")


# -- surfaces ------------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_tool_answers_what_the_function_does(root: Path, index: Index) -> None:
    async with Client(create_server(root, watch=False, home=root.parent / "home")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        props = tools["search_federation"].input_schema["properties"]
        assert props["top_k"]["default"] == 5 and props["min_score"]["default"] == 0.01
        assert props["access_level"]["default"] == "team" and props["source"]["default"] is None
        assert all(p.get("description") for p in props.values())
        result = await client.call_tool("search_federation", {"query": "ledger", "top_k": 3})
        assert not result.is_error
        assert result.structured_content == search(
            index, "ledger", access=resolve("team", False), top_k=3
        )
        for query in ['"', "AND(", "NEAR(", "ledger*)"]:
            result = await client.call_tool("search_federation", {"query": query})
            assert not result.is_error, query
        result = await client.call_tool("search_federation", {"query": ""})
        assert result.is_error and result.structured_content["error"]["status"] == 400


@pytest.mark.anyio
async def test_the_tool_answers_over_stdio(root: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bourdon", "--library", str(root), "serve"],
        env=child_env(tmp_path),
    )
    async with Client(params) as client:
        result = await client.call_tool("search_federation", {"query": "importing", "top_k": 10})
        assert not result.is_error
        assert result.structured_content is not None
        assert "Import pipeline" in labels(result.structured_content)


def test_the_cli_prints_the_same_answer(
    root: Path, index: Index, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--library", str(root), "search", "ledger", "--kind", "entity", "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert printed == search_federation(index, "ledger", kind="entity")
    assert main(["--library", str(root), "search", '"ledger line"', "--agent", "alpha"]) == 0
    text = capsys.readouterr().out
    assert "**ledger line**" in text and "2026-11-15" in text


# -- peers ---------------------------------------------------------------------------------


GAMMA = manifest(
    "gamma",
    known_entities=[
        {"name": f"far-ledger-{i}", "summary": "ledger of the far machine", "visibility": "team"}
        for i in range(3)
    ]
    + [{"name": "far-secret", "summary": "ledger kept private", "visibility": "private"}],
)


@pytest.mark.anyio
async def test_peers_results_are_interleaved_by_rank_and_tagged(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bourdon.access.trust import MemberRegistry
    from bourdon.federation.peers import Peer
    from tests.support.served import HttpServer

    far = make_library(tmp_path / "far-lib", sample=False)
    put(far, GAMMA)
    far.close()
    user = tmp_path / "far-user"
    user.mkdir()
    peer = HttpServer(tmp_path / "far-lib", user)
    token = MemberRegistry(peer.home).add("near", "trusted", peer=True)
    monkeypatch.setenv("SEARCH_PEER_TOKEN", token)
    peer.start()
    try:
        peer.wait()
        server = create_server(
            root, watch=False, home=tmp_path / "near-home", peers_file=False,
            peers=[Peer("far", peer.url, "SEARCH_PEER_TOKEN")], deadlines=(20.0, 20.0),
        )  # fmt: skip
        async with Client(server) as client:
            args = {"query": "ledger", "top_k": 6, "source": "entity"}
            result = await client.call_tool("search_federation", args)
            answer = result.structured_content
            assert answer is not None and not result.is_error
            agents = [r["metadata"]["agent"] for r in answer["results"]]
            assert answer["peers_responded"] == 1
            # local, peer, local, peer...: the peer's scores are on its own scale
            assert agents[1::2] == ["peer:far:gamma"] * 3
            assert all(not a.startswith("peer:") for a in agents[0::2])
            assert "far-secret" not in json.dumps(answer)
            alone = await client.call_tool("search_federation", {**args, "federation_hop": 1})
            assert alone.structured_content is not None
            assert all(
                not r["metadata"]["agent"].startswith("peer:")
                for r in alone.structured_content["results"]
            )
    finally:
        peer.stop()


def test_a_file_damaged_while_open_is_answered_from_memory_then_rebuilt(
    root: Path, index: Index
) -> None:
    before = find(index, "ledger")
    path = search_file(root)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with path.open("r+b") as fh:  # overwritten under the open connection, change counter too
        fh.seek(24)
        fh.write(b"\xff" * (path.stat().st_size - 24))
    assert find(index, "ledger") == before
    assert find(index, "ledger") == before
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA quick_check").fetchone() == ("ok",)
