"""The web view in real headless Chromium, as its users use it: the operator opens the link
``bourdon ui`` printed, reads every page of the URL contract at a phone's and a desktop's width,
searches with the keyboard, opens an entity by clicking, promotes a staged write; a quarantined
member logs in with its token, sees only its namespaces, and cannot promote.

The library is built by hand: three agents hold the entity ``billing/api gateway`` (a name with
a ``/`` and a space), ``claude-code`` keeps a private entity and a private session, ``cursor``
is not granted to the member ``desk`` (granted ``codex``), and the quarantined members ``desk``
and ``kiosk`` each have a write waiting in staging. Each canary string below must never reach
a page's HTML for a caller who may not see it.

What these tests assume of the pages' markup (align here after a page changes):
- every page has one h1; the library's reads "Library", search's "Search", history's
  "History", staging's "Staging"; an agent's, an entity's, a commit's and a staged write's
  h1 holds the agent id or entity name it is about;
- the nav links are named Library, Search, History, Staging, after the skip link and the
  "bourdon" home link, and the active one has aria-current="page";
- the member login field is labelled "Member token" (login.html);
- the search page has a search field (``type="search"``) in its main region; a result links
  to the entity by its name;
- the agent page draws its chart as an inline ``svg.chart``;
- a commit's page names the rows it changed; the entity page names every agent that holds
  the entity and shows each one's summary;
- a staged write's page has a "Promote" button for the operator (a form posting to
  /ui/staging/{agent}/promote) and neither "Promote" nor "Reject" for a member, who may open
  the staging list (its own writes only);
- every page keeps a CSRF token in a hidden ``csrf`` field (the logout form of base.html);
- the level picker is labelled "Rows shown", with a "Show" button (_level.html).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect

from bourdon.store.library import Library
from bourdon.store.provenance import Provenance, trailers
from bourdon.testing import make_library
from tests.support.webui import UiServer
from tests.web.browser import DESKTOP, accessibility_problems, assert_fits_phone

ENTITY = "billing/api gateway"
SUMMARIES = {
    "claude-code": "Retries an invoice twice when the ledger answers 503.",
    "codex": "Fronts the ledger service; the payments team owns it.",
    "cursor": "Its endpoints live under /v2/billing.",
}
ADDED = "ledger schema"  # codex's second commit adds it
DESK_ROW = "desk-reminder-plan"  # desk's own staged row
# Never shown at team level, nor to any member:
PRIVATE_ENTITY = "canary-private-entity-4e1d"
PRIVATE_SUMMARY = "canary-private-summary-a1b2"
PRIVATE_ACTION = "canary-private-session-77ab"
PRIVATE = (PRIVATE_ENTITY, PRIVATE_SUMMARY, PRIVATE_ACTION)
# Never shown to desk: the agents it was not granted and what only they hold.
UNGRANTED_ENTITY = "canary-ungranted-9c2f"
UNGRANTED_SUMMARY = "canary-ungranted-summary-31f0"
KIOSK_ROW = "canary-kiosk-staged-5d0e"
NOT_FOR_DESK = (
    *PRIVATE,
    UNGRANTED_ENTITY,
    UNGRANTED_SUMMARY,
    KIOSK_ROW,
    "cursor",
    "claude-code",
    "kiosk",
)


def entity_url(name: str, **more: str) -> str:
    return "/ui/entity?" + urlencode({"name": name, **more})


@dataclass
class World:
    server: UiServer
    desk: str  # its token
    versions: dict[str, str]  # agent -> its newest commit

    @property
    def root(self) -> Path:
        return self.server.root

    def state(self) -> tuple[str | None, list[tuple[str, str]]]:
        """git's HEAD and what waits in staging."""
        with Library.open(self.root) as library:
            return library.head(), [(s.caller, s.agent_id) for s in library.staged()]


