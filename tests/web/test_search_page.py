"""The search page through a real ``bourdon ui``: results with their snippets, the matched
words marked and everything else escaped, links to each hit's page, filters, more results,
and nothing the caller may not see.

The library is written by hand: alpha holds "Lighthouse" (summary "keeps the lens clean"), a
session and 25 notes about tides; beta holds "Pier" whose summary is HTML; epsilon a private
row with a canary word; quill, an agent the member is not granted, a row with its own canary.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape

import httpx2
import pytest

from bourdon.store.library import Library
from bourdon.testing import manifest
from tests.support.webui import UiServer

TIDES = 25  # notes holding "tide": more than one page of 20
UNGRANTED = "quill"
RESULT = re.compile(r'<li class="result">(.*?)</li>', re.S)
MORE = re.compile(r'<a href="(/ui/search\?[^"]*cursor=[^"]+)">More results</a>')


@dataclass
class Site:
    server: UiServer
    member_token: str


def build(library: Library) -> None:
    notes = [
        {"date": f"2026-09-{1 + i:02d}", "text": f"tide table number {i} checked"}
        for i in range(TIDES)
    ]
    library.commit(
        "alpha",
        manifest(
            "alpha",
            known_entities=[{"name": "Lighthouse", "summary": "keeps the lens clean"}],
            recent_sessions=[
                {
                    "date": "2026-10-02",
                    "project_focus": ["Lighthouse"],
                    "key_actions": ["oiled the winch"],
                }
            ],
            known_workstreams=[{"name": "Foghorn tuning", "summary": "a lower pitch"}],
            notes=notes,
        ),
    )
    library.commit(
        "beta",
        manifest(
            "beta",
            known_entities=[
                {
                    "name": "Pier",
                    "summary": '<script>alert("pier")</script> salt glass <b>bold</b>',
                },
                {"name": "Lens", "summary": "beta grinds the lens"},
            ],
        ),
    )
    library.commit(
        "epsilon",
        manifest(
            "epsilon",
            known_entities=[
                {"name": "Vault", "summary": "privcanary lens recipe", "visibility": "private"}
            ],
        ),
    )
    library.commit(
        UNGRANTED,
        manifest(
            UNGRANTED, known_entities=[{"name": "Owl", "summary": "nightjar lens over the marsh"}]
        ),
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("search-lib")
    library = Library.init(root)
    build(library)
    library.close()
    server = UiServer(root, tmp_path_factory.mktemp("search-user"))
    token = server.add_member("desk", "quarantined", ["alpha", "beta", "epsilon"])
    with server:
        yield Site(server, token)


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


def search(client: httpx2.Client, **params: str) -> str:
    answer = client.get("/ui/search", params=params)
    assert answer.status_code == 200, answer.text
    return answer.text


def results(html: str) -> list[str]:
    return RESULT.findall(html)


def test_a_word_of_a_summary_finds_the_row_with_the_word_marked_and_a_link_to_its_entity(
    operator: httpx2.Client,
) -> None:
    found = [r for r in results(search(operator, q="clean")) if "Lighthouse" in r]
    assert len(found) == 1
    assert 'href="/ui/entity?name=Lighthouse"' in found[0]
    assert "keeps the lens <mark>clean</mark>" in found[0]


def test_an_html_laden_summary_comes_out_as_text(operator: httpx2.Client) -> None:
    html = search(operator, q="glass")
    assert "<script>alert" not in html
    assert "<b>bold" not in html
    (pier,) = results(html)
    assert "&lt;script&gt;" in pier
    assert "<mark>glass</mark>" in pier
    assert "salt <mark>glass</mark> &lt;b&gt;bold&lt;/b&gt;" in pier


def test_sessions_and_workstreams_link_to_their_agents_page(operator: httpx2.Client) -> None:
    (session,) = results(search(operator, q="winch"))
    assert 'href="/ui/agents/alpha?kind=sessions&amp;q=winch"' in session
    (workstream,) = results(search(operator, q="foghorn"))
    assert 'href="/ui/agents/alpha?kind=workstreams&amp;q=Foghorn+tuning"' in workstream


def test_more_results_follow_a_cursor_until_the_last_page(operator: httpx2.Client) -> None:
    first = search(operator, q="tide")
    assert len(results(first)) == 20
    more = MORE.search(first)
    assert more, "no More results link"
    answer = operator.get(unescape(more.group(1)))
    assert answer.status_code == 200
    assert len(results(answer.text)) == TIDES - 20
    assert not MORE.search(answer.text)
    texts = {re.sub(r"</?mark>", "", r) for r in results(first) + results(answer.text)}
    assert all(f"tide table number {i} checked" in "".join(texts) for i in range(TIDES))


def test_filters_by_agent_and_kind(operator: httpx2.Client) -> None:
    by_beta = results(search(operator, q="lens", agent="beta"))
    assert len(by_beta) == 1
    assert 'href="/ui/entity?name=Lens"' in by_beta[0]
    sessions = results(search(operator, q="lighthouse", kind="session"))
    assert len(sessions) == 1
    assert "sessions" in sessions[0]


def test_no_results_say_so_and_offer_the_entity_page(operator: httpx2.Client) -> None:
    html = search(operator, q="zebrafish")
    assert not results(html)
    assert "No row matches" in html
    assert 'href="/ui/entity?name=zebrafish"' in html


def test_an_empty_query_shows_the_form_alone(operator: httpx2.Client) -> None:
    html = search(operator)
    assert '<label for="search-q">' in html
    assert not results(html)
    assert "No row matches" not in html


def test_private_rows_are_found_only_by_the_operator_at_private(
    operator: httpx2.Client, member: httpx2.Client
) -> None:
    assert "privcanary" not in search(operator, q="lens")
    assert "privcanary" not in search(member, q="lens")
    assert "privcanary" not in search(member, q="lens", level="private")
    assert "1 more match at private" in search(operator, q="privcanary")
    assert "<mark>privcanary</mark>" in search(operator, q="privcanary", level="private")


def test_an_ungranted_agent_is_absent_from_a_members_search(
    operator: httpx2.Client, member: httpx2.Client
) -> None:
    assert "nightjar" in search(operator, q="lens")
    for html in (search(member, q="lens"), search(member, q="nightjar"), search(member)):
        assert UNGRANTED not in html  # not a result, not an option of the agent filter
        assert "nightjar lens" not in html
    select = search(member).split('id="search-agent"')[1].split("</select>")[0]
    assert re.findall(r'<option value="([^"]*)"', select) == ["", "alpha", "beta", "epsilon"]


def test_the_header_search_box_is_on_other_pages_and_keeps_the_level(
    operator: httpx2.Client,
) -> None:
    html = operator.get("/ui/entity?name=Lighthouse&level=public").text
    header = html.split("<main", 1)[0]
    assert 'role="search"' in header
    assert '<label for="find-q"' in header
    assert '<input type="hidden" name="level" value="public">' in header


def test_no_search_without_a_session(site: Site) -> None:
    with site.server.client() as anonymous:
        answer = anonymous.get("/ui/search?q=lens")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/ui/login"


def test_a_cursor_this_server_did_not_give_out_is_a_400_page(operator: httpx2.Client) -> None:
    answer = operator.get("/ui/search", params={"q": "tide", "cursor": "not-a-cursor"})
    assert answer.status_code == 400
    assert 'role="alert"' in answer.text


def test_a_member_filtering_on_an_ungranted_agent_is_refused_without_its_rows(
    member: httpx2.Client,
) -> None:
    answer = member.get("/ui/search", params={"q": "lens", "agent": UNGRANTED})
    assert answer.status_code in (403, 404)
    assert "nightjar" not in answer.text
    assert "Owl" not in answer.text


def test_the_level_picker_keeps_the_query_and_filters(operator: httpx2.Client) -> None:
    html = search(operator, q="lens", kind="entity")
    picker = html.split('<form class="level"', 1)[1].split("</form>", 1)[0]
    assert '<input type="hidden" name="q" value="lens">' in picker
    assert '<input type="hidden" name="kind" value="entity">' in picker
