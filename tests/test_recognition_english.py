"""Turn-start recognition, scored category by category on hand-labelled everyday prompts.

Every ``world_*.yaml`` in tests/fixtures/recognition_english is a small team's world (agents
and their known entities) and prompts written by hand, each labelled with the entities it
names by that folder's RULES.md. Each world is imported into a real library and served by the
real MCP server in-process; every prompt goes through ``prepare_recognition_context`` as a
turn start would. Precision and recall are counted over (prompt, entity) pairs, per category,
over all worlds together. The data checks at the top do not depend on recognition at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from wordfreq import zipf_frequency

from bourdon.formats import yamlio
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.testing import manifest

FOLDER = Path(__file__).parent / "fixtures" / "recognition_english"
WORLDS = sorted(FOLDER.glob("world_*.yaml"))

# The categories of a world file, and the fewest prompts each must hold in every file.
MINIMUM = {
    "exact": 20,
    "other-case": 15,
    "alias": 15,
    "plural-possessive": 15,
    "typo": 20,
    "code-path": 20,
    "url-package": 15,
    "multi-entity": 15,
    "long": 12,
    "visibility": 15,
    "negative-lowercase": 25,
    "negative-sentence-start": 20,
}
NEGATIVE = ("negative-lowercase", "negative-sentence-start")
SCORED = [category for category in MINIMUM if category not in NEGATIVE]
FLOOR = 0.97  # precision and recall every scored category must reach
FALSE_ALARMS = 0.03  # the share of prompts naming nothing that may still get a match
COMMON = 3.0  # wordfreq zipf at which a word is common English (RULES.md rule 2)
LONG_WORDS = 150
TOTAL_PROMPTS = 400
LEVELS = ("team", "public")
TYPES = {"project", "library", "person", "service", "file", "decision", "topic", "tool"}
VISIBILITIES = {"public", "team", "private"}
AGENT_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
PROMPT_ID = re.compile(r"[a-z][0-9]{3}")


@dataclass(frozen=True)
class Prompt:
    world: str
    id: str
    category: str
    text: str
    expect: frozenset[str]
    level: str


def load(path: Path) -> dict[str, Any]:
    data = yamlio.load(path.read_bytes(), what=path.name)
    assert isinstance(data, dict), f"{path.name} is not a mapping"
    return data


def prompts_of(path: Path) -> list[Prompt]:
    return [
        Prompt(
            world=path.name,
            id=str(row["id"]),
            category=str(row["category"]),
            text=str(row["text"]),
            expect=frozenset(row.get("expect") or []),
            level=str(row.get("level", "team")),
        )
        for row in load(path)["prompts"]
    ]


def names_of(path: Path) -> set[str]:
    return {e["name"] for agent in load(path)["agents"] for e in agent["entities"]}


def is_common(phrase: str) -> bool:
    return all(zipf_frequency(word, "en") >= COMMON for word in phrase.split())


ALL = [p for path in WORLDS for p in prompts_of(path)]


def test_there_is_a_world() -> None:
    assert WORLDS, f"no world_*.yaml in {FOLDER}"


def test_at_least_400_prompts_over_all_worlds() -> None:
    assert len(ALL) >= TOTAL_PROMPTS, f"{len(ALL)} prompts in {[w.name for w in WORLDS]}"


def test_prompt_ids_are_unique() -> None:
    seen: dict[str, str] = {}
    for p in ALL:
        assert PROMPT_ID.fullmatch(p.id), (
            f"{p.world}: prompt id {p.id!r} is not a letter and 3 digits"
        )
        assert p.id not in seen, f"{p.id} in {p.world} and {seen[p.id]}"
        seen[p.id] = p.world


@pytest.mark.parametrize("path", WORLDS, ids=lambda p: p.name)
def test_every_category_is_known_and_full_enough(path: Path) -> None:
    counts = {category: 0 for category in MINIMUM}
    for p in prompts_of(path):
        assert p.category in MINIMUM, f"{p.id}: unknown category {p.category!r}"
        counts[p.category] += 1
    short = {c: n for c, n in counts.items() if n < MINIMUM[c]}
    assert not short, f"{path.name}: too few prompts in {short} (minimums {MINIMUM})"


@pytest.mark.parametrize("path", WORLDS, ids=lambda p: p.name)
def test_entities_are_well_formed(path: Path) -> None:
    for agent in load(path)["agents"]:
        assert AGENT_ID.fullmatch(agent["id"]), agent["id"]
        for e in agent["entities"]:
            assert e["type"] in TYPES, e
            assert e["visibility"] in VISIBILITIES, e
            assert isinstance(e.get("aliases", []), list), e


@pytest.mark.parametrize("path", WORLDS, ids=lambda p: p.name)
def test_expected_names_are_entities_of_the_world(path: Path) -> None:
    names = names_of(path)
    for p in prompts_of(path):
        assert p.level in LEVELS, f"{p.id}: level {p.level!r}"
        assert p.expect <= names, f"{p.id}: not entity names {sorted(p.expect - names)}"


def test_long_prompts_are_long() -> None:
    for p in ALL:
        if p.category == "long":
            assert len(p.text.split()) >= LONG_WORDS, f"{p.id}: {len(p.text.split())} words"


def test_lowercase_negatives_use_a_common_word_name_in_its_ordinary_sense() -> None:
    for path in WORLDS:
        common = {n.lower() for n in names_of(path) if is_common(n.lower())}
        for p in prompts_of(path):
            if p.category == "negative-lowercase":
                used = [n for n in common if re.search(rf"\b{re.escape(n)}\b", p.text)]
                assert used, f"{p.id}: no common-word name written lower-case in {p.text!r}"


# Recognition, as the served tool answers it.

Answers = dict[tuple[str, str], set[str]]  # (world file, prompt id) -> entity names matched


async def recognise(root: Path, home: Path, prompts: list[Prompt]) -> Answers:
    server = create_server(root, watch=False, home=home, peers_file=False)
    got: Answers = {}
    async with Client(server) as client:
        for p in prompts:
            args = {"prompt": p.text, "access_level": p.level}
            result = await client.call_tool("prepare_recognition_context", args)
            assert not result.is_error, f"{p.id}: {result.content}"
            answer = result.structured_content or {}
            got[p.world, p.id] = {m["name"] for m in answer["matched_entities"]}
    return got


@pytest.fixture(scope="module")
def recognised(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Answers]:
    """Every prompt's recognised entity names, each world served once for the module."""
    got: Answers = {}
    with pytest.MonkeyPatch.context() as env:
        home = tmp_path_factory.mktemp("english-home")
        env.setenv("HOME", str(home))
        env.setenv("BOURDON_HOME", str(home / ".bourdon"))
        env.setenv("BOURDON_LIBRARY", str(home / "agent-library"))
        for path in WORLDS:
            tmp = tmp_path_factory.mktemp(path.stem)
            library = Library.init(tmp / "library")
            try:
                for agent in load(path)["agents"]:
                    raw = yamlio.dump(manifest(agent["id"], known_entities=agent["entities"]))
                    library.import_manifest(raw, what=f"{agent['id']}.yaml")
            finally:
                library.close()
            got |= anyio.run(recognise, tmp / "library", tmp / "home", prompts_of(path))
        yield got


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def score(prompts: list[Prompt], got: Answers) -> tuple[Score, list[Prompt]]:
    total, wrong = Score(), []
    for p in prompts:
        found = got[p.world, p.id]
        total.tp += len(found & p.expect)
        total.fp += len(found - p.expect)
        total.fn += len(p.expect - found)
        if found != p.expect:
            wrong.append(p)
    return total, wrong