def build(root: Path) -> dict[str, str]:
    """The library of this module; each agent's newest commit."""
    fixture = Provenance(caller="fixture")
    with make_library(root, sample=False) as library:
        library.commit(
            "claude-code",
            {
                "agent": {"type": "code-assistant"},
                "known_entities": [
                    entity(ENTITY, "project", SUMMARIES["claude-code"], "2026-11-20"),
                    entity("release checklist", "decision", "Tag, build, publish.", "2026-11-02"),
                    entity(PRIVATE_ENTITY, "person", PRIVATE_SUMMARY, "2026-11-21")
                    | {"visibility": "private"},
                ],
                "recent_sessions": [
                    session("2026-11-18", "cc-1", "added retries to the gateway", [ENTITY]),
                    session("2026-11-20", "cc-2", PRIVATE_ACTION, []) | {"visibility": "private"},
                ],
                "known_workstreams": [
                    {"name": "invoice retries", "status": "active", "visibility": "team"}
                ],
                "notes": [{"date": "2026-11-19", "text": "Gateway timeouts: config/billing.yaml."}],
            },
            provenance=fixture,
        )
        library.commit(
            "codex",
            {
                "agent": {"type": "code-assistant"},
                "known_entities": [
                    entity(ENTITY, "project", SUMMARIES["codex"], "2026-11-10"),
                ],
                "recent_sessions": [
                    session("2026-11-03", "cx-1", "mapped the ledger calls", [ENTITY]),
                    session("2026-11-10", "cx-2", "documented the gateway", [ENTITY]),
                ],
            },
            provenance=fixture,
        )
        library.commit(
            "codex",
            {
                "known_entities": [
                    entity(ADDED, "file", "The ledger's tables.", "2026-11-12")
                    | {"visibility": "public"}
                ],
                "recent_sessions": [session("2026-11-12", "cx-3", "read the schema", [ADDED])],
            },
            provenance=fixture,
        )
        library.commit(
            "cursor",
            {
                "agent": {"type": "code-assistant"},
                "known_entities": [
                    entity(ENTITY, "project", SUMMARIES["cursor"], "2026-11-15"),
                    entity(UNGRANTED_ENTITY, "project", UNGRANTED_SUMMARY, "2026-11-16"),
                ],
                "recent_sessions": [session("2026-11-15", "cu-1", "renamed endpoints", [ENTITY])],
            },
            provenance=fixture,
        )
        for member, row in (("desk", DESK_ROW), ("kiosk", KIOSK_ROW)):
            change = {
                "agent": {"type": "other"},
                "known_entities": [entity(row, "decision", f"Staged by {member}.", "2026-11-22")],
            }
            library.stage(member, member, change, Provenance(caller=member))
        return {a: library.history(a)[0].version_id for a in ("claude-code", "codex", "cursor")}


def entity(name: str, kind: str, summary: str, touched: str) -> dict[str, Any]:
    return {
        "name": name,
        "type": kind,
        "summary": summary,
        "last_touched": touched,
        "visibility": "team",
    }


def session(date: str, sid: str, action: str, focus: list[str]) -> dict[str, Any]:
    return {
        "date": date,
        "session_id": sid,
        "project_focus": focus,
        "key_actions": [action],
        "visibility": "team",
    }


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("web-browser")
    versions = build(folder / "lib")
    (folder / "user").mkdir()
    server = UiServer(folder / "lib", folder / "user")
    desk = server.add_member("desk", grants=["codex"])
    server.add_member("kiosk")
    with server:
        yield World(server, desk, versions)


@dataclass
class Login:
    landed: str  # where the printed link led
    heading: str
    state: Any  # the browser's cookies afterwards (playwright storage state)


@pytest.fixture(scope="module")
def operator_login(chromium: Browser, world: World) -> Login:
    """The operator opens the printed one-time link, once for this module's tests."""
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.goto(world.server.link)
        heading = page.get_by_role("heading", level=1).inner_text()
        return Login(page.url, heading, context.storage_state())
    finally:
        context.close()


@pytest.fixture
def operator(browse: Callable[..., Page], world: World, operator_login: Login) -> Page:
    """A page of the operator's browser, logged in."""
    return browse(base_url=world.server.base, storage_state=operator_login.state)


@pytest.fixture
def anonymous(browse: Callable[..., Page], world: World) -> Page:
    """A page of a browser that has logged in as no one."""
    return browse(base_url=world.server.base)


def log_in(page: Page, token: str) -> None:
    """Log in as a member the way a person does: type the token, press Enter."""
    page.goto("/ui/login")
    field = page.get_by_label("Member token")
    field.fill(token)
    field.press("Enter")
    expect(page).to_have_url(re.compile(r"/ui/$"))


def heading(page: Page) -> str:
    return page.get_by_role("heading", level=1).inner_text()


# -- logging in -----------------------------------------------------------------------------


