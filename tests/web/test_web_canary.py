"""The canary property of the web view: what a caller may not see is in no page's HTML.

Given: a library where one agent is granted to a quarantined member and another is not, where
the granted agent holds private rows (an entity, a session, a workstream, a note, a private tag
in its policy), and where two members have staged writes. Canary strings -- unique words that
occur nowhere else -- are planted in every field a page could show.

Then, crawling every page reachable from the library page (every link under ``/ui/``), plus
seeds that name the hidden things directly (the hidden agent's pages, its commits, the private
entity by name, searches for each canary), with and without ``?level=private``:

- the quarantined member's pages hold no canary of the ungranted agent, of the private rows,
  or of the other member's staged write, nor the ungranted agent's id or the other member's id;
- the local operator's pages at ``team`` (the default level) hold no canary of a private row;
- the operator at ``?level=private`` does see the private rows (the canaries are where the
  pages look), and the member sees its granted agent's team rows (the crawl reads real rows).

A canary the caller typed into the page's own URL is not counted for that page (a "nobody knows
X" page echoes X); each hidden thing has separate canaries for the name a seed types and for
the fields only the library holds.

Written from the issue's acceptance and docs/security.md, before the pages it crawls.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

import httpx2
import pytest

from bourdon.formats import yamlio
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest
from tests.support.webui import UiServer

MAX_PAGES = 400  # per caller: the crawl is bounded
GRANTED = "atlas-agent"
HIDDEN = "zqhidden-agent"  # never granted to the member
MEMBER = "desk"
OTHER = "zqother-desk"  # another quarantined member, with its own staged write


def hexed(label: str) -> str:
    return f"cnry{label}7f3a9c"


# What the seeds type (names), and what only the library holds (every other field).
PRIVATE_NAME = hexed("privname")
HIDDEN_NAME = hexed("hiddenname")
SHARED_NAME = "harbor-gateway"  # held by both agents: the hidden agent's card must not show
PRIVATE_FIELDS = {
    hexed("privsummary"),
    hexed("privalias"),
    hexed("privsessfocus"),
    hexed("privaction"),
    hexed("privworkstream"),
    hexed("privnote"),
    hexed("privtag"),
}
HIDDEN_FIELDS = {
    hexed("hiddensummary"),
    hexed("hiddenshared"),
    hexed("hiddenfocus"),
    hexed("hiddennote"),
    HIDDEN,
}
OTHER_STAGED = {hexed("otherstaged"), OTHER}
TEAM_ROW = "lighthouse-ledger"  # a team row of the granted agent: the member sees it


def library_manifests() -> list[dict[str, object]]:
    granted = manifest(
        GRANTED,
        visibility_policy={"default": "team", "private_tags": [hexed("privtag")]},
        known_entities=[
            {
                "name": TEAM_ROW,
                "type": "project",
                "summary": "The team's ledger.",
                "visibility": "team",
            },
            {"name": SHARED_NAME, "type": "project", "summary": "The gateway, as atlas sees it."},
            {
                "name": PRIVATE_NAME,
                "type": "person",
                "aliases": [hexed("privalias")],
                "summary": f"Kept to myself: {hexed('privsummary')}.",
                "visibility": "private",
            },
            {"name": "quiet-tagged", "summary": "Tagged private.", "tags": [hexed("privtag")]},
        ],
        recent_sessions=[
            {"date": "2026-11-28", "project_focus": [TEAM_ROW], "key_actions": ["ledger work"]},
            {
                "date": "2026-11-29",
                "project_focus": [hexed("privsessfocus")],
                "key_actions": [f"did {hexed('privaction')}"],
                "visibility": "private",
            },
        ],
        known_workstreams=[
            {"name": "ledger-migration", "status": "active"},
            {"name": hexed("privworkstream"), "status": "active", "visibility": "private"},
        ],
        notes=[
            {"date": "2026-11-27", "text": "The ledger moves on Friday."},
            {
                "date": "2026-11-27",
                "text": f"Private: {hexed('privnote')}",
                "visibility": "private",
            },
        ],
    )
    hidden = manifest(
        HIDDEN,
        known_entities=[
            {"name": HIDDEN_NAME, "type": "project", "summary": hexed("hiddensummary")},
            {"name": SHARED_NAME, "type": "project", "summary": hexed("hiddenshared")},
        ],
        recent_sessions=[{"date": "2026-11-29", "project_focus": [hexed("hiddenfocus")]}],
        notes=[{"date": "2026-11-26", "text": hexed("hiddennote")}],
    )
    return [granted, hidden]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[UiServer, str]]:
    base = tmp_path_factory.mktemp("canary")
    library = Library.init(base / "lib")
    for data in library_manifests():
        library.import_manifest(
            yamlio.dump(data), what="canary", provenance=Provenance(caller="fixture")
        )
    # A second version of the hidden agent, so it has a commit diff to probe.
    library.commit(
        HIDDEN,
        {"known_entities": [{"name": HIDDEN_NAME, "summary": hexed("hiddensummary") + " again"}]},
        provenance=Provenance(caller="fixture"),
    )
    for who in (MEMBER, OTHER):
        row = {"name": hexed("otherstaged") if who == OTHER else "desk-proposal", "type": "note"}
        change = {"agent": {"type": "other"}, "known_entities": [row]}
        library.stage(who, who, change, Provenance(caller=who))
    library.close()
    user = base / "user"
    user.mkdir()
    server = UiServer(base / "lib", user)
    token = server.add_member(MEMBER, grants=[GRANTED])
    server.add_member(OTHER)
    with server:
        yield server, token


def versions_of(root: Path, agent_id: str) -> list[str]:
    """The commits that touched an agent's manifest, by git itself."""
    out = subprocess.run(
        ["git", "-C", str(root), "log", "--format=%H", "--", f"agents/{agent_id}.l5.yaml"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def seeds(root: Path) -> list[str]:
    """Pages that name the hidden things outright, as a curious caller would type them."""
    typed = [
        "/ui/",
        f"/ui/agents/{HIDDEN}",
        f"/ui/agents/{GRANTED}",
        f"/ui/entity?name={quote(PRIVATE_NAME)}",
        f"/ui/entity?name={quote(HIDDEN_NAME)}",
        f"/ui/entity?name={quote(SHARED_NAME)}",
        f"/ui/entity?name={quote(hexed('privalias'))}",
        f"/ui/history?agent={HIDDEN}",
        f"/ui/history?agent={GRANTED}",
        "/ui/history",
        "/ui/staging",
        f"/ui/staging/{OTHER}",
        f"/ui/staging/{OTHER}?member={OTHER}",
        f"/ui/staging/{HIDDEN}",
    ]
    for kind in ("entities", "sessions", "workstreams", "notes"):
        typed.append(f"/ui/agents/{GRANTED}?kind={kind}")
        typed.append(f"/ui/agents/{HIDDEN}?kind={kind}")
        typed.append(f"/ui/agents/{GRANTED}?kind={kind}&q=cnry")
    for word in (
        "cnry",
        "ledger",
        "gateway",
        hexed("privsummary"),
        hexed("hiddensummary"),
        "7f3a9c",
    ):
        typed.append(f"/ui/search?q={quote(word)}")
    for version in versions_of(root, HIDDEN) + versions_of(root, GRANTED):
        typed.append(f"/ui/history/{HIDDEN}/{version}")
        typed.append(f"/ui/history/{GRANTED}/{version}")
    return typed + [with_level(url, "private") for url in typed]


def with_level(url: str, level: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "level"] + [("level", level)]
    return f"{parts.path}?{urlencode(query)}"


HREF = re.compile(r'href="([^"]+)"')


def links(html: str) -> Iterator[str]:
    for raw in HREF.findall(html):
        url = raw.replace("&amp;", "&")
        path = urlsplit(url).path
        if not path.startswith("/ui/") or path.startswith(("/ui/static/", "/ui/login")):
            continue
        yield url


@dataclass
class Crawl:
    pages: dict[str, str]  # url -> the HTML it answered
    ok: set[str]  # the urls that answered 200


def crawl(client: httpx2.Client, start: list[str], *, stay_at_team: bool) -> Crawl:
    """Every page reachable from ``start`` by links under /ui/. With ``stay_at_team``, links
    that ask for ``level=private`` are not followed."""
    seen: dict[str, str] = {}
    ok: set[str] = set()
    queue = list(start)
    while queue and len(seen) < MAX_PAGES:
        url = queue.pop(0)
        if url in seen:
            continue
        answer = client.get(url)
        assert answer.status_code < 500, f"{url}: {answer.status_code}\n{answer.text[:2000]}"
        if answer.status_code in (301, 302, 303, 307, 308):
            seen[url] = ""
            target = answer.headers["location"]
            assert not target.startswith("/ui/login"), f"{url} lost the session"
            queue.append(target)
            continue
        seen[url] = answer.text
        if answer.status_code == 200:
            ok.add(url)
        for link in links(answer.text):
            if stay_at_team and "level=private" in link:
                continue
            queue.append(link)
    return Crawl(seen, ok)


def leaks(pages: dict[str, str], canaries: set[str]) -> list[str]:
    found = []
    for url, html in pages.items():
        typed = unquote(url).lower()
        for canary in canaries:
            if canary.lower() in typed:
                continue  # the caller typed it; the page may say it back
            if canary.lower() in html.lower():
                found.append(f"{canary} in {url}")
    return found


def route_kinds(found: Crawl) -> set[str]:
    """Which pages of the web view the crawl reached and that answered 200."""
    kinds = set()
    for url in found.ok:
        path = urlsplit(url).path
        parts = path.strip("/").split("/")
        if path == "/ui/":
            kinds.add("library")
        elif parts[1:2] == ["history"]:
            kinds.add("commit" if len(parts) == 4 else "history")
        elif parts[1:2] == ["staging"]:
            kinds.add("staged" if len(parts) == 3 else "staging")
        elif len(parts) > 1:
            kinds.add(parts[1])
    return kinds


EVERY_PAGE = {"library", "agents", "entity", "search", "history", "commit", "staging", "staged"}


def test_a_member_sees_no_canary_of_an_ungranted_agent_a_private_row_or_another_stager(
    served: tuple[UiServer, str],
) -> None:
    server, token = served
    with closing(server.member(token)) as client:
        found = crawl(client, seeds(server.root), stay_at_team=False)
    hidden = PRIVATE_FIELDS | HIDDEN_FIELDS | OTHER_STAGED | {PRIVATE_NAME, HIDDEN_NAME}
    assert leaks(found.pages, hidden) == []
    # The crawl read real rows: the member's granted team row is on some page it reached.
    assert any(TEAM_ROW in html for html in found.pages.values())
    print(f"\nmember crawl: {len(found.pages)} pages, kinds {sorted(route_kinds(found))}")


def test_the_operator_at_team_sees_no_private_row(served: tuple[UiServer, str]) -> None:
    server, _ = served
    with closing(server.operator()) as client:
        found = crawl(
            client, [u for u in seeds(server.root) if "level=" not in u], stay_at_team=True
        )
    assert leaks(found.pages, PRIVATE_FIELDS | {PRIVATE_NAME}) == []
    # The operator reads every namespace: the hidden agent's rows are on its pages.
    assert any(hexed("hiddensummary") in html for html in found.pages.values())
    # Every page of the web view was reached by following links from the library page and
    # the seeds: the property covers each of them.
    assert route_kinds(found) >= EVERY_PAGE, sorted(EVERY_PAGE - route_kinds(found))
    print(f"\noperator crawl: {len(found.pages)} pages, kinds {sorted(route_kinds(found))}")


def test_the_operator_sees_private_rows_when_asking_for_private(
    served: tuple[UiServer, str],
) -> None:
    """The positive control: the canaries are where the pages look."""
    server, _ = served
    with closing(server.operator()) as client:
        agent = client.get(f"/ui/agents/{GRANTED}?level=private").text
        entity = client.get(f"/ui/entity?name={quote(PRIVATE_NAME)}&level=private").text
        notes = client.get(f"/ui/agents/{GRANTED}?kind=notes&level=private").text
    assert PRIVATE_NAME in agent
    assert hexed("privsummary") in entity
    assert hexed("privnote") in notes


def test_a_member_asking_for_private_is_answered_at_team(served: tuple[UiServer, str]) -> None:
    server, token = served
    with closing(server.member(token)) as client:
        answer = client.get(f"/ui/agents/{GRANTED}?level=private")
    assert answer.status_code == 200
    assert TEAM_ROW in answer.text
    assert PRIVATE_NAME not in answer.text
    assert 'value="private"' not in answer.text  # no private choice in the level picker
