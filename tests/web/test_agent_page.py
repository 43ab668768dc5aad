"""The agent page through a real ``bourdon ui``: counts, filter, sort, paging, the 404 that
does not confirm an agent exists, and private rows only for the operator at private."""

from __future__ import annotations

import re
from contextlib import closing

import httpx2

from bourdon.access.trust import MemberRegistry
from bourdon.store.library import Library
from tests.support.webui import UiServer
from tests.web import agentlib
from tests.web.agentlib import CANARY

KINDS = ("entities", "sessions", "workstreams", "notes")
served, operator, member = agentlib.served, agentlib.operator, agentlib.member


def tabs(html: str) -> dict[str, int]:
    found = re.findall(r">(\w+) <span class=\"count\">([\d,]+)</span>", html)
    return {name.lower(): int(n.replace(",", "")) for name, n in found}


def first_cells(html: str) -> list[str]:
    """The text of each body row's first cell (its row header), in order."""
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [
        re.sub(r"<[^>]+>|\s*\(.*", "", cell).strip()
        for cell in re.findall(r'<th scope="row">(.*?)</th>', body, re.S)
    ]


def test_the_tabs_count_the_rows_the_caller_may_see_at_the_level(
    operator: httpx2.Client, member: httpx2.Client
) -> None:
    team = {"entities": 63, "sessions": 4, "workstreams": 2, "notes": 1}
    assert tabs(operator.get("/ui/agents/atlas").text) == team
    assert tabs(member.get("/ui/agents/atlas").text) == team
    public = {"entities": 62, "sessions": 1, "workstreams": 1, "notes": 0}
    assert tabs(operator.get("/ui/agents/atlas?level=public").text) == public
    private = {"entities": 64, "sessions": 5, "workstreams": 3, "notes": 2}
    assert tabs(operator.get("/ui/agents/atlas?level=private").text) == private


def test_private_rows_show_only_for_the_operator_at_private(
    operator: httpx2.Client, member: httpx2.Client
) -> None:
    for kind in KINDS:
        for client, level in ((operator, "team"), (member, "team"), (member, "private")):
            page = client.get(f"/ui/agents/atlas?kind={kind}&level={level}")
            assert page.status_code == 200
            assert CANARY not in page.text, (kind, level)
        shown = operator.get(f"/ui/agents/atlas?kind={kind}&level=private&q={CANARY}")
        assert CANARY in shown.text
        assert '<span class="vis-private">private</span>' in shown.text


def test_the_page_names_the_agent_its_type_and_links_its_history(
    served: tuple[UiServer, str], operator: httpx2.Client
) -> None:
    page = operator.get("/ui/agents/atlas?level=public").text
    assert "<h1>atlas</h1>" in page
    assert "code-assistant" in page
    with Library.open(served[0].root) as library:  # import stamps the time it was written
        written = library.read("atlas").data["last_updated"]
    assert f"last updated {written[:10]} {written[11:16]}" in page
    assert 'href="/ui/history?agent=atlas&amp;level=public"' in page


def test_the_filter_matches_names_aliases_and_summaries_in_any_case(
    operator: httpx2.Client,
) -> None:
    by_alias = operator.get("/ui/agents/atlas?q=ZGW").text
    assert first_cells(by_alias) == ["Zephyr Gateway"]
    assert "rows 1-1 of 1" in by_alias
    assert first_cells(operator.get("/ui/agents/atlas?q=routes+TRAFFIC").text) == ["Zephyr Gateway"]
    sessions = operator.get("/ui/agents/atlas?kind=sessions&q=beacon").text
    assert first_cells(sessions) == ["2026-11-04", "2026-11-03"]
    workstreams = operator.get("/ui/agents/atlas?kind=workstreams&q=done").text
    assert first_cells(workstreams) == ["Docs pass"]
    notes = operator.get("/ui/agents/atlas?kind=notes&q=OPS").text
    assert first_cells(notes) == ["2026-11-09"]


def test_a_filter_that_matches_nothing_says_so_and_how_to_clear_it(
    operator: httpx2.Client,
) -> None:
    page = operator.get("/ui/agents/atlas?kind=notes&q=nothing-like-this").text
    assert "No notes of atlas match" in page
    assert 'href="/ui/agents/atlas?kind=notes">clear it</a>' in page


def test_rows_sort_as_asked(operator: httpx2.Client) -> None:
    newest = first_cells(operator.get("/ui/agents/atlas?sort=-last_touched").text)
    assert newest[:2] == ["beacon", "Zephyr Gateway"]
    by_name = first_cells(operator.get("/ui/agents/atlas").text)
    assert by_name[:3] == ["api/v2 gateway", "beacon", "harbor-001"]
    oldest = first_cells(operator.get("/ui/agents/atlas?kind=sessions&sort=date").text)
    assert oldest == ["2026-11-02", "2026-11-03", "2026-11-04", "2026-11-16"]
    newest_first = first_cells(operator.get("/ui/agents/atlas?kind=sessions").text)
    assert newest_first == ["2026-11-16", "2026-11-04", "2026-11-03", "2026-11-02"]
    status = first_cells(operator.get("/ui/agents/atlas?kind=workstreams&sort=status").text)
    assert status == ["Ingest rewrite", "Docs pass"]  # active before done