def test_the_printed_link_logs_the_operator_in_once(
    world: World, operator_login: Login, anonymous: Page
) -> None:
    assert operator_login.landed == world.server.base + "/ui/"
    assert operator_login.heading == "Library"
    again = anonymous.goto(world.server.link)
    assert again is not None and again.status == 403
    expect(anonymous.get_by_role("alert")).to_contain_text("used already")
    expect(anonymous.get_by_role("navigation", name="Main")).to_have_count(0)
    anonymous.goto("/ui/")
    expect(anonymous).to_have_url(re.compile(r"/ui/login$"))


def test_a_member_logs_in_by_typing_its_token_and_sees_only_its_namespaces(
    world: World, anonymous: Page
) -> None:
    log_in(anonymous, world.desk)
    assert heading(anonymous) == "Library"
    expect(anonymous.get_by_role("link", name="codex", exact=True)).to_be_visible()
    html = anonymous.content()
    assert "cursor" not in html and "claude-code" not in html


def test_a_wrong_token_is_refused_with_a_message(anonymous: Page) -> None:
    anonymous.goto("/ui/login")
    anonymous.get_by_label("Member token").fill("bdn_" + "0" * 48)
    with anonymous.expect_navigation() as navigation:
        anonymous.get_by_role("button", name="Log in").click()
    assert navigation.value.status == 401
    expect(anonymous.get_by_role("alert")).to_contain_text("That token is wrong")


def test_logging_out_ends_the_session(world: World, anonymous: Page) -> None:
    log_in(anonymous, world.desk)
    anonymous.get_by_role("button", name="Log out").click()
    expect(anonymous).to_have_url(re.compile(r"/ui/login$"))
    anonymous.goto("/ui/")
    expect(anonymous).to_have_url(re.compile(r"/ui/login$"))


# -- every page ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Contract:
    path: str  # {codex} is codex's newest commit
    heading: str  # what the h1 holds
    shows: tuple[str, ...]  # text the operator must see on it
    nav: str = ""  # the nav link marked current


PAGES = {
    "library": Contract("/ui/", "Library", ("claude-code", "codex", "cursor"), "Library"),
    "agent": Contract("/ui/agents/codex", "codex", (ENTITY, ADDED)),
    "agent-sessions": Contract(
        "/ui/agents/codex?" + urlencode({"kind": "sessions", "sort": "-date"}),
        "codex",
        ("read the schema", "documented the gateway"),
    ),
    "entity": Contract(entity_url(ENTITY), ENTITY, (*SUMMARIES, *SUMMARIES.values())),
    "search": Contract("/ui/search?" + urlencode({"q": "ledger"}), "Search", (ENTITY,), "Search"),
    "history": Contract("/ui/history", "History", ("codex", "cursor"), "History"),
    "history-codex": Contract("/ui/history?agent=codex", "History", ("codex",), "History"),
    "commit": Contract("/ui/history/codex/{codex}", "codex", (ADDED,), "History"),
    "staging": Contract("/ui/staging", "Staging", ("desk",), "Staging"),
    "staged": Contract("/ui/staging/desk", "desk", (DESK_ROW,), "Staging"),
}


@pytest.mark.parametrize("name", PAGES)
def test_each_page_opens_reads_well_and_fits_a_phone(
    world: World, operator: Page, shot: Callable[[Page, str], list[Path]], name: str
) -> None:
    contract = PAGES[name]
    answer = operator.goto(contract.path.format(**world.versions))
    assert answer is not None and answer.status == 200, operator.content()[:2000]
    expect(operator.get_by_role("heading", level=1)).to_contain_text(contract.heading)
    for text in contract.shows:
        expect(operator.get_by_text(text, exact=False).first).to_be_visible()
    if contract.nav:
        current = operator.get_by_role("navigation", name="Main").locator('[aria-current="page"]')
        expect(current).to_have_text(contract.nav)
    assert accessibility_problems(operator) == []
    assert_fits_phone(operator)
    for saved in shot(operator, name):
        assert saved.stat().st_size > 0


def test_the_agent_page_draws_its_rows_and_sessions_over_time(operator: Page) -> None:
    operator.goto("/ui/agents/codex")
    expect(operator.locator("svg.chart").first).to_be_visible()


# -- search, entity ------------------------------------------------------------------------


