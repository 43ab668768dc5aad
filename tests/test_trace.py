"""trace_entity and ``bourdon trace``: an entity's timeline read from git history.

One scripted history (three agents, twelve commits through the real Library) with a rename,
a removal, a rollback, an alias gained and visibility going private -> team and team ->
private. The expected timelines below were written by hand from the script.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bourdon.cli.main import main
from bourdon.query.trace import trace_entity
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import make_library, manifest

PRIVATE_TEXT = ("PRIVATE-ONLY beta draft", "PRIVATE-ONLY second draft", "PRIVATE-ONLY again")


@dataclass
class Story:
    library: Library
    commits: dict[int, str]  # step of the script -> commit id


def script(library: Library) -> dict[int, str]:
    def by(caller: str, session: str | None = None, transcript: str | None = None) -> Provenance:
        return Provenance(caller=caller, session=session, transcript=transcript)

    def atlas(**fields: Any) -> dict[str, Any]:
        return {"known_entities": [{"name": "atlas", **fields}]}

    c: dict[int, str] = {}
    alpha = [{"name": "Atlas", "type": "project", "summary": "map service"}]
    c[1] = library.commit(
        "alpha", manifest("alpha", known_entities=alpha), provenance=by("operator", "s1")
    ).version
    beta = [{"name": "atlas", "summary": PRIVATE_TEXT[0], "visibility": "private"}]
    c[2] = library.commit(
        "beta", manifest("beta", known_entities=beta), provenance=by("codex-bot", "s2")
    ).version
    c[3] = library.commit(
        "alpha", {"known_entities": [{"name": "Atlas", "summary": "map service v2"}]}
    ).version
    c[4] = library.commit(
        "beta", atlas(summary=PRIVATE_TEXT[1]), provenance=by("codex-bot", "s3")
    ).version
    # The operator's explicit choice: beta's row goes from private to team.
    c[5] = library.commit(
        "beta", atlas(summary="shared atlas notes", visibility="team"), allow_lower_visibility=True
    ).version
    c[6] = library.commit(
        "alpha", {"known_entities": [{"name": "Atlas", "aliases": ["atl"]}]},
        provenance=by("claude", "s4"),
    ).version  # fmt: skip
    gamma = [{"name": "Atlas", "summary": "gamma view"}]
    c[7] = library.commit(
        "gamma", manifest("gamma", known_entities=gamma), provenance=by("cursor-bot", "s5")
    ).version
    renamed = [{"name": "Atlas Maps", "aliases": ["Atlas"], "summary": "gamma view"}]
    c[8] = library.commit(
        "gamma", manifest("gamma", known_entities=renamed), mode="replace",
        provenance=by("cursor-bot", "s6"),
    ).version  # fmt: skip
    other = [{"name": "Harbor", "summary": "another project"}]
    c[9] = library.commit("alpha", manifest("alpha", known_entities=other), mode="replace").version
    c[10] = library.rollback("alpha", c[6]).version
    c[11] = library.commit(
        "beta", atlas(summary=PRIVATE_TEXT[2], visibility="private"),
        provenance=by("codex-bot", "s7"),
    ).version  # fmt: skip
    c[12] = library.commit(
        "gamma", {"known_entities": [{"name": "Atlas Maps", "summary": "gamma view 2"}]},
        provenance=by("operator", transcript="sessions/t1.jsonl"),
    ).version  # fmt: skip
    return c


@pytest.fixture
def story(tmp_path: Path) -> Iterator[Story]:
    library = make_library(tmp_path / "lib", sample=False)
    commits = script(library)
    yield Story(library, commits)
    library.close()


# (step, agent, kind, op, by, session, transcript, {field: (from, to)}, aliases_added)
OPERATOR_TIMELINE = [
    (1, "alpha", "entity_origin", "commit", "operator", "s1", None,
     {"name": (None, "Atlas"), "type": (None, "project"), "summary": (None, "map service"),
      "visibility": (None, "team")}, []),
    (2, "beta", "entity_origin", "commit", "codex-bot", "s2", None,
     {"name": (None, "atlas"), "summary": (None, PRIVATE_TEXT[0]),
      "visibility": (None, "private")}, []),
    (3, "alpha", "changed", "commit", "operator", None, None,
     {"summary": ("map service", "map service v2")}, []),
    (4, "beta", "changed", "commit", "codex-bot", "s3", None,
     {"summary": (PRIVATE_TEXT[0], PRIVATE_TEXT[1])}, []),
    (5, "beta", "visibility_changed", "commit", "operator", None, None,
     {"summary": (PRIVATE_TEXT[1], "shared atlas notes"), "visibility": ("private", "team")}, []),
    (6, "alpha", "aliases_gained", "commit", "claude", "s4", None,
     {"aliases": (None, ["atl"])}, ["atl"]),
    (7, "gamma", "entity_origin", "commit", "cursor-bot", "s5", None,
     {"name": (None, "Atlas"), "summary": (None, "gamma view"), "visibility": (None, "team")},
     []),
    (8, "gamma", "renamed", "commit", "cursor-bot", "s6", None,
     {"name": ("Atlas", "Atlas Maps"), "aliases": (None, ["Atlas"])}, ["Atlas"]),
    (9, "alpha", "removed", "commit", "operator", None, None, {}, []),
    (10, "alpha", "restored", "rollback", "operator", None, None,
     {"name": (None, "Atlas"), "type": (None, "project"), "summary": (None, "map service v2"),
      "aliases": (None, ["atl"]), "visibility": (None, "team")}, ["atl"]),
    (11, "beta", "visibility_changed", "commit", "codex-bot", "s7", None,
     {"summary": ("shared atlas notes", PRIVATE_TEXT[2]), "visibility": ("team", "private")},
     []),
    (12, "gamma", "changed", "commit", "operator", None, "sessions/t1.jsonl",
     {"summary": ("gamma view", "gamma view 2")}, []),
]  # fmt: skip

# A team caller: beta's row "originates" when it became team (step 5, only its team values),
# and "is removed" when it went private again (step 11); steps 2 and 4 never existed for it.
TEAM_TIMELINE = [
    OPERATOR_TIMELINE[0],
    OPERATOR_TIMELINE[2],
    (5, "beta", "entity_origin", "commit", "operator", None, None,
     {"name": (None, "atlas"), "summary": (None, "shared atlas notes"),
      "visibility": (None, "team")}, []),
    *OPERATOR_TIMELINE[5:10],
    (11, "beta", "removed", "commit", "codex-bot", "s7", None, {}, []),
    OPERATOR_TIMELINE[11],
]  # fmt: skip


def rows(answer: dict[str, Any], commits: dict[int, str]) -> list[tuple[Any, ...]]:
    step = {v: k for k, v in commits.items()}
    return [
        (
            step[e["commit"]],
            e["agent_id"],
            e["kind"],
            e["op"],
            e["by"],
            e["session"],
            e["transcript"],
            {k: (v["from"], v["to"]) for k, v in e["changes"].items()},
            e["aliases_added"],
        )
        for e in answer["timeline"]
    ]


def test_the_operator_sees_every_version_of_the_entity_in_commit_order(story: Story) -> None:
    answer = trace_entity(story.library, "ATLAS", "private", True)
    assert rows(answer, story.commits) == OPERATOR_TIMELINE
    assert answer["schema_version"] == "bourdon.entity-trace/v1"
    assert (answer["matched"], answer["name"]) == (True, "Atlas")
    assert answer["known_by"] == ["alpha", "beta", "gamma"]
    assert answer["aliases"] == ["Atlas", "atl"] and answer["types"] == ["project"]
    assert answer["first_seen"] == answer["timeline"][0]["timestamp"]
    for event in answer["timeline"]:
        assert event["ref"] == event["commit"] and event["description"]
    beta = next(a for a in answer["attributions"] if a["agent_id"] == "beta")
    assert (beta["summary"], beta["visibility"]) == (PRIVATE_TEXT[2], "private")
    assert beta["first_version_id"] == story.commits[2]


def test_a_team_caller_never_learns_of_the_private_versions(story: Story) -> None:
    answer = trace_entity(story.library, "atlas", "team", False)
    assert rows(answer, story.commits) == TEAM_TIMELINE
    assert answer["known_by"] == ["alpha", "gamma"]  # beta's row is private now
    text = json.dumps(answer)
    for private in PRIVATE_TEXT:
        assert private not in text
    for step in (2, 4):  # the commits that only touched the private row
        assert story.commits[step] not in text
    beta = next(a for a in answer["attributions"] if a["agent_id"] == "beta")
    assert beta["summary"] == "shared atlas notes" and beta["current"] is False
    assert beta["first_version_id"] == story.commits[5] and beta["version_count"] == 2


def test_private_needs_include_private_and_says_so(story: Story) -> None:
    answer = trace_entity(story.library, "atlas", "private", False)
    assert rows(answer, story.commits) == TEAM_TIMELINE
    assert (
        answer["meta"]["access_level"] == "team" and "include_private" in answer["meta"]["warning"]
    )


def test_a_public_caller_sees_nothing_of_team_rows(story: Story) -> None:
    answer = trace_entity(story.library, "atlas", "public")
    assert answer["matched"] is False and answer["timeline"] == []


def test_one_agent_and_a_limit_keep_the_newest_events(story: Story) -> None:
    answer = trace_entity(story.library, "atlas", "private", True, agent="alpha", limit=2)
    assert [e["kind"] for e in answer["timeline"]] == ["removed", "restored"]
    assert answer["meta"]["limit"] == 2 and answer["meta"]["events"] == 5
    assert answer["meta"]["truncated"] is True
    assert trace_entity(story.library, "atlas", limit=10_000)["meta"]["limit"] == 1000


def test_a_later_name_or_alias_finds_the_whole_history_of_the_row(story: Story) -> None:
    # Now aliased "atl": the trace still starts where alpha first recorded the row.
    by_alias = trace_entity(story.library, "atl", "private", True)
    assert [(e["agent_id"], e["kind"]) for e in by_alias["timeline"]] == [
        ("alpha", "entity_origin"), ("alpha", "changed"), ("alpha", "aliases_gained"),
        ("alpha", "removed"), ("alpha", "restored"),
    ]  # fmt: skip
    # Renamed "Atlas Maps" (keeping "Atlas" as an alias): followed from before the rename,
    # and only in gamma, the one agent whose row has that name.
    renamed = trace_entity(story.library, "atlas maps")
    assert renamed["name"] == "Atlas Maps" and renamed["known_by"] == ["gamma"]
    assert [e["kind"] for e in renamed["timeline"]] == ["entity_origin", "renamed", "changed"]


def test_an_unknown_entity_is_unmatched_not_an_error(story: Story) -> None:
    from bourdon.errors import InputError

    for bad in ("", "   ", "x" * 513):
        with pytest.raises(InputError):
            trace_entity(story.library, bad)
    answer = trace_entity(story.library, "nobody-knows-me")
    assert answer["matched"] is False and answer["name"] == "nobody-knows-me"
    assert (answer["timeline"], answer["attributions"], answer["known_by"]) == ([], [], [])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_mcp_tool_answers_at_the_callers_level(story: Story) -> None:
    async with Client(create_server(story.library.root, watch=False), mode="legacy") as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        schema = listed["trace_entity"].input_schema
        assert schema["required"] == ["entity"]
        assert schema["properties"]["access_level"]["default"] == "team"
        assert schema["properties"]["include_private"]["default"] is False
        assert all(p.get("description") for p in schema["properties"].values())
        result = await client.call_tool("trace_entity", {"entity": "atlas"})
        assert not result.is_error and result.structured_content is not None
        assert rows(result.structured_content, story.commits) == TEAM_TIMELINE
        result = await client.call_tool(
            "trace_entity", {"entity": "atlas", "access_level": "private", "include_private": True}
        )
        assert result.structured_content is not None
        assert rows(result.structured_content, story.commits) == OPERATOR_TIMELINE
        unknown = await client.call_tool("trace_entity", {"entity": "ghost"})
        assert unknown.structured_content is not None
        assert unknown.structured_content["matched"] is False


def test_the_cli_prints_the_timeline_and_json(
    story: Story, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(story.library.root)
    assert main(["--library", root, "trace", "atlas"]) == 0
    out = capsys.readouterr().out
    assert "Atlas  (known now by: alpha, gamma)" in out
    assert "Atlas renamed to Atlas Maps in gamma memory" in out
    assert "PRIVATE-ONLY" not in out and story.commits[2][:12] not in out
    assert main(["--library", root, "--json", "trace", "atlas", "--private"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert rows(answer, story.commits) == OPERATOR_TIMELINE
    assert main(["--library", root, "trace", "ghost", "--agent", "alpha"]) == 0
    assert "No agent's memory ever held 'ghost'." in capsys.readouterr().out


def test_a_quarantined_member_traces_only_the_agents_it_may_read(story: Story) -> None:
    from bourdon.access.visibility import Scope

    answer = trace_entity(story.library, "atlas", scope=Scope(agents=frozenset({"gamma"})))
    assert {e["agent_id"] for e in answer["timeline"]} == {"gamma"}
    assert [a["agent_id"] for a in answer["attributions"]] == ["gamma"]
    text = json.dumps(answer)
    assert "alpha" not in text and "beta" not in text


# -- the shortcut that spares a parse: the text around each mention ----------------------------


def test_spans_change_when_the_row_or_the_policy_changes_and_only_then() -> None:
    from bourdon.formats import yamlio
    from bourdon.query.rowspan import spans

    def raw(summary: str, other: str = "x", default: str = "team") -> bytes:
        rows = [
            {"name": "Harbor", "summary": other},
            {"name": "Atlas", "aliases": ["atl"], "summary": summary},
            {"name": "Quay", "summary": f"{other} again"},
        ]
        policy = {"default": default}
        return yamlio.dump(manifest("a", known_entities=rows, visibility_policy=policy))

    names = ["atlas", "atl"]
    base = spans(raw("map"), names)
    assert base is not None
    assert spans(raw("map", other="y"), names) == base  # other rows changed: no parse needed
    assert spans(raw("maps"), names) != base
    assert spans(raw("map", default="private"), names) != base
    assert spans(raw("map ünicode"), names) is None  # not plain ASCII: parse it
    assert spans(raw('map "quoted \\" text"'), names) is None


def test_the_trace_is_the_same_whether_or_not_a_version_is_parsed(tmp_path: Path) -> None:
    # Many commits changing other rows, some changing the traced one: the shortcut must find
    # every change a full parse finds.
    library = make_library(tmp_path / "lib", sample=False)
    rows = [{"name": f"row-{n}", "summary": "first"} for n in range(5)]
    rows.append({"name": "Target", "summary": "v0"})
    library.commit("solo", manifest("solo", known_entities=rows))
    expected = []
    for n in range(12):
        if n % 4 == 3:
            library.commit("solo", {"known_entities": [{"name": "Target", "summary": f"v{n}"}]})
            expected.append(f"v{n}")
        else:
            library.commit(
                "solo", {"known_entities": [{"name": f"row-{n % 5}", "summary": str(n)}]}
            )
    answer = trace_entity(library, "target")
    changes = [e["changes"]["summary"]["to"] for e in answer["timeline"][1:]]
    assert changes == expected
    library.close()


def test_a_library_adopted_from_the_reference_traces_its_replayed_history(tmp_path: Path) -> None:
    from tests.test_adopt import two_agents

    two_agents(tmp_path / "lib")  # the reference's layout: agents/, versions/, provenance/
    with Library.init(tmp_path / "lib") as library:
        added = trace_entity(library, "NEWTHING")
        shared = trace_entity(library, "ledgerline")
    assert [(e["agent_id"], e["kind"], e["op"], e["timestamp"]) for e in added["timeline"]] == [
        ("alpha", "entity_origin", "commit", "2026-12-01T10:00:02Z"),
        ("alpha", "removed", "rollback", "2026-12-01T10:00:04Z"),
    ]
    assert added["known_by"] == []
    assert [
        (e["agent_id"], e["kind"], e["session"], e["transcript"]) for e in shared["timeline"]
    ] == [
        ("alpha", "entity_origin", "s-1", "t/1.jsonl"),
        ("beta", "entity_origin", None, None),
    ]
    assert shared["known_by"] == ["alpha", "beta"]
