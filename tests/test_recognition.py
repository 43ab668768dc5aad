"""Turn-start recognition: quality on a labelled prompt set, the rules, the bounded fragment."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from rapidfuzz.distance import OSA

from bourdon.formats import yamlio
from bourdon.query import context
from bourdon.query.fuzzy import NearIndex
from bourdon.query.index import Index
from bourdon.query.recognition import Recognizer
from bourdon.store.library import Library
from bourdon.testing import manifest

FIXTURE = Path(__file__).parent / "fixtures" / "recognition.yaml"


@pytest.fixture(scope="module")
def labelled() -> dict[str, Any]:
    data: dict[str, Any] = yamlio.load(FIXTURE.read_bytes())
    return data


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, labelled: dict[str, Any]) -> Index:
    root = tmp_path_factory.mktemp("recognition") / "lib"
    library = Library.init(root)
    entities = labelled["entities"]
    # Two agents know the entities, so answers aggregate across agents.
    library.import_manifest(yamlio.dump(manifest("agent-a", known_entities=entities[::2])))
    library.import_manifest(yamlio.dump(manifest("agent-b", known_entities=entities[1::2])))
    library.import_manifest(yamlio.dump(manifest("agent-c", known_entities=entities[:5])))
    library.close()
    idx = Index(root)
    idx.refresh()
    return idx


def recognised(index: Index, prompt: str) -> set[str]:
    answer = context.prepare_recognition_context(index, prompt)
    return {m["name"] for m in answer["matched_entities"]}


def test_the_labelled_set_is_large_and_varied(labelled: dict[str, Any]) -> None:
    prompts = labelled["prompts"]
    kinds = {p["why"] for p in prompts}
    assert len(prompts) >= 200
    assert {
        "exact",
        "other case",
        "alias",
        "plural",
        "one typo",
        "code span",
        "path",
        "nothing known",
    } <= kinds


def test_recognition_has_precision_and_recall_of_at_least_95_percent(
    index: Index, labelled: dict[str, Any]
) -> None:
    tp = fp = fn = 0
    misses: list[str] = []
    for case in labelled["prompts"]:
        got = recognised(index, case["prompt"])
        want = set(case["expect"])
        tp += len(got & want)
        fp += len(got - want)
        fn += len(want - got)
        if got != want:
            misses.append(
                f"{case['why']}: {case['prompt']!r} -> {sorted(got)}, want {sorted(want)}"
            )
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(
        f"\nprecision {precision:.3f} recall {recall:.3f} over {len(labelled['prompts'])} "
        f"prompts ({tp} hits, {fp} false, {fn} missed)"
    )
    assert precision >= 0.95, "\n".join(misses)
    assert recall >= 0.95, "\n".join(misses)


@pytest.mark.parametrize(
    "prompt",
    [
        "Give me a summary of the changes.",
        "I need to ask Priya about it.",
        "ll is my shell alias",
        "Refactor the parser to stream tokens.",
        "",
    ],
)
def test_a_prompt_with_no_known_entity_matches_nothing(index: Index, prompt: str) -> None:
    answer = context.prepare_recognition_context(index, prompt)
    assert answer["matched_entities"] == []
    assert answer["prompt_context"] == "" and answer["recognition"] == ""


def test_matches_are_ranked_exact_then_alias_then_near_miss(index: Index) -> None:
    answer = context.prepare_recognition_context(
        index, "Compare pydantc with hgw and bourdon, please"
    )
    kinds = [m["match"] for m in answer["matched_entities"]]
    assert kinds == sorted(kinds, key=["exact", "alias", "fuzzy"].index)
    names = [m["name"] for m in answer["matched_entities"]]
    assert names[0] == "bourdon" and set(names) == {"bourdon", "harbor-gateway", "pydantic"}


def test_an_entity_known_to_more_agents_ranks_first_among_equals(index: Index) -> None:
    # bourdon (agent-a and agent-c) against pydantic (one agent): both exact.
    answer = context.prepare_recognition_context(index, "pydantic or bourdon?")
    assert answer["matched_entities"][0]["name"] == "bourdon"


def test_prompt_context_is_bounded_and_every_line_is_marked(index: Index) -> None:
    everything = " ".join(e["name"] for e in yamlio.load(FIXTURE.read_bytes())["entities"])
    answer = context.prepare_recognition_context(index, everything)
    fragment = answer["prompt_context"]
    assert len(fragment) <= 1200 and len(fragment.splitlines()) <= 12
    assert all(line.startswith("[bourdon") for line in fragment.splitlines())
    assert all("[bourdon:agent-" in line for line in fragment.splitlines()[1:])
    assert answer["meta"]["max_chars"] == 1200 and answer["meta"]["max_lines"] == 12
    assert answer["meta"]["truncated"] is True
    small = context.prepare_recognition_context(index, everything, max_chars=300, max_lines=3)
    assert len(small["prompt_context"]) <= 300 and len(small["prompt_context"].splitlines()) <= 3


def test_the_answer_has_the_reference_keys_and_measures_itself(index: Index) -> None:
    answer = context.prepare_recognition_context(index, "ship ledgerline")
    for key in (
        "prompt",
        "access_level",
        "include_private",
        "recognition",
        "matched_entities",
        "recognition_latency_us",
        "prompt_context",
        "hydration_scheduled",
    ):
        assert key in answer
    assert "drifting_surfaces" not in answer  # present only when a reader stopped yielding
    match = answer["matched_entities"][0]
    assert {"name", "type", "agents", "source_agents", "match"} <= set(match)
    assert answer["recognition_latency_us"] > 0
    assert "ledgerline" in answer["recognition"]


def test_recognition_reads_no_file(index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins
    import os

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("recognition touched the file system")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(os, "stat", refuse)
    monkeypatch.setattr(os, "scandir", refuse)
    answer = context.prepare_recognition_context(index, "bourdon and ledgerline")
    assert {m["name"] for m in answer["matched_entities"]} == {"bourdon", "ledgerline"}


def test_drifting_surfaces_appear_only_when_a_reader_stopped(tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    library.import_manifest(yamlio.dump(manifest("codex", known_entities=[{"name": "orbit"}])))
    marks = tmp_path / "lib" / ".bourdon" / "watermarks"
    marks.mkdir(parents=True)
    (marks / "codex.json").write_text(
        json.dumps(
            {
                "reader": "codex",
                "drifting": {
                    "checked_at": "2026-11-30T09:00:00Z",
                    "reason": "the store yielded 0 rows after 3 exports with rows",
                },
            }
        ),
        encoding="utf-8",
    )
    idx = Index(tmp_path / "lib")
    idx.refresh()
    answer = context.prepare_recognition_context(idx, "orbit")
    assert answer["drifting_surfaces"] == [
        {
            "agent": "codex",
            "checked_at": "2026-11-30T09:00:00Z",
            "reason": "the store yielded 0 rows after 3 exports with rows",
        }
    ]
    (marks / "codex.json").write_text("{not json", encoding="utf-8")
    idx.mark_dirty()
    idx.refresh()
    assert "drifting_surfaces" not in context.prepare_recognition_context(idx, "orbit")


def test_private_rows_are_not_recognised_below_private(tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    library.import_manifest(
        yamlio.dump(
            manifest(
                "codex",
                known_entities=[
                    {"name": "nightjar", "visibility": "private", "summary": "CANARY-PRIVATE"},
                    {"name": "kestrel", "visibility": "team"},
                ],
            )
        )
    )
    idx = Index(tmp_path / "lib")
    idx.refresh()
    team = context.prepare_recognition_context(idx, "nightjar and kestrel")
    assert [m["name"] for m in team["matched_entities"]] == ["kestrel"]
    assert "CANARY" not in json.dumps(team)
    mine = context.prepare_recognition_context(idx, "nightjar and kestrel", "private", True)
    assert {m["name"] for m in mine["matched_entities"]} == {"nightjar", "kestrel"}


def test_short_and_common_word_aliases_need_more_than_themselves() -> None:
    recognizer = Recognizer(
        [
            (1, "Summary Service", False, "Summary Service"),
            (1, "summary", True, "Summary Service"),
            (2, "ab", True, "Alpha Beta"),
            (2, "Alpha Beta", False, "Alpha Beta"),
            (3, "Click", False, "Click"),
        ]
    )
    assert recognizer.mentions("write a summary") == []
    assert recognizer.mentions("ab testing") == []
    assert recognizer.mentions("click the link") == []
    assert [m.key for m in recognizer.mentions("use `summary` here")] == [1]
    assert [m.key for m in recognizer.mentions("built with Click")] == [3]
    assert [m.key for m in recognizer.mentions("the summary service is down")] == [1]


def test_the_cost_does_not_grow_with_the_library() -> None:
    # Built over 20,000 names, a prompt is still answered by dictionary lookups: the same
    # handful of candidate phrases is tried whatever the library's size.
    small = Recognizer([(i, f"alpha-{i} service", False, f"alpha-{i} service") for i in range(10)])
    large = Recognizer(
        [(i, f"alpha-{i} service", False, f"alpha-{i} service") for i in range(20_000)]
    )
    prompt = "restart alpha-7 service and check the logs of everything else " * 5
    assert small.mentions(prompt) == large.mentions(prompt)


@pytest.mark.parametrize(("budget", "min_length"), [(1, 4), (2, 6)])
def test_the_near_index_finds_every_word_a_full_scan_finds(budget: int, min_length: int) -> None:
    # Few letters, so words are often near each other: swaps across the cuts between parts
    # included, which the pigeonhole lookup must not miss.
    rng = random.Random(budget)
    letters = "abcde"
    words = sorted(
        {"".join(rng.choice(letters) for _ in range(rng.randrange(3, 14))) for _ in range(2000)}
    )
    near = NearIndex(words, budget=budget, min_length=min_length)
    for _ in range(300):
        query = list(rng.choice(words))
        for _ in range(rng.randrange(budget + 2)):
            at = rng.randrange(len(query) - 1)
            query[at], query[at + 1] = query[at + 1], query[at]
            if rng.random() < 0.5:
                query[rng.randrange(len(query))] = rng.choice(letters)
        text = "".join(query)
        scan = sorted(
            (w, OSA.distance(text, w))
            for w in words
            if len(w) >= min_length and w != text and OSA.distance(text, w) <= budget
        )
        assert near.near(text) == sorted(scan, key=lambda item: (item[1], item[0]))


def test_find_and_recognition_count_a_swap_of_neighbours_as_one_edit(tmp_path: Path) -> None:
    library = Library.init(tmp_path / "lib")
    library.import_manifest(
        yamlio.dump(manifest("codex", known_entities=[{"name": "bourdon", "type": "project"}]))
    )
    idx = Index(tmp_path / "lib")
    idx.refresh()
    # One edit of seven letters, where counting a swap as two edits would give 64.3.
    assert [(m.row.name, m.kind, m.score) for m in idx.match("borudon")] == [
        ("bourdon", "fuzzy", 77.1)
    ]
    assert recognised(idx, "is borudon green?") == {"bourdon"}