def test_search_from_the_keyboard_then_open_an_entity_by_clicking(
    world: World, operator: Page
) -> None:
    operator.goto("/ui/")
    operator.get_by_role("navigation", name="Main").get_by_role("link", name="Search").click()
    field = operator.get_by_role("main").get_by_role("searchbox").first
    field.fill("ledger")
    field.press("Enter")
    expect(operator).to_have_url(re.compile(r"/ui/search\?(.*&)?q=ledger"))
    operator.get_by_role("link", name=ENTITY).first.click()
    expect(operator.get_by_role("heading", level=1)).to_contain_text(ENTITY)
    url = urlsplit(operator.url)
    assert url.path == "/ui/entity"
    assert parse_qs(url.query)["name"] == [ENTITY]
    for agent, summary in SUMMARIES.items():
        expect(operator.get_by_text(agent, exact=True).first).to_be_visible()
        expect(operator.get_by_text(summary).first).to_be_visible()


def test_search_and_the_level_picker_work_without_javascript(
    browse: Callable[..., Page], world: World, operator_login: Login
) -> None:
    page = browse(
        base_url=world.server.base, storage_state=operator_login.state, java_script_enabled=False
    )
    page.goto("/ui/search")
    field = page.get_by_role("main").get_by_role("searchbox").first
    field.fill("ledger")
    field.press("Enter")
    page.get_by_role("link", name=ENTITY).first.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(ENTITY)
    page.goto("/ui/agents/claude-code")
    page.get_by_label("Rows shown").select_option("private")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"level=private"))
    expect(page.get_by_text(PRIVATE_ENTITY).first).to_be_visible()


def test_choosing_a_level_shows_it_at_once_with_javascript(operator: Page) -> None:
    operator.goto("/ui/")
    operator.get_by_label("Rows shown").select_option("public")
    expect(operator).to_have_url(re.compile(r"/ui/\?level=public$"))
    expect(operator.get_by_label("Rows shown")).to_have_value("public")


# -- staging ---------------------------------------------------------------------------------


def test_the_operator_promotes_a_staged_write_by_clicking_promote(
    world: World, operator: Page
) -> None:
    before, staged = world.state()
    assert ("kiosk", "kiosk") in staged
    operator.goto("/ui/staging/kiosk")
    with operator.expect_navigation() as navigation:
        operator.get_by_role("button", name="Promote").click()
    assert navigation.value.status == 200
    with Library.open(world.root) as library:
        head = library.head()
        assert head is not None and head != before
        commit = library.repo.read(head)
        rows = [row["name"] for row in library.read("kiosk").rows("known_entities")]
        waiting = [(s.caller, s.agent_id) for s in library.staged()]
    assert commit is not None and commit[1] == "commit"
    said = trailers(commit[2].decode("utf-8"))
    assert (said["Op"], said["Agent"], said["Caller"], said["Stager"]) == (
        "promote",
        "kiosk",
        "operator",
        "kiosk",
    )
    assert rows == [KIOSK_ROW]
    assert waiting == [("desk", "desk")]


def test_a_member_sees_no_promote_button_and_a_forged_promote_is_refused(
    world: World, anonymous: Page
) -> None:
    log_in(anonymous, world.desk)
    before = world.state()
    listed = anonymous.goto("/ui/staging")
    assert listed is not None and listed.status == 200
    anonymous.goto("/ui/staging/desk")
    for verb in ("Promote", "Reject"):
        expect(anonymous.get_by_role("button", name=verb)).to_have_count(0)
    for verb in ("promote", "reject"):
        # The member's own CSRF token from the page: the door and the token let the form
        # through, so the refusal is the operator-only rule's.
        with anonymous.expect_navigation() as navigation:
            anonymous.evaluate(_POST, f"/ui/staging/desk/{verb}")
        assert navigation.value.status == 403
        assert "cross-site" not in anonymous.content()
        assert world.state() == before
        anonymous.goto("/ui/staging/desk")


# A form posted from the page, with the CSRF token of the page's own forms.
_POST = """(action) => {
  const form = document.createElement("form");
  form.method = "post";
  form.action = action;
  const token = document.createElement("input");
  token.type = "hidden";
  token.name = "csrf";
  token.value = document.querySelector('input[name="csrf"]').value;
  form.append(token);
  document.body.append(form);
  form.submit();
}"""


# -- privacy ---------------------------------------------------------------------------------

