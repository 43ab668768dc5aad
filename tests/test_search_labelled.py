"""Full-text search, scored category by category on hand-labelled queries.

tests/fixtures/search_labelled/queries.yaml was written from the bundled sample library before
the search engine existed (its RULES.md says how). Every query goes through the real MCP
server's ``search_federation`` at access level team, once over the sample library and once over
the same agents buried among the generated benchmark agents (20 x 1,000 entities x 500
sessions). Each category must find 0.9 of its expected rows in the top 3 on both. The data
checks at the top do not depend on search at all.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client

from bourdon.serve.server import create_server
from bourdon.store.provenance import Provenance
from bourdon.testing import make_large_library, make_library, sample_library_path

FOLDER = Path(__file__).parent / "fixtures" / "search_labelled"
QUERIES: list[dict[str, Any]] = yaml.safe_load((FOLDER / "queries.yaml").read_text())["queries"]
CATEGORIES = ("summary", "action", "note", "phrase", "prefix", "stem", "path")
FLOOR = 0.9
TOP = 3
GENERATED_WORDS = {"component", "number", "touched", "worked", "home", "ada", "src", "ledger"}

Row = tuple[str, str, str]  # kind, agent, label


def expected_rows(query: dict[str, Any]) -> list[Row]:
    rows = []
    for text in query["expect"]:
        kind, agent, label = text.split(" ", 2)
        rows.append((kind, agent, label))
    return rows


def sample_rows() -> set[Row]:
    """Every row of the sample library a team caller may see, read straight from the YAML."""
    rows: set[Row] = set()
    for path in (sample_library_path() / "agents").glob("*.l5.yaml"):
        data = yaml.safe_load(path.read_text())
        agent = data["agent"]["id"]
        policy = data.get("visibility_policy") or {}
        for section, kind, key in (
            ("known_entities", "entity", "name"),
            ("recent_sessions", "session", "date"),
            ("known_workstreams", "workstream", "name"),
            ("notes", "note", "date"),
        ):
            for row in data.get(section) or []:
                tags = set(row.get("tags") or [])
                if tags & set(policy.get("private_tags") or []):
                    continue
                level = row.get("visibility")
                if level is None and tags & set(policy.get("team_tags") or []):
                    level = "team"
                if (level or policy.get("default") or "team") == "private":
                    continue
                rows.add((kind, agent, str(row[key])))
    return rows


# -- the labelled set itself ---------------------------------------------------------------


def test_the_set_has_enough_queries_in_every_category() -> None:
    assert len(QUERIES) >= 60
    per_category: dict[str, int] = defaultdict(int)
    for query in QUERIES:
        assert query["category"] in CATEGORIES, query
        per_category[query["category"]] += 1
    assert all(per_category[c] >= 5 for c in CATEGORIES), per_category


def test_every_expected_row_exists_and_is_visible_to_a_team_caller() -> None:
    visible = sample_rows()
    for query in QUERIES:
        assert len(query["expect"]) <= TOP, query
        for row in expected_rows(query):
            assert row in visible, (query["q"], row)


def test_no_query_uses_a_word_of_the_generated_agents() -> None:
    for query in QUERIES:
        words = {w.strip('"*').casefold() for w in query["q"].replace("/", " ").split()}
        assert not words & GENERATED_WORDS, query["q"]


# -- scoring ---------------------------------------------------------------------------------


async def top_rows(root: Path, home: Path) -> dict[str, list[Row]]:
    server = create_server(root, watch=False, home=home, peers_file=False)
    found: dict[str, list[Row]] = {}
    async with Client(server) as client:
        for query in QUERIES:
            result = await client.call_tool(
                "search_federation", {"query": query["q"], "top_k": TOP, "access_level": "team"}
            )
            assert not result.is_error, (query["q"], result.content)
            answer = result.structured_content or {}
            rows = []
            for hit in answer["results"]:
                kind, agent, rest = hit["doc_id"].split(":", 2)
                label = rest.rpartition(":")[0]
                assert hit["source"] == kind
                rows.append((kind, agent, label))
            found[query["q"]] = rows
    return found


def scores(found: dict[str, list[Row]]) -> tuple[dict[str, float], list[str]]:
    """Per category, the share of expected rows in the top 3; a query expecting nothing scores
    one unit, won only by an empty answer."""
    hits: dict[str, int] = defaultdict(int)
    units: dict[str, int] = defaultdict(int)
    misses = []
    for query in QUERIES:
        got = found[query["q"]][:TOP]
        wanted = expected_rows(query)
        category = query["category"]
        if not wanted:
            units[category] += 1
            hits[category] += not got
            if got:
                misses.append(f"{query['q']!r}: expected nothing, got {got}")
            continue
        for row in wanted:
            units[category] += 1
            if row in got:
                hits[category] += 1
            else:
                misses.append(f"{query['q']!r}: {row} not in {got}")
    return {c: hits[c] / units[c] for c in CATEGORIES}, misses


def assert_every_category_reaches_the_floor(found: dict[str, list[Row]]) -> None:
    per_category, misses = scores(found)
    low = {c: round(s, 3) for c, s in per_category.items() if s < FLOOR}
    assert not low, f"categories under {FLOOR}: {low}\n" + "\n".join(misses)


def test_search_finds_the_labelled_rows_on_the_sample_library(tmp_path: Path) -> None:
    make_library(tmp_path / "library").close()
    found = anyio.run(top_rows, tmp_path / "library", tmp_path / "home")
    assert_every_category_reaches_the_floor(found)


@pytest.fixture(scope="module")
def large_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("large") / "library"
    library = make_large_library(root)
    for path in sorted((sample_library_path() / "agents").glob("*.l5.yaml")):
        library.import_manifest(
            path.read_bytes(), what=path.name, provenance=Provenance(caller="fixture")
        )
    library.close()
    return root


def test_search_finds_the_labelled_rows_among_thirty_thousand_generated_rows(
    large_library: Path, tmp_path: Path
) -> None:
    found = anyio.run(top_rows, large_library, tmp_path / "home")
    assert_every_category_reaches_the_floor(found)