def table(got: Answers, wrong: list[Prompt]) -> str:
    lines = [f"{'category':<24} {'P':>6} {'R':>6}"]
    for category in MINIMUM:
        s, _ = score([p for p in ALL if p.category == category], got)
        lines.append(f"{category:<24} {s.precision:6.3f} {s.recall:6.3f}")
    for p in wrong:
        text = " ".join(p.text.split())[:100]
        lines.append(f"- {p.id} [{p.level}] {text!r}")
        lines.append(f"    expected {sorted(p.expect)}, got {sorted(got[p.world, p.id])}")
    return "\n".join(lines)


@pytest.mark.parametrize("category", SCORED)
def test_category_precision_and_recall(category: str, recognised: Answers) -> None:
    s, wrong = score([p for p in ALL if p.category == category], recognised)
    assert s.precision >= FLOOR and s.recall >= FLOOR, (
        f"{category}: precision {s.precision:.3f}, recall {s.recall:.3f} "
        f"(floor {FLOOR})\n{table(recognised, wrong)}"
    )


def test_prompts_naming_nothing_rarely_match(recognised: Answers) -> None:
    empty = [p for p in ALL if not p.expect]
    matched = [p for p in empty if recognised[p.world, p.id]]
    share = len(matched) / len(empty) if empty else 0.0
    assert share <= FALSE_ALARMS, (
        f"{len(matched)} of {len(empty)} prompts naming nothing got a match ({share:.1%}, "
        f"at most {FALSE_ALARMS:.0%})\n{table(recognised, matched)}"
    )