# Pages desk may open (as may the operator): each answers 200. {agent}: its newest commit.
DESK_PAGES = [
    "/ui/",
    "/ui/agents/codex",
    "/ui/agents/codex?kind=sessions",
    entity_url(ENTITY),
    "/ui/search?" + urlencode({"q": "canary"}),
    "/ui/history",
    "/ui/history?agent=codex",
    "/ui/history/codex/{codex}",
    "/ui/staging",
    "/ui/staging/desk",
]
# Pages that ask for what desk may not see: any answer but a failure, and no canary in it.
PROBES = [
    "/ui/?level=private",
    "/ui/agents/codex?level=private",
    "/ui/agents/claude-code",
    "/ui/agents/claude-code?kind=sessions",
    "/ui/agents/claude-code?" + urlencode({"kind": "sessions", "level": "private"}),
    "/ui/agents/cursor",
    "/ui/agents/kiosk",
    entity_url(ENTITY, level="private"),
    entity_url(UNGRANTED_ENTITY),
    entity_url(PRIVATE_ENTITY),
    entity_url(PRIVATE_ENTITY, level="private"),
    "/ui/search?" + urlencode({"q": "gateway", "level": "private"}),
    "/ui/history?agent=cursor",
    "/ui/history?agent=claude-code",
    "/ui/history/cursor/{cursor}",
    "/ui/history/claude-code/{claude-code}",
    "/ui/history/claude-code/{claude-code}?level=private",
    "/ui/staging/kiosk",
]


def leaks(
    world: World, page: Page, paths: list[str], canaries: tuple[str, ...], must_open: list[str]
) -> dict[str, Any]:
    """Per page: the canaries in its HTML (but not those its own URL names: a page may repeat
    what was asked), and its status when it failed, sent to the login page, or did not open
    although in ``must_open``. Empty when every page keeps every canary to itself."""
    found: dict[str, Any] = {}
    for path in paths:
        url = path.format(**world.versions)
        answer = page.goto(url)
        status = answer.status if answer is not None else 0
        html = page.content()
        asked = unquote(url.replace("+", " "))
        seen = [c for c in canaries if c in html and c not in asked]
        failed = status >= 500 or (path in must_open and status != 200)
        if seen or failed or urlsplit(page.url).path == "/ui/login":
            found[url] = {"status": status, "at": page.url, "seen": seen}
    return found


def test_a_member_never_sees_private_rows_ungranted_agents_or_others_staged_writes(
    world: World, anonymous: Page
) -> None:
    log_in(anonymous, world.desk)
    assert leaks(world, anonymous, DESK_PAGES + PROBES, NOT_FOR_DESK, DESK_PAGES) == {}
    anonymous.goto("/ui/agents/codex")  # what the member may see, it does
    expect(anonymous.get_by_text(ENTITY).first).to_be_visible()


def test_the_operator_sees_no_private_row_at_team_level_and_sees_them_when_asking(
    world: World, operator: Page
) -> None:
    team = [p for p in DESK_PAGES + PROBES if "private" not in p]
    every = [p for p in team if "kiosk" not in p]  # kiosk's pages depend on its promotion
    assert leaks(world, operator, team, PRIVATE, every) == {}
    operator.goto("/ui/agents/claude-code?level=private")
    expect(operator.get_by_text(PRIVATE_ENTITY).first).to_be_visible()
    operator.goto("/ui/agents/cursor")  # and every agent's rows
    expect(operator.get_by_text(UNGRANTED_ENTITY).first).to_be_visible()


# -- keyboard -------------------------------------------------------------------------------


def test_the_keyboard_reaches_the_skip_link_first_then_the_nav(operator: Page) -> None:
    operator.set_viewport_size({"width": DESKTOP, "height": 900})
    operator.goto("/ui/")
    reached = []
    for _ in range(6):
        operator.keyboard.press("Tab")
        reached.append(operator.evaluate("document.activeElement.textContent.trim()"))
    assert reached == ["Skip to content", "bourdon", "Library", "Search", "History", "Staging"]
    skip = operator.get_by_role("link", name="Skip to content")
    skip.focus()
    box = skip.bounding_box()
    assert box is not None and box["x"] >= 0  # shown on screen while it has the focus
    operator.keyboard.press("Enter")
    assert operator.evaluate("document.activeElement.id") == "main"
