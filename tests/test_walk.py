"""expand_neighbors and fetch_slice on a small library of three agents, against neighbourhoods
written out by hand; the bounds; the MCP tools through the real client; the CLI.

The library (every row team unless it says otherwise):

- alpha: entities Ledgerline (project, alias ledger-line) and rapidfuzz; workstream
  "OFX import" (related: Ledgerline, rapidfuzz); sessions 2026-11-01 in /src/ledgerline
  focused on ledger-line, and 2026-11-03 in /src/harbor focused on Harbor.
- beta: entities ledgerline (the same name: one node with alpha's) and Priya; session
  2026-11-02 focused on Ledgerline; note 2026-11-05 naming Priya and Ledgerline.
- gamma: entities Harbor and Vaultname; session 2026-11-04 focused on Harbor, touching
  docs/Priya/notes.md; a PRIVATE note 2026-11-06 naming Ledgerline and Vaultname, the only
  bridge between them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bourdon.cli.main import main
from bourdon.errors import InputError, NotFoundError
from bourdon.query.index import Index
from bourdon.query.rowid import parse_row_id
from bourdon.query.walk import expand_neighbors, fetch_slice
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest

WORLD: dict[str, dict[str, Any]] = {
    "alpha": {
        "known_entities": [
            {
                "name": "Ledgerline",
                "type": "project",
                "aliases": ["ledger-line"],
                "summary": "a budgeting app",
            },
            {"name": "rapidfuzz", "type": "library"},
        ],
        "known_workstreams": [
            {
                "name": "OFX import",
                "status": "active",
                "summary": "import OFX statements",
                "related_entities": ["Ledgerline", "rapidfuzz"],
            },
        ],
        "recent_sessions": [
            {
                "date": "2026-11-01",
                "cwd": "/src/ledgerline",
                "project_focus": ["ledger-line"],
                "key_actions": ["wrote the CSV importer"],
            },
            {
                "date": "2026-11-03",
                "cwd": "/src/harbor",
                "project_focus": ["Harbor"],
                "key_actions": ["fixed the gateway"],
            },
        ],
    },
    "beta": {
        "known_entities": [
            {"name": "ledgerline", "type": "project", "summary": "Ada's app"},
            {"name": "Priya", "type": "person"},
        ],
        "recent_sessions": [
            {
                "date": "2026-11-02",
                "cwd": "/x",
                "project_focus": ["Ledgerline"],
                "key_actions": ["reviewed the importer"],
            },
        ],
        "notes": [
            {
                "date": "2026-11-05",
                "text": "Priya reviews the OFX importer",
                "related_entities": ["Priya", "Ledgerline"],
            },
        ],
    },
    "gamma": {
        "known_entities": [{"name": "Harbor", "type": "project"}, {"name": "Vaultname"}],
        "recent_sessions": [
            {
                "date": "2026-11-04",
                "cwd": "/src/other",
                "project_focus": ["Harbor"],
                "files_touched": ["docs/Priya/notes.md"],
                "key_actions": ["docs pass"],
            },
        ],
        "notes": [
            {
                "date": "2026-11-06",
                "text": "secret plan for Vaultname",
                "visibility": "private",
                "related_entities": ["Ledgerline", "Vaultname"],
            },
        ],
    },
}

# (name, type, relationship, direction, distance, score), in the order they must come.
LEDGERLINE_DEPTH_1 = [
    ("OFX import", "workstream", "RELATED_TO", "incoming", 1, 1.0),
    ("2026-11-01 ledger-line", "session", "FOCUSES_ON", "incoming", 1, 0.9),
    ("2026-11-02 Ledgerline", "session", "FOCUSES_ON", "incoming", 1, 0.9),
    ("2026-11-05 Priya reviews the OFX importer", "note", "MENTIONS", "incoming", 1, 0.8),
]
LEDGERLINE_DEPTH_2 = [
    *LEDGERLINE_DEPTH_1,
    ("rapidfuzz", "library", "RELATED_TO", "outgoing", 2, 0.5),
    ("Priya", "person", "MENTIONS", "outgoing", 2, 0.32),
]
LEDGERLINE_DEPTH_3 = [
    *LEDGERLINE_DEPTH_2,
    ("2026-11-04 Harbor", "session", "TOUCHES", "incoming", 3, 0.048),
]
PRIVATE_EXTRA = [
    ("2026-11-06 secret plan for Vaultname", "note", "MENTIONS", "incoming", 1, 0.8),
    ("Vaultname", "entity", "MENTIONS", "outgoing", 2, 0.32),
]


def shape(answer: dict[str, Any]) -> list[tuple[Any, ...]]:
    keys = ("name", "type", "relationship", "direction", "distance", "score")
    return [tuple(n[k] for k in keys) for n in answer["neighbors"]]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("walk") / "lib"
    library = Library.init(path)
    try:
        for agent, sections in WORLD.items():
            library.commit(
                agent,
                manifest(agent, **sections),
                mode="replace",
                provenance=Provenance(caller="test"),
            )
    finally:
        library.close()
    return path


@pytest.fixture(scope="module")
def index(root: Path) -> Index:
    found = Index(root)
    found.refresh()
    return found


def test_depth_one_is_every_row_naming_the_entity_by_name_or_alias(index: Index) -> None:
    answer = expand_neighbors(index, "Ledgerline")
    assert shape(answer) == LEDGERLINE_DEPTH_1
    assert answer["origins"] == [answer["origins"][0]]
    assert answer["origins"][0].startswith("entity:*:Ledgerline:")
    assert (answer["total"], answer["truncated"], answer["unresolved"]) == (4, False, [])
    # Both agents' Ledgerline rows are one node; its alias seeds the same walk.
    assert expand_neighbors(index, "LEDGER-LINE")["neighbors"] == answer["neighbors"]


def test_deeper_walks_reach_the_entities_named_alongside(index: Index) -> None:
    assert shape(expand_neighbors(index, "Ledgerline", depth=2)) == LEDGERLINE_DEPTH_2
    assert shape(expand_neighbors(index, "Ledgerline", depth=3, limit=24)) == LEDGERLINE_DEPTH_3


def test_a_private_bridge_hides_what_lies_behind_it(index: Index) -> None:
    team = expand_neighbors(index, "Ledgerline", depth=3, limit=24)
    assert "Vaultname" not in json.dumps(team) and "secret plan" not in json.dumps(team)
    mine = expand_neighbors(
        index, "Ledgerline", depth=2, limit=24, access_level="private", include_private=True
    )
    assert sorted(shape(mine)) == sorted(LEDGERLINE_DEPTH_2 + PRIVATE_EXTRA)
    # Vaultname itself exists for a team caller: it is just not reachable from Ledgerline.
    assert expand_neighbors(index, "Vaultname")["origins"]


def test_filters_narrow_the_answer_not_the_walk(index: Index) -> None:
    people = expand_neighbors(index, "Ledgerline", depth=2, types=["person"])
    assert shape(people) == [("Priya", "person", "MENTIONS", "outgoing", 2, 0.32)]
    assert people["filters"]["types"] == ["person"]
    only = expand_neighbors(index, "Ledgerline", depth=3, relationship_types=["focuses_on"])
    assert shape(only) == LEDGERLINE_DEPTH_1[1:3]
    outgoing = expand_neighbors(index, "OFX import", include_incoming=False)
    assert outgoing["unresolved"] == ["OFX import"]  # a workstream is seeded by its row id
    ofx = next(n["id"] for n in expand_neighbors(index, "Ledgerline")["neighbors"])
    outgoing = expand_neighbors(index, ofx, include_incoming=False)
    assert [(n["name"], n["direction"]) for n in outgoing["neighbors"]] == [
        ("Ledgerline", "outgoing"),
        ("rapidfuzz", "outgoing"),
    ]


def test_seeds_unknown_hidden_and_past_the_cap_are_unresolved_alike(index: Index) -> None:
    hidden = expand_neighbors(index, ["Harbor", "no such thing", "Vaultname"], depth=1)
    assert hidden["unresolved"] == ["no such thing"]
    seeds = ["Harbor"] * 8 + ["Priya", "rapidfuzz"]
    capped = expand_neighbors(index, seeds)
    assert capped["unresolved"] == ["Priya", "rapidfuzz"]
    assert len(capped["origins"]) == 1
    assert capped["meta"]["max_seeds"] == 8
    private_note = expand_neighbors(
        index, "Vaultname", access_level="private", include_private=True
    )["neighbors"][0]["id"]
    fake = private_note[:-8] + "ffffffff"
    both = expand_neighbors(index, [private_note, fake, "Harbor"])
    assert both["unresolved"] == [private_note, fake]
    with pytest.raises(InputError):
        expand_neighbors(index, ["Harbor", "  "])


def test_bounds_are_clamped_and_reported(index: Index) -> None:
    answer = expand_neighbors(index, "Ledgerline", depth=99, limit=0, content_max_chars=-5)
    assert (answer["depth"], answer["limit"]) == (3, 1)
    assert (answer["meta"]["depth"], answer["meta"]["limit"]) == (3, 1)
    assert answer["filters"]["content_max_chars"] == 0
    assert answer["truncated"] and answer["total"] == 7 and len(answer["neighbors"]) == 1
    assert answer["neighbors"][0]["content"] == ""
    assert expand_neighbors(index, "Ledgerline", depth=0)["depth"] == 1
    assert expand_neighbors(index, "Ledgerline", limit=500)["limit"] == 24
    session = _session(index, "2026-11-01")
    assert fetch_slice(index, "session", session, window=1000)["window"] == 64
    assert fetch_slice(index, "session", session, window=0)["window"] == 1


def _session(index: Index, date: str) -> str:
    answer = expand_neighbors(index, ["Ledgerline", "Harbor"], limit=24)
    return next(n["id"] for n in answer["neighbors"] if n["name"].startswith(date))


def test_a_session_slice_is_its_project_by_date_centred_on_it(index: Index) -> None:
    # alpha's 11-03 and gamma's 11-04 sessions are both Harbor's: a series of two.
    harbor = fetch_slice(index, "session", _session(index, "2026-11-04"), window=3)
    assert [p["name"] for p in harbor["passages"]] == ["2026-11-03 Harbor", "2026-11-04 Harbor"]
    assert (harbor["total"], harbor["window_start"], harbor["covers_parent"]) == (2, 0, True)
    assert harbor["sliced"] and harbor["parent_id"] == harbor["entity_id"]
    one = fetch_slice(index, "session", _session(index, "2026-11-04"), window=1)
    assert [p["name"] for p in one["passages"]] == ["2026-11-04 Harbor"]
    assert (one["window_start"], one["covers_parent"]) == (1, False)


def test_entity_workstream_and_note_slices(index: Index) -> None:
    ledger = fetch_slice(index, "entity", "Ledgerline")
    assert [p["name"] for p in ledger["passages"]] == [
        "2026-11-01 ledger-line",
        "2026-11-02 Ledgerline",
    ]
    assert ledger["parent_name"] == "Ledgerline" and ledger["parent_type"] == "project"
    neighbours = expand_neighbors(index, "Ledgerline")["neighbors"]
    ofx = fetch_slice(index, "workstream", neighbours[0]["id"], window=8)
    # Everything dated that names Ledgerline or rapidfuzz, oldest first.
    assert [p["name"] for p in ofx["passages"]] == [
        "2026-11-01 ledger-line",
        "2026-11-02 Ledgerline",
        "2026-11-05 Priya reviews the OFX importer",
    ]
    note = fetch_slice(index, "note", neighbours[3]["id"])
    assert [p["kind"] for p in note["passages"]] == ["note"] and not note["sliced"]
    lonely = fetch_slice(index, "entity", "rapidfuzz")
    assert lonely["sliced"] is False and [p["name"] for p in lonely["passages"]] == ["rapidfuzz"]
    budget = fetch_slice(index, "workstream", neighbours[0]["id"], window=8, content_max_chars=30)
    assert budget["content_chars"] == 30 and budget["passages"][-1]["truncated"]


def test_hidden_and_unknown_ids_are_the_same_404(index: Index) -> None:
    mine = expand_neighbors(index, "Vaultname", access_level="private", include_private=True)[
        "neighbors"
    ][0]["id"]
    assert parse_row_id(mine).kind == "note"
    fake = mine[:-8] + "ffffffff"
    errors = []
    for asked in (mine, fake):
        with pytest.raises(NotFoundError) as caught:
            fetch_slice(index, "note", asked)
        errors.append(str(caught.value).replace(asked, "ID"))
    assert errors[0] == errors[1]
    assert fetch_slice(index, "note", mine, access_level="private", include_private=True)
    with pytest.raises(InputError):
        fetch_slice(index, "thing", mine)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_mcp_tools_answer_as_the_functions_do(root: Path, index: Index) -> None:
    server = create_server(root, watch=False)
    async with Client(server, cache=None) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("expand_neighbors", "fetch_slice"):
            props = tools[name].input_schema["properties"]
            assert all(p.get("description") for p in props.values()), name
        got = await client.call_tool(
            "expand_neighbors", {"name": ["Ledgerline"], "depth": 2, "limit": 99}
        )
        answer = got.structured_content
        assert answer is not None
        assert shape(answer) == LEDGERLINE_DEPTH_2 and answer["limit"] == 24
        first = answer["neighbors"][1]["id"]
        sliced = (
            await client.call_tool("fetch_slice", {"kind": "session", "id": first, "window": 1000})
        ).structured_content
        assert sliced is not None and sliced["window"] == 64
        assert sliced == fetch_slice(index, "session", first, window=1000)
        missing = await client.call_tool(
            "fetch_slice", {"kind": "note", "id": "note:gamma:2026-11-06:ffffffff"}
        )
        assert missing.is_error and missing.structured_content is not None
        assert missing.structured_content["error"]["status"] == 404
        contract = await client.call_tool("expand_neighbors", {"entity_ids": ["Ledgerline"]})
        assert contract.structured_content is not None
        assert shape(contract.structured_content) == LEDGERLINE_DEPTH_1
        blank = await client.call_tool("expand_neighbors", {"name": ["Ledgerline", " "]})
        assert blank.is_error and blank.structured_content is not None
        assert blank.structured_content["error"]["status"] == 400


def test_the_cli_prints_neighbours_and_slices(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--library", str(root), "neighbors", "Ledgerline", "--depth", "2", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert shape(answer) == LEDGERLINE_DEPTH_2
    assert main(["--library", str(root), "neighbors", "Ledgerline", "--limit", "2"]) == 0
    text = capsys.readouterr().out
    assert "OFX import" in text and "2 of 4" in text and "truncated" in text
    session = answer["neighbors"][1]["id"]
    assert main(["--library", str(root), "slice", session, "--window", "5"]) == 0
    text = capsys.readouterr().out
    # ledger-line is Ledgerline's alias: one project, whichever spelling a session used.
    assert "2026-11-01" in text and "2026-11-02" in text and "Harbor" not in text
    assert main(["--library", str(root), "slice", "Ledgerline", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["parent_name"] == "Ledgerline"
    assert main(["--library", str(root), "slice", "note:gamma:2026-11-06:ffffffff"]) == 4
