"""Turn-start recognition: quality on a labelled prompt set, the rules, the bounded fragment."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import OSA

from bourdon.formats import yamlio
from bourdon.query import context, english
from bourdon.query.fuzzy import NearIndex
from bourdon.query.index import Index
from bourdon.query.recognition import Mention, NameTable, Recognizer
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

    english.common_words()  # the word list is read once per process, on first use
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


@pytest.mark.parametrize(("budget", "min_length"), [(1, 5), (2, 6)])
def test_merged_near_indexes_find_what_one_index_of_all_their_words_finds(
    budget: int, min_length: int
) -> None:
    rng = random.Random(budget + 10)
    letters = "abcde"
    words = [
        "".join(rng.choice(letters) for _ in range(rng.randrange(4, 12))) for _ in range(1500)
    ]
    thirds = [words[:700], words[500:1100], words[1000:]]  # overlapping, as agents' words do
    merged = NearIndex.merged([NearIndex(t, budget=budget, min_length=min_length) for t in thirds])
    whole = NearIndex(words, budget=budget, min_length=min_length)
    for _ in range(300):
        query = "".join(rng.choice(letters) for _ in range(rng.randrange(4, 12)))
        assert merged.near(query) == whole.near(query)
    assert merged.near(words[3]) == whole.near(words[3])


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


# -- The rules of english-rules.md, case by case (docs/federation.md says them for users) ------

Entity = tuple[str, str, tuple[str, ...]]  # name, type, aliases


def recognizer(*entities: Entity) -> Recognizer:
    """A recognizer over these entities, each keyed by its name."""
    return Recognizer.of(
        (name, text, is_alias, name, kind)
        for name, kind, aliases in entities
        for text, is_alias in ((name, False), *((a, True) for a in aliases))
    )


def names_in(found: Recognizer, prompt: str) -> set[str]:
    return {str(m.key) for m in found.mentions(prompt)}


KETTLE: Entity = ("Kettle", "service", ())
ANVIL: Entity = ("Anvil", "tool", ())
TIDE_POOL: Entity = ("Tide Pool", "project", ())
TIDE_POOL_API: Entity = ("Tide Pool API", "service", ())
LANTERN_NODE: Entity = ("Lantern node", "service", ())
ZEPHYRINE: Entity = ("Zephyrine", "project", ())
RULES = recognizer(
    KETTLE,
    ANVIL,
    TIDE_POOL,
    TIDE_POOL_API,
    LANTERN_NODE,
    ZEPHYRINE,
    ("Kafka", "library", ()),
    ("docker", "tool", ()),
    ("Pass", "product", ()),
    ("Figma", "product", ()),
    ("react", "library", ()),
    ("Latext", "library", ()),
    ("Hypps", "library", ()),
    ("Dana", "person", ()),
    ("bourdon", "project", ("bdn", "bd")),
    ("Summary Service", "project", ("summary",)),
    ("Priya Raman", "person", ("Priya",)),
    ("Priya Shah", "person", ("Priya",)),
    ("Tomasz Kowalski", "person", ("Tomasz",)),
    ("Marco Bianchi", "person", ("Marco",)),
    ("harbor-gateway", "project", ()),
)


@pytest.mark.parametrize(
    ("prompt", "expect"),
    [
        # Rule 1: tokens are runs of letters and digits; `_`, `-`, `.`, `/` separate them.
        ("the bug is in src/tide_pool/main.py", {"Tide Pool"}),
        ("the bug is in src/tide_pool/api.py", {"Tide Pool API"}),
        ("import tide_pool", {"Tide Pool"}),
        ("TidePool is a CamelCase word of its own", set()),
        # Rule 2: a common English word names an entity only as a proper noun.
        ("put the kettle on", set()),
        ("an anvil of a problem", set()),
        ("ask the Kettle team", {"Kettle"}),
        ("Kettle is down", set()),
        ("Done. Kettle is down again", set()),
        ("Why? Kettle again", set()),
        ("one thing: Kettle again", set()),
        ("the list:\n- Kettle broke\n* Anvil too\n1. Kettle", set()),
        ("first line\nKettle on the second", set()),
        ("**Kettle** is down", set()),
        ("we moved `kettle` to the new cluster", {"Kettle"}),
        ("```\nkettle restart\n```", {"Kettle"}),
        ("see services/kettle/main.go", {"Kettle"}),
        ("call kettle.client from the worker", {"Kettle"}),
        ("the kettle_client handle", {"Kettle"}),
        ("npm install @acme/kettle", {"Kettle"}),
        ("open https://example.com/tools/anvil/readme", {"Anvil"}),
        ("a kettle-shaped cloud", set()),
        ("we rebuilt Tide Pool", {"Tide Pool"}),
        ("Tide Pool is down", {"Tide Pool"}),
        ("the tide pool at low tide", set()),
        ("Tide pool levels rose", set()),
        ("three Lantern nodes", {"Lantern node"}),
        ("zephyrine is green", {"Zephyrine"}),
        ("ZEPHYRINE is green", {"Zephyrine"}),
        ("is the kafka consumer lagging?", {"Kafka"}),
        ("Docker ate the disk", {"docker"}),
        ("rebuild it with docker", {"docker"}),
        ("is harbor-gateway up?", {"harbor-gateway"}),
        ("a harbor gateway on the coast", set()),
        # Rule 3: short aliases, common-word aliases and shared first names never alone.
        ("bd is slow", set()),
        ("bdn is slow", {"bourdon"}),
        ("write a summary", set()),
        ("ask Summary about it", set()),
        ("use `summary` here", set()),
        ("the Summary Service is down", {"Summary Service"}),
        ("I need to ask Priya", set()),
        ("ask priya shah and Priya Raman", {"Priya Shah", "Priya Raman"}),
        ("ask Tomasz about it", {"Tomasz Kowalski"}),
        ("Ask Marco when he is back", set()),
        ("Ask Marco Bianchi when he is back", {"Marco Bianchi"}),
        # Rule 4: possessives and plurals; the common-word rule on the word as written.
        ("I read Dana's review", {"Dana"}),
        ("I read Dana\u2019s review", {"Dana"}),
        ("Dana's review", set()),
        ("the Zephyrines", {"Zephyrine"}),
        ("the Zephyrines' owners", {"Zephyrine"}),
        ("the kettles are boiling", set()),
        ("two Kettles disagree", {"Kettle"}),
        # Rule 5: one typo in a token of six letters or more, never one that is itself a word.
        ("Zephyrin is red", {"Zephyrine"}),
        ("is zephyirne red?", {"Zephyrine"}),
        ("npm install react@latest", {"react"}),
        ("the latest build", set()),
        ("fetch https://example.com", set()),
        ("ask the Ketlte team", {"Kettle"}),
        ("put the ketlte on", set()),
        ("kafk and kafak", set()),  # five letters or fewer: exact only
        # Rule 6: whole tokens only.
        ("my password leaked", set()),
        ("a Figmaesque mockup", set()),
        ("a Pass for the gate", {"Pass"}),
        # Rule 7: the longest overlapping match wins; separate nested mentions both count.
        ("the Tide Pool API is slow", {"Tide Pool API"}),
        ("Tide Pool API and the rest of Tide Pool", {"Tide Pool API", "Tide Pool"}),
    ],
)
def test_the_rules_of_english(prompt: str, expect: set[str]) -> None:
    assert names_in(RULES, prompt) == expect


def test_the_longest_match_wins_where_two_names_overlap() -> None:
    found = recognizer(TIDE_POOL, ("Pool API Gateway", "service", ()))
    assert names_in(found, "the Tide Pool API Gateway") == {"Pool API Gateway"}
    mentions = found.mentions("we rebuilt Tide Pool API Gateway")
    assert [(m.key, m.start, m.length) for m in mentions] == [("Pool API Gateway", 3, 3)]


def test_a_mention_says_how_it_was_found() -> None:
    kinds = {
        prompt: [m.kind for m in RULES.mentions(prompt)]
        for prompt in ("zephyrine", "bdn", "Zephyrin", "the Zephyrines")
    }
    assert kinds == {
        "zephyrine": ["exact"],
        "bdn": ["alias"],
        "Zephyrin": ["fuzzy"],
        "the Zephyrines": ["fuzzy"],
    }


def test_a_first_name_known_to_one_person_counts_until_a_second_has_it() -> None:
    one = recognizer(("Ines Alder", "person", ("Ines",)))
    assert names_in(one, "ask Ines") == {"Ines Alder"}
    two = Recognizer(
        [
            NameTable.build([("a", "Ines Alder", False, "Ines Alder", "person"),
                             ("a", "Ines", True, "Ines Alder", "person")]),
            NameTable.build([("b", "Ines Brook", False, "Ines Brook", "person"),
                             ("b", "Ines", True, "Ines Brook", "person")]),
        ]
    )
    assert names_in(two, "ask Ines") == set()
    assert names_in(two, "ask Ines Brook") == {"b"}
    # The same person known to two agents is one person: their first name still counts.
    same = Recognizer(
        [
            NameTable.build([("a", "Ines Alder", False, "Ines Alder", "person"),
                             ("a", "Ines", True, "Ines Alder", "person")]),
            NameTable.build([("b", "Ines Alder", False, "Ines Alder", "person"),
                             ("b", "Ines", True, "Ines Alder", "person")]),
        ]
    )
    assert names_in(same, "ask Ines") == {"a", "b"}


# -- The common English words: wordfreq's list, shipped ---------------------------------------


def test_the_shipped_common_words_are_wordfreqs() -> None:
    # The oracle: the list bourdon ships is exactly what the script derives from wordfreq.
    pytest.importorskip("wordfreq")
    import importlib.util

    script = Path(__file__).resolve().parent.parent / "scripts" / "common_words.py"
    spec = importlib.util.spec_from_file_location("common_words_script", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert english.WORDS_FILE.read_text(encoding="utf-8") == module.render()


@pytest.mark.parametrize(
    ("word", "common"),
    [
        ("kettle", True), ("Anvil", True), ("lantern", True), ("pass", True), ("tide", True),
        ("pool", True), ("python", True), ("django", True), ("dana", True), ("docker", False),
        ("kafka", False), ("redis", False), ("priya", False), ("zephyrine", False),
    ],
)
def test_common_words_are_those_of_the_rules(word: str, common: bool) -> None:
    assert english.is_common(word) is common


def test_the_common_words_ship_inside_the_package() -> None:
    # The wheel carries the package folder; the list sits in it, beside the module reading it.
    assert english.WORDS_FILE.parent == Path(english.__file__).parent
    assert len(english.common_words()) > 20_000


# -- Properties -------------------------------------------------------------------------------

FILLER = "please look at the failing tests and tell me what changed since then".split()
uncommon = st.text(alphabet="bcdfghjklmnpqrstvwxz", min_size=4, max_size=12).filter(
    lambda w: not english.is_common(w)
)


@settings(max_examples=150, deadline=None)
@given(
    name=uncommon,
    at=st.integers(min_value=0, max_value=len(FILLER)),
    casing=st.sampled_from([str.lower, str.upper, str.capitalize, str.title]),
    dressing=st.sampled_from(["{}", "({})", "**{}**", "`{}`", "{}.", "{}'s", "src/{}/x.py"]),
)
def test_a_name_that_is_no_common_word_is_found_in_any_case_and_place(
    name: str, at: int, casing: Any, dressing: str
) -> None:
    words = list(FILLER)
    words.insert(at, dressing.format(casing(name)))
    found = recognizer((name, "project", ()))
    assert names_in(found, " ".join(words)) == {name}


@settings(max_examples=100, deadline=None)
@given(
    names=st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=8),
    prompt=st.text(max_size=200),
)
def test_recognition_never_answers_a_key_it_was_not_given(names: list[str], prompt: str) -> None:
    given_keys = {f"key-{i}" for i in range(len(names))}
    found = Recognizer.of(
        (f"key-{i}", name, i % 2 == 1, name, "person" if i % 3 == 0 else "project")
        for i, name in enumerate(names)
    )
    text = " ".join([prompt, *names])
    assert {m.key for m in found.mentions(text)} <= given_keys


# -- Composition: one table per agent, merged --------------------------------------------------


def table(key: str, *names: str) -> NameTable:
    return NameTable.build((key, n, False, n, "project") for n in names)


def test_a_recognizer_of_tables_finds_what_one_of_every_name_finds() -> None:
    parts = [table("a", "bourdon", "Tide Pool"), table("b", "Tide Pool", "ledgerline")]
    merged = Recognizer(parts)
    prompt = "we rebuilt Tide Pool for bourdon and ledgerline"
    assert sorted((m.key, m.phrase) for m in merged.mentions(prompt)) == [
        ("a", "bourdon"),
        ("a", "tide pool"),
        ("b", "ledgerline"),
        ("b", "tide pool"),
    ]


def test_a_changed_table_is_seen_through_the_corrections_carried_over() -> None:
    # "zephyrin" is first no name at all (remembered as such); once a table adds Zephyrine,
    # the recognizer built from the old one must not trust that memory.
    old = Recognizer([table("a", "bourdon"), table("b", "ledgerline")])
    assert old.mentions("zephyrin and bourdn") == [
        Mention("a", "bourdon", "fuzzy", 2, 1)
    ]
    new = Recognizer([table("a", "bourdon"), table("b", "ledgerline", "Zephyrine")], previous=old)
    assert [(m.key, m.phrase) for m in new.mentions("zephyrin and bourdn")] == [
        ("b", "zephyrine"),
        ("a", "bourdon"),
    ]
    gone = Recognizer([table("a", "bourdon"), table("b", "ledgerline")], previous=new)
    assert [m.key for m in gone.mentions("zephyrin and bourdn")] == ["a"]


def test_the_cost_does_not_grow_with_the_library() -> None:
    # Built over 20,000 names, a prompt is still answered by dictionary lookups: the same
    # handful of candidate phrases is tried whatever the library's size.
    small = Recognizer([table("a", *(f"zorblat-{i} service" for i in range(10)))])
    large = Recognizer([table("a", *(f"zorblat-{i} service" for i in range(20_000)))])
    prompt = "restart zorblat-7 service and check the logs of everything else " * 5
    assert small.mentions(prompt) == large.mentions(prompt) != []
