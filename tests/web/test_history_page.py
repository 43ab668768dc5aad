"""The history pages through a real ``bourdon ui``: commits newest first with who made them,
and one commit's diff row by row, with private rows kept out at team and for members."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing

import httpx2
import pytest

from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest
from tests.support.webui import UiServer

AGENT = "atlas-bot"
CANARY = "canary-7f3e-private"


def _entity(name: str, summary: str, visibility: str = "team") -> dict[str, str]:
    return {"name": name, "type": "project", "summary": summary, "visibility": visibility}


def _commit(library: Library, caller: str, session: str, *rows: dict[str, str]) -> str:
    """A write to AGENT by ``caller`` in ``session``; its commit."""
    change = manifest(AGENT, known_entities=list(rows))
    who = Provenance(caller=caller, session=session, transcript=f"transcripts/{session}.jsonl")
    result = library.commit(AGENT, change, provenance=who)
    assert result.version is not None
    return result.version


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[UiServer, dict[str, str]]]:
    base = tmp_path_factory.mktemp("history")
    library = Library.init(base / "lib")
    commits = {
        "first": _commit(library, "alice", "s-101", _entity("harbor", "the old harbour plan")),
        "second": _commit(
            library,
            "bob",
            "s-202",
            _entity("harbor", "the new harbour plan"),
            _entity("lighthouse", "a tall light on the cape"),
        ),
        "third": _commit(library, "carol", "s-303", _entity(CANARY, "kept to myself", "private")),
    }
    library.commit(  # another agent, which a member granted only atlas-bot never sees
        "other-bot", manifest("other-bot", known_entities=[_entity("ungranted-row", "x")])
    )
    bulk = [_entity(f"bulk-{i:02d}", f"row {i}") for i in range(60)]
    commits["bulk"] = library.commit("bulk-bot", manifest("bulk-bot", known_entities=bulk)).version
    library.close()
    (base / "user").mkdir()
    server = UiServer(base / "lib", base / "user")
    tokens = {
        "granted": server.add_member("desk-chat", "quarantined", [AGENT]),
        "trusted": server.add_member("reviewer", "trusted"),
    }
    with server:
        yield server, {**commits, **{f"token:{k}": v for k, v in tokens.items()}}


@pytest.fixture(scope="module")
def operator(ui: tuple[UiServer, dict[str, str]]) -> Iterator[httpx2.Client]:
    with closing(ui[0].operator()) as client:
        yield client


def _rows(html: str) -> list[str]:
    """The body rows of the history table, in page order."""
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r"<tr>(.*?)</tr>", body, flags=re.S)


def test_an_agents_history_lists_its_commits_newest_first_with_who_made_them(
    ui: tuple[UiServer, dict[str, str]], operator: httpx2.Client
) -> None:
    page = operator.get("/ui/history", params={"agent": AGENT})
    assert page.status_code == 200
    rows = _rows(page.text)
    assert len(rows) == 3
    for row, caller, session in zip(
        rows, ("carol", "bob", "alice"), ("s-303", "s-202", "s-101"), strict=True
    ):
        assert f"<td>{caller}</td>" in row
        assert f"<td>{session}</td>" in row
        assert f"transcripts/{session}.jsonl" in row
    assert "merge atlas-bot: +1 ~1 -0 rows" in rows[1]
    assert 'aria-current="page">History' in page.text


def test_the_history_of_every_agent_merges_them_newest_first(
    operator: httpx2.Client,
) -> None:
    rows = _rows(operator.get("/ui/history").text)
    assert len(rows) == 5
    assert sum("other-bot" in r for r in rows) == 1 and sum("bulk-bot" in r for r in rows) == 1
    ours = [r for r in rows if AGENT in r]
    assert [c in r for r, c in zip(ours, ("carol", "bob", "alice"), strict=True)] == [True] * 3


def test_at_team_the_operator_is_not_told_a_private_row_was_added(
    operator: httpx2.Client,
) -> None:
    team = _rows(operator.get("/ui/history", params={"agent": AGENT}).text)
    assert "merge atlas-bot: +0 ~0 -0 rows" in team[0]
    private = _rows(operator.get("/ui/history", params={"agent": AGENT, "level": "private"}).text)
    assert "merge atlas-bot: +1 ~0 -0 rows" in private[0]
    assert "level=private" in private[0]  # its links keep the level


def test_a_commits_diff_names_the_added_row_and_the_changed_field(
    ui: tuple[UiServer, dict[str, str]], operator: httpx2.Client
) -> None:
    page = operator.get(f"/ui/history/{AGENT}/{ui[1]['second']}")
    assert page.status_code == 200
    html = page.text
    added = re.search(r'<li class="added">(.*?)</li>', html, flags=re.S)
    assert added and "lighthouse" in added.group(1) and "a tall light on the cape" in added.group(1)
    changed = re.search(r'<li class="changed">(.*?)</li>', html, flags=re.S)
    assert changed and "harbor" in changed.group(1)
    assert "<dt>summary</dt>" in changed.group(1)
    assert "the old harbour plan</del>" in changed.group(1)
    assert "the new harbour plan</ins>" in changed.group(1)
    assert "<dd>bob</dd>" in html and "<dd>s-202</dd>" in html
    assert "1 added, 1 changed, 0 removed" in html


def test_a_private_row_added_in_a_commit_is_absent_at_team_and_present_at_private(
    ui: tuple[UiServer, dict[str, str]], operator: httpx2.Client
) -> None:
    path = f"/ui/history/{AGENT}/{ui[1]['third']}"
    team = operator.get(path).text
    assert CANARY not in team and "kept to myself" not in team
    assert "0 added, 0 changed, 0 removed" in team
    assert "No row you may see changed here." in team
    private = operator.get(path, params={"level": "private"}).text
    assert CANARY in private and "kept to myself" in private


@pytest.mark.parametrize("who", ["granted", "trusted"])
def test_members_never_see_a_private_row_on_any_history_page(
    ui: tuple[UiServer, dict[str, str]], who: str
) -> None:
    server, known = ui
    with closing(server.member(known[f"token:{who}"])) as member:
        pages = [
            member.get("/ui/history", params={"level": "private"}),
            member.get("/ui/history", params={"agent": AGENT, "level": "private"}),
            member.get(f"/ui/history/{AGENT}/{known['third']}", params={"level": "private"}),
        ]
    for page in pages:
        assert page.status_code == 200
        assert CANARY not in page.text and "kept to myself" not in page.text
    for page in pages[:2]:
        carols = next(r for r in _rows(page.text) if "<td>carol</td>" in r)
        assert "+0 ~0 -0 rows" in carols


def test_a_quarantined_member_sees_only_the_agents_it_was_granted(
    ui: tuple[UiServer, dict[str, str]],
) -> None:
    server, known = ui
    with closing(server.member(known["token:granted"])) as member:
        every = member.get("/ui/history")
        refused = member.get("/ui/history", params={"agent": "other-bot"})
    assert every.status_code == 200
    assert AGENT in every.text
    assert "other-bot" not in every.text and "ungranted-row" not in every.text
    assert refused.status_code == 403
    assert "ungranted-row" not in refused.text


def test_an_unknown_commit_is_a_404_that_says_what_to_do(operator: httpx2.Client) -> None:
    page = operator.get(f"/ui/history/{AGENT}/{'0' * 40}")
    assert page.status_code == 404
    assert "its history lists the ones it has" in page.text


def test_history_needs_a_session(ui: tuple[UiServer, dict[str, str]]) -> None:
    with closing(ui[0].client()) as anonymous:
        page = anonymous.get("/ui/history")
        diff = anonymous.get(f"/ui/history/{AGENT}/{ui[1]['third']}", params={"level": "private"})
    assert page.status_code == 303 and page.headers["location"].endswith("/ui/login")
    assert diff.status_code == 303 and CANARY not in diff.text


def test_a_large_diff_lists_its_first_rows_and_counts_them_all(
    ui: tuple[UiServer, dict[str, str]], operator: httpx2.Client
) -> None:
    path = f"/ui/history/bulk-bot/{ui[1]['bulk']}"
    short = operator.get(path).text
    assert short.count('<li class="added">') == 50
    assert "60 added, 0 changed, 0 removed" in short
    assert "10 more rows not listed here." in short
    assert "bulk-59" not in short
    every = operator.get(path, params={"rows": "all"}).text
    assert every.count('<li class="added">') == 60 and "bulk-59" in every