def test_rows_come_fifty_a_page_with_previous_and_next(operator: httpx2.Client) -> None:
    first = operator.get("/ui/agents/atlas?level=public").text
    assert "rows 1-50 of 62" in first
    assert len(first_cells(first)) == 50
    assert 'href="/ui/agents/atlas?page=2&amp;level=public" rel="next">Next</a>' in first
    assert 'rel="prev"' not in first
    second = operator.get("/ui/agents/atlas?page=2&level=public").text
    assert "rows 51-62 of 62" in second
    assert first_cells(second)[-1] == "harbor-060"
    assert 'href="/ui/agents/atlas?page=1&amp;level=public" rel="prev">Previous</a>' in second
    assert 'rel="next"' not in second
    beyond = operator.get("/ui/agents/atlas?page=99&level=public").text
    assert "rows 51-62 of 62" in beyond


def test_paging_keeps_the_filter_the_sort_and_the_kind(operator: httpx2.Client) -> None:
    page = operator.get("/ui/agents/atlas?q=harbor&sort=-last_touched").text
    assert "rows 1-50 of 60" in page
    assert 'href="/ui/agents/atlas?q=harbor&amp;sort=-last_touched&amp;page=2"' in page


def test_each_row_shows_its_visibility_in_words_and_its_tags(operator: httpx2.Client) -> None:
    page = operator.get("/ui/agents/atlas?q=zephyr").text
    assert '<span class="vis-team">team</span>' in page
    assert '<span class="tag">network</span>' in page
    sessions = operator.get("/ui/agents/atlas?kind=sessions&q=sketch").text
    assert '<span class="tag">design</span>' in sessions


def test_entity_names_link_to_the_entity_page_escaped(operator: httpx2.Client) -> None:
    page = operator.get("/ui/agents/atlas?q=api&level=private").text
    assert 'href="/ui/entity?name=api%2Fv2+gateway&amp;level=private"' in page
    sessions = operator.get("/ui/agents/atlas?kind=sessions&q=sketch").text
    assert 'href="/ui/entity?name=Zephyr+Gateway"' in sessions


def test_tabs_keep_a_level_that_is_not_the_default(operator: httpx2.Client) -> None:
    page = operator.get("/ui/agents/atlas?level=public").text
    assert 'href="/ui/agents/atlas?kind=sessions&amp;level=public"' in page
    assert 'href="/ui/agents/atlas?level=public"' in page


def test_an_agent_not_granted_is_the_same_404_as_one_that_does_not_exist(
    member: httpx2.Client,
) -> None:
    ungranted = member.get("/ui/agents/cobalt")
    missing = member.get("/ui/agents/no-such")
    assert ungranted.status_code == missing.status_code == 404
    assert "no agent &#39;cobalt&#39; here" in ungranted.text
    assert ungranted.text.replace("cobalt", "X") == missing.text.replace("no-such", "X")
    assert CANARY not in ungranted.text


def test_the_operator_gets_a_404_for_an_unknown_or_malformed_agent(
    operator: httpx2.Client,
) -> None:
    assert operator.get("/ui/agents/no-such").status_code == 404
    assert operator.get("/ui/agents/Not%20An%20Id").status_code == 404
    assert operator.get("/ui/agents/cobalt").status_code == 200


def test_the_page_needs_a_session(served: tuple[UiServer, str]) -> None:
    with served[0].client() as client:
        answer = client.get("/ui/agents/atlas")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/ui/login"


def test_the_level_picker_keeps_the_tab_the_filter_and_the_sort(
    operator: httpx2.Client,
) -> None:
    page = operator.get("/ui/agents/atlas?kind=sessions&q=beacon&sort=date").text
    picker = page.split('<form class="level"', 1)[1].split("</form>", 1)[0]
    assert '<input type="hidden" name="kind" value="sessions">' in picker
    assert '<input type="hidden" name="q" value="beacon">' in picker
    assert '<input type="hidden" name="sort" value="date">' in picker
    assert 'name="page"' not in picker


def test_a_member_that_keeps_prompts_home_gets_no_session_with_key_actions(
    served: tuple[UiServer, str],
) -> None:
    server, _ = served
    token = MemberRegistry(server.home).add("homebody", "trusted", keep_home=True)
    with closing(server.member(token)) as client:
        page = client.get("/ui/agents/atlas?kind=sessions").text
        assert tabs(page)["sessions"] == 0  # every session of atlas carries key actions
        for words in ("sketch the gateway", "wire the beacon", "publish the beacon"):
            assert words not in page
        assert "Sessions per week: no sessions." in page
