"""The entity page through a real ``bourdon ui``: every agent's view of a name side by side,
its timeline of commits, its neighbours, and nothing the caller may not see.

The library is written by hand below: "Harbor" is held by alpha, beta and gamma; "Lighthouse"
by alpha, beta and gamma, privately by epsilon (a canary summary and alias), and by quill,
an agent the member is not granted (its own canary summary). The expected cards, commits and
links are written from that script.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

import httpx2
import pytest

from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest
from tests.support.webui import UiServer

PRIVATE_SUMMARY = "PRIVCANARY keeper diary"
PRIVATE_ALIAS = "secretbeam"
UNGRANTED = "quill"
UNGRANTED_SUMMARY = "nightjar signal from the tower"
CARD = re.compile(r'<article class="card entity-card">(.*?)</article>', re.S)
COMMIT_LINK = re.compile(r'href="/ui/history/([^/"]+)/([0-9a-f]{40})"')


@dataclass
class Site:
    server: UiServer
    commits: dict[str, str]  # step of the script -> commit id
    member_token: str


def build(library: Library) -> dict[str, str]:
    by = Provenance(caller="operator", session="s-web")
    c: dict[str, str] = {}

    def commit(step: str, agent: str, data: dict) -> None:  # type: ignore[type-arg]
        c[step] = library.commit(agent, data, provenance=by).version

    commit(
        "alpha-1",
        "alpha",
        manifest(
            "alpha",
            known_entities=[
                {"name": "Harbor", "summary": "alpha moors boats here"},
                {
                    "name": "Lighthouse",
                    "type": "project",
                    "aliases": ["the beam"],
                    "tags": ["coast"],
                    "summary": "alpha lamp notes",
                    "last_touched": "2026-10-01",
                },
            ],
            recent_sessions=[
                {
                    "date": "2026-10-02",
                    "session_id": "alpha-s1",
                    "project_focus": ["Lighthouse"],
                    "key_actions": ["polished the lens housing"],
                }
            ],
            known_workstreams=[
                {
                    "name": "Beacon work",
                    "status": "active",
                    "related_entities": ["Lighthouse", "Harbor"],
                    "summary": "keep the coast lit",
                }
            ],
        ),
    )
    commit(
        "beta-1",
        "beta",
        manifest(
            "beta",
            known_entities=[
                {"name": "Harbor", "summary": "beta counts the cranes"},
                {"name": "lighthouse", "summary": "beta keeps the lens"},
            ],
        ),
    )
    commit(
        "gamma-1",
        "gamma",
        manifest(
            "gamma",
            known_entities=[
                {"name": "Harbor", "summary": "gamma dredges the channel"},
                {"name": "Lighthouse", "summary": "gamma paints it red"},
            ],
        ),
    )
    commit(
        "epsilon-1",
        "epsilon",
        manifest(
            "epsilon",
            known_entities=[
                {
                    "name": "Lighthouse",
                    "summary": PRIVATE_SUMMARY,
                    "aliases": [PRIVATE_ALIAS],
                    "visibility": "private",
                }
            ],
        ),
    )
    commit(
        "quill-1",
        UNGRANTED,
        manifest(
            UNGRANTED,
            known_entities=[
                {"name": "Lighthouse", "summary": UNGRANTED_SUMMARY},
                {"name": "Marsh Owl", "summary": UNGRANTED_SUMMARY + " again"},
            ],
        ),
    )
    # alpha's view changes (a commit that touched Lighthouse), then a commit that did not.
    commit(
        "alpha-2", "alpha", {"known_entities": [{"name": "Lighthouse", "summary": "alpha lamp v2"}]}
    )
    commit(
        "alpha-3",
        "alpha",
        {"known_entities": [{"name": "Harbor", "summary": "alpha moors yachts"}]},
    )
    return c


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("entity-lib")
    library = Library.init(root)
    commits = build(library)
    library.close()
    server = UiServer(root, tmp_path_factory.mktemp("entity-user"))
    token = server.add_member("desk", "quarantined", ["alpha", "beta", "gamma", "epsilon"])
    with server:
        yield Site(server, commits, token)


@pytest.fixture(scope="module")
def operator(site: Site) -> Iterator[httpx2.Client]:
    client = site.server.operator()
    yield client
    client.close()


@pytest.fixture(scope="module")
def member(site: Site) -> Iterator[httpx2.Client]:
    client = site.server.member(site.member_token)
    yield client
    client.close()


def page(client: httpx2.Client, name: str, level: str | None = None) -> str:
    url = "/ui/entity?name=" + quote(name) + (f"&level={level}" if level else "")
    answer = client.get(url)
    assert answer.status_code == 200, answer.text
    return answer.text


def cards(html: str) -> dict[str, str]:
    """Agent id -> the text of its card."""
    out = {}
    for body in CARD.findall(html):
        agent = re.search(r"<h3>(?:<a [^>]*>)?([^<]+)", body)
        assert agent, body
        out[agent.group(1)] = body
    return out


def test_an_entity_held_by_three_agents_shows_three_cards_each_with_its_own_summary(
    operator: httpx2.Client,
) -> None:
    shown = cards(page(operator, "harbor"))
    assert sorted(shown) == ["alpha", "beta", "gamma"]
    assert "alpha moors yachts" in shown["alpha"]
    assert "beta counts the cranes" in shown["beta"]
    assert "gamma dredges the channel" in shown["gamma"]
    assert "beta counts" not in shown["alpha"]


def test_a_card_shows_its_agents_type_aliases_tags_and_the_sessions_naming_it(
    operator: httpx2.Client,
) -> None:
    alpha = cards(page(operator, "Lighthouse"))["alpha"]
    assert "project" in alpha
    assert "the beam" in alpha
    assert '<span class="tag">coast</span>' in alpha
    assert "2026-10-01" in alpha
    assert "polished the lens housing" in alpha
    assert "Beacon work" in alpha


def test_a_private_row_is_absent_at_team_and_for_a_member_and_shown_to_the_operator_at_private(
    operator: httpx2.Client, member: httpx2.Client
) -> None:
    for html in (page(operator, "Lighthouse"), page(member, "Lighthouse")):
        assert PRIVATE_SUMMARY not in html
        assert PRIVATE_ALIAS not in html
        assert "epsilon" not in html
    # A member asking for private is answered at team.
    assert PRIVATE_SUMMARY not in page(member, "Lighthouse", "private")
    private = page(operator, "Lighthouse", "private")
    assert PRIVATE_SUMMARY in cards(private)["epsilon"]
    assert PRIVATE_ALIAS in private


def test_an_ungranted_agent_leaves_no_trace_on_a_members_pages(
    operator: httpx2.Client, member: httpx2.Client
) -> None:
    assert UNGRANTED_SUMMARY in cards(page(operator, "Lighthouse"))[UNGRANTED]
    lighthouse = page(member, "Lighthouse")
    assert sorted(cards(lighthouse)) == ["alpha", "beta", "gamma"]
    assert "3 agents" in lighthouse
    owl = page(member, "Marsh Owl")
    assert "No agent here knows" in owl
    for html in (lighthouse, owl, page(member, "Harbor"), page(member, "lighthouse", "private")):
        assert UNGRANTED not in html.lower()
        assert "nightjar" not in html


def commits_linked(html: str) -> set[tuple[str, str]]:
    timeline = html.split('id="timeline"', 1)[1].split('id="neighbours"', 1)[0]
    return set(COMMIT_LINK.findall(timeline))


def test_the_timeline_lists_the_commits_that_touched_the_entity_newest_first(
    site: Site, operator: httpx2.Client, member: httpx2.Client
) -> None:
    c = site.commits
    html = page(operator, "Lighthouse")
    assert commits_linked(html) == {
        ("alpha", c["alpha-1"]),
        ("beta", c["beta-1"]),
        ("gamma", c["gamma-1"]),
        (UNGRANTED, c["quill-1"]),
        ("alpha", c["alpha-2"]),
    }
    assert html.index(c["alpha-2"]) < html.index(c["alpha-1"])  # newest first
    assert "alpha lamp notes" in html and "alpha lamp v2" in html  # what changed
    assert ("epsilon", c["epsilon-1"]) in commits_linked(page(operator, "Lighthouse", "private"))
    assert commits_linked(page(member, "Lighthouse")) == {
        ("alpha", c["alpha-1"]),
        ("beta", c["beta-1"]),
        ("gamma", c["gamma-1"]),
        ("alpha", c["alpha-2"]),
    }


def test_a_neighbour_links_to_its_own_entity_page(operator: httpx2.Client) -> None:
    html = page(operator, "Lighthouse")
    neighbours = html.split('id="neighbours"', 1)[1]
    assert 'href="/ui/entity?name=Harbor"' in neighbours
    assert "Beacon work" in neighbours
    answer = operator.get("/ui/entity?name=Harbor")
    assert answer.status_code == 200
    assert "<h1>Harbor</h1>" in answer.text


def test_a_name_nobody_knows_offers_the_near_misses_and_a_search(operator: httpx2.Client) -> None:
    html = page(operator, "Lighthose")
    assert "No agent here knows" in html
    assert 'href="/ui/entity?name=Lighthouse"' in html
    assert 'href="/ui/search?q=Lighthose"' in html
    assert not cards(html)


def test_without_a_name_the_page_is_a_400_with_a_form_to_type_one(
    operator: httpx2.Client,
) -> None:
    answer = operator.get("/ui/entity")
    assert answer.status_code == 400
    assert '<label for="entity-name">' in answer.text
    assert 'id="entity-name" name="name"' in answer.text


def test_the_level_is_kept_in_the_pages_links(operator: httpx2.Client) -> None:
    html = page(operator, "Lighthouse", "private")
    assert 'href="/ui/entity?name=Harbor&amp;level=private"' in html
    assert '<input type="hidden" name="name" value="Lighthouse">' in html  # the level picker


def test_an_html_laden_name_is_shown_as_text(operator: httpx2.Client) -> None:
    html = page(operator, '<script>alert("x")</script>')
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert" in html


def test_no_entity_page_without_a_session(site: Site) -> None:
    with site.server.client() as anonymous:
        answer = anonymous.get("/ui/entity?name=Lighthouse")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/ui/login"
