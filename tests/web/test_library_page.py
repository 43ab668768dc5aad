"""The library page through a real ``bourdon ui``: rows by kind and by visibility (a private
column only for the operator at private), links that keep the level, and the health problems
``memory_status`` reports to each caller."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx2
import pytest

from tests.support.webui import UiServer
from tests.web import agentlib
from tests.web.agentlib import CANARY

BROKEN = "agents/zinc.l5.yaml"  # a hand edit that does not parse: the server skips it


def _break(root: Path) -> None:
    (root / BROKEN).write_text("spec_version: [unclosed\n", encoding="utf-8")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[UiServer, str]]:
    yield from agentlib.serve(tmp_path_factory.mktemp("library-page"), _break)


operator, member = agentlib.operator, agentlib.member


def row_of(html: str, agent: str) -> list[str]:
    """The cells of an agent's row, as text."""
    found = re.search(rf'<th scope="row"><a href="[^"]*">{agent}</a>.*?</tr>', html, re.S)
    assert found, f"no row for {agent}"
    cells = re.findall(r"<td>(.*?)</td>", found.group(0), re.S)
    return [re.sub(r"<[^>]+>", "", c).strip() for c in cells]


def headers(html: str) -> list[str]:
    head = html.split("<thead>", 1)[1].split("</thead>", 1)[0]
    return [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th [^>]*>(.*?)</th>", head)]


def test_rows_are_counted_by_kind_and_visibility_at_team(operator: httpx2.Client) -> None:
    page = operator.get("/ui/").text
    assert headers(page)[:7] == [
        "Agent", "Entities", "Sessions", "Workstreams", "Notes", "Public", "Team"
    ]  # fmt: skip
    assert "Private" not in headers(page)
    # atlas at team: 63 entities, 4 sessions, 2 workstreams, 1 note; 62 + 1 + 1 public rows,
    # the rest (Zephyr, 3 sessions, Ingest rewrite, the note) team.
    assert row_of(page, "atlas")[:6] == ["63", "4", "2", "1", "64", "6"]
    assert row_of(page, "atlas")[6] == "2026-11-16"
    assert row_of(page, "cobalt")[:6] == ["1", "1", "0", "0", "2", "0"]


def test_the_operator_at_private_gets_a_private_column(operator: httpx2.Client) -> None:
    page = operator.get("/ui/?level=private").text
    assert headers(page)[5:8] == ["Public", "Team", "Private"]
    assert row_of(page, "atlas")[:7] == ["64", "5", "3", "2", "64", "6", "4"]
    assert 'href="/ui/agents/atlas?level=private"' in page


def test_a_member_sees_its_namespaces_and_no_private_column(member: httpx2.Client) -> None:
    for level in ("team", "private"):
        page = member.get(f"/ui/?level={level}").text
        assert "Private" not in headers(page)
        assert row_of(page, "atlas")[:6] == ["63", "4", "2", "1", "64", "6"]
        assert "cobalt" not in page
        assert CANARY not in page


def test_the_health_problems_are_those_memory_status_gives_the_caller(
    operator: httpx2.Client, member: httpx2.Client
) -> None:
    mine = operator.get("/ui/").text
    assert "<h2>Health</h2>" in mine
    assert re.search(r'<li class="problem problem-error">.*?' + BROKEN, mine, re.S)
    theirs = member.get("/ui/").text
    assert "<h2>Health</h2>" in theirs
    assert "zinc" not in theirs  # not a namespace of desk's: not even its name


def test_the_public_level_counts_public_rows_only(operator: httpx2.Client) -> None:
    page = operator.get("/ui/?level=public").text
    assert headers(page)[5:7] == ["Public", "Last session"]
    assert row_of(page, "atlas")[:5] == ["62", "1", "1", "0", "64"]


def test_a_member_granted_nothing_is_told_what_to_do(served: tuple[UiServer, str]) -> None:
    server, _ = served
    with closing(server.member(server.add_member("lonely"))) as client:
        page = client.get("/ui/").text
        assert "No agent to show yet." in page
        for name in ("atlas", "cobalt", "zinc", CANARY):
            assert name not in page
