"""The web view's door, with a real HTTP client against a real ``bourdon ui``: no page without
a session, no form from another site or without its CSRF token, the Host and Origin checks of
MCP, no token in a URL, cookies a script cannot read, sessions that end when the member's
token is rotated or revoked or when it logs out, and the audit log naming the member.

The server's library holds the bundled sample agents and one staged write of the quarantined
member ``desk`` (granted ``codex``); every write refused here is checked against git's HEAD and
the staged file.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlencode

import httpx2
import pytest

from bourdon.access.trust import MemberRegistry
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import make_library
from tests.support.webui import UiServer, csrf

STAGER = "desk"
STAGED_ROW = "desk-staged-idea"

# Every GET page of the URL contract (web-shared.md); {version} is a commit of codex.
PAGES = [
    "/ui/",
    "/ui/agents/codex",
    "/ui/agents/codex?" + urlencode({"kind": "sessions", "sort": "-date", "page": 1}),
    "/ui/entity?" + urlencode({"name": "bourdon"}),
    "/ui/search?" + urlencode({"q": "bourdon"}),
    "/ui/history",
    "/ui/history?agent=codex",
    "/ui/history/codex/{version}",
    "/ui/staging",
    f"/ui/staging/{STAGER}",
]
# Every form of the contract; each would write (or end the session) if it were let through.
FORMS = [f"/ui/staging/{STAGER}/promote", f"/ui/staging/{STAGER}/reject", "/ui/logout"]
EVIL = "https://evil.example"
# Where a token may be put in a URL by mistake (or by a page that wants it in a log).
TOKEN_URLS: dict[str, Callable[[str], str]] = {
    "a query value": lambda token: "/ui/?" + urlencode({"x": token}),
    "the search text": lambda token: "/ui/search?" + urlencode({"q": token}),
    "the login path": lambda token: f"/ui/login/{token}",
    "a field named token": lambda token: "/ui/?token=anything",
}
HEADERS = {
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
}


@dataclass
class World:
    server: UiServer
    operator: httpx2.Client
    operator_login: httpx2.Response  # the answer to the printed link
    desk: str  # the quarantined member's token
    version: str  # a commit of codex

    def state(self) -> tuple[str | None, list[tuple[str, str]]]:
        """git's HEAD and what waits in staging: nothing refused may change either."""
        with Library.open(self.server.root) as library:
            return library.head(), [(s.caller, s.agent_id) for s in library.staged()]

    def page(self, path: str) -> str:
        return path.format(version=self.version)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("web-door")
    with make_library(root / "lib") as library:
        change = {
            "agent": {"type": "other"},
            "known_entities": [{"name": STAGED_ROW, "type": "decision", "visibility": "team"}],
        }
        library.stage(STAGER, STAGER, change, Provenance(caller=STAGER))
        version = library.history("codex")[0].version_id
    (root / "user").mkdir()
    server = UiServer(root / "lib", root / "user")
    desk = server.add_member(STAGER, grants=["codex"])
    with server, contextlib.closing(server.client()) as client:
        login = client.get(server.link)
        assert login.status_code == 303, login.text
        yield World(server, client, login, desk, version)


def fresh(world: World) -> httpx2.Client:
    return world.server.client()


@contextlib.contextmanager
def member(world: World, token: str) -> Iterator[httpx2.Client]:
    """A client logged in through the token form, closed afterwards."""
    client = world.server.member(token)
    try:
        yield client
    finally:
        client.close()


def csrf_of(client: httpx2.Client) -> str:
    return csrf(client.get("/ui/").text)


def session_cookie(response: httpx2.Response) -> str:
    """The ``Set-Cookie`` header that opens the session."""
    found = [v for v in response.headers.get_list("set-cookie") if v.startswith("bourdon_session=")]
    assert len(found) == 1, response.headers.get_list("set-cookie")
    return found[0]


def attributes(set_cookie: str) -> dict[str, str]:
    """A ``Set-Cookie`` value's attributes, names lower-case (``httponly`` -> ``""``)."""
    _, *parts = (p.strip() for p in set_cookie.split(";"))
    return {k.lower(): v for k, _, v in (p.partition("=") for p in parts)}


# -- sessions -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", PAGES)
def test_no_page_is_shown_without_a_session(world: World, path: str) -> None:
    with fresh(world) as client:
        answer = client.get(world.page(path))
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == "/ui/login"
    assert "codex" not in answer.text


@pytest.mark.parametrize("path", FORMS)
def test_no_form_is_taken_without_a_session(world: World, path: str) -> None:
    before = world.state()
    with fresh(world) as client:
        answer = client.post(path, data={"csrf": csrf_of(world.operator)})
    assert answer.status_code in (401, 403), answer.text
    assert world.state() == before
    assert (STAGER, STAGER) in before[1]


def test_the_operator_session_cookie_is_httponly_strict_and_kept_to_the_web_view(
    world: World,
) -> None:
    cookie = attributes(session_cookie(world.operator_login))
    assert "httponly" in cookie
    assert cookie["samesite"].lower() == "strict"
    assert cookie["path"] == "/ui"
    assert world.operator_login.headers["location"] == "/ui/"


def test_a_member_logs_in_with_its_token_in_a_form_and_gets_the_same_cookie(
    world: World,
) -> None:
    with fresh(world) as client:
        form = client.get("/ui/login")
        login = attributes(
            next(v for v in form.headers.get_list("set-cookie") if v.startswith("bourdon_login="))
        )
        assert "httponly" in login and login["samesite"].lower() == "strict"
        answer = client.post("/ui/login", data={"token": world.desk, "csrf": csrf(form.text)})
        assert answer.status_code == 303, answer.text
        cookie = attributes(session_cookie(answer))
        assert "httponly" in cookie
        assert cookie["samesite"].lower() == "strict"
        assert cookie["path"] == "/ui"
        library = client.get("/ui/")
    assert library.status_code == 200
    assert "codex" in library.text and "claude-code" not in library.text


def test_the_printed_login_link_holds_no_member_token_and_works_once(world: World) -> None:
    assert "bdn_" not in world.server.link
    with fresh(world) as client:
        again = client.get(world.server.link)
        assert again.status_code == 403
        assert "used already" in again.text
        assert "bourdon_session=" not in " ".join(again.headers.get_list("set-cookie"))
        assert client.get("/ui/").status_code == 303


def test_the_login_form_refuses_a_post_without_its_own_cookie(world: World) -> None:
    """Login CSRF: another site's page cannot log the operator's browser in as a member."""
    with fresh(world) as shown:
        value = csrf(shown.get("/ui/login").text)
    with fresh(world) as client:  # the form's value, but not the cookie that goes with it
        answer = client.post("/ui/login", data={"token": world.desk, "csrf": value})
        assert answer.status_code == 403
        assert "bourdon_session=" not in " ".join(answer.headers.get_list("set-cookie"))
        assert client.get("/ui/").status_code == 303
    with fresh(world) as client:  # its own cookie, but another value in the form
        client.get("/ui/login")
        answer = client.post("/ui/login", data={"token": world.desk, "csrf": value})
        assert answer.status_code == 403


def test_a_wrong_token_is_refused_with_a_message_and_opens_no_session(world: World) -> None:
    with fresh(world) as client:
        form = client.get("/ui/login")
        answer = client.post(
            "/ui/login", data={"token": "bdn_" + "0" * 48, "csrf": csrf(form.text)}
        )
        assert answer.status_code == 401
        assert "That token is wrong, revoked or rotated." in answer.text
        assert "bourdon_session=" not in " ".join(answer.headers.get_list("set-cookie"))
        assert client.get("/ui/").status_code == 303


@pytest.mark.parametrize("change", ["rotate", "revoke"])
def test_a_rotated_or_revoked_member_is_logged_out_on_its_next_request(
    world: World, change: str
) -> None:
    name = f"desk-{change}"
    token = world.server.add_member(name, grants=["codex"])
    with member(world, token) as client:
        assert client.get("/ui/").status_code == 200
        form = csrf_of(client)
        getattr(MemberRegistry(world.server.home), change)(name)
        answer = client.get("/ui/")
        assert answer.status_code == 303
        assert answer.headers["location"] == "/ui/login"
        assert client.post("/ui/logout", data={"csrf": form}).status_code == 401


def test_a_member_sees_a_changed_grant_or_tier_on_its_next_request(world: World) -> None:
    """The session keeps who logged in, not what it was allowed then: an ungrant, a grant or
    a new tier holds at once, as for the member's MCP requests."""
    name = "desk-grants"
    token = world.server.add_member(name, grants=["codex"])
    registry = MemberRegistry(world.server.home)
    with member(world, token) as client:
        assert "codex" in client.get("/ui/").text
        registry.ungrant(name, "codex")
        assert "codex" not in client.get("/ui/").text
        registry.grant(name, "cursor")
        assert "cursor" in client.get("/ui/").text
        assert "claude-code" not in client.get("/ui/").text
        registry.set_tier(name, "trusted")
        assert "claude-code" in client.get("/ui/").text


def test_logging_out_ends_the_session_for_good(world: World) -> None:
    with member(world, world.desk) as client:
        old = client.cookies["bourdon_session"]
        answer = client.post("/ui/logout", data={"csrf": csrf_of(client)})
        assert answer.status_code == 303
        assert answer.headers["location"] == "/ui/login"
    with fresh(world) as replay:  # the old cookie sent again by hand
        answer = replay.get("/ui/", headers={"cookie": f"bourdon_session={old}"})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/ui/login"


# -- forms ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FORMS)
def test_a_cross_site_form_post_is_refused_at_the_door_even_with_session_and_token(
    world: World, path: str
) -> None:
    before = world.state()
    answer = world.operator.post(
        path, data={"csrf": csrf_of(world.operator)}, headers={"origin": EVIL}
    )
    assert answer.status_code == 403
    assert answer.json()["error"]["message"] == "cross-origin requests are refused"
    assert world.state() == before
    assert world.operator.get("/ui/").status_code == 200  # not logged out either


@pytest.mark.parametrize("path", FORMS)
@pytest.mark.parametrize("sent", [None, "", "not-the-token"])
def test_a_form_post_without_its_csrf_token_is_refused(
    world: World, path: str, sent: str | None
) -> None:
    before = world.state()
    data = {} if sent is None else {"csrf": sent}
    answer = world.operator.post(path, data=data)
    assert answer.status_code == 403
    assert "cross-site form posts are refused" in answer.text
    assert world.state() == before
    assert world.operator.get("/ui/").status_code == 200


def test_a_form_post_with_its_csrf_token_from_another_session_is_refused(world: World) -> None:
    with member(world, world.desk) as other:
        theirs = csrf_of(other)
        before = world.state()
        answer = world.operator.post("/ui/logout", data={"csrf": theirs})
        assert answer.status_code == 403
        assert world.state() == before
        assert other.get("/ui/").status_code == 200
    assert world.operator.get("/ui/").status_code == 200


# -- the door -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/ui/", "/ui/login", "/ui/staging", "/mcp"])
def test_a_foreign_host_header_is_misdirected_as_for_mcp(world: World, path: str) -> None:
    answer = world.operator.get(path, headers={"host": f"evil.example:{world.server.port}"})
    assert answer.status_code == 421
    assert answer.json()["error"]["code"] == "misdirected"
    assert "codex" not in answer.text


def test_a_foreign_origin_is_refused_on_a_page_as_for_mcp(world: World) -> None:
    answer = world.operator.get("/ui/", headers={"origin": EVIL})
    assert answer.status_code == 403
    assert "codex" not in answer.text


@pytest.mark.parametrize("where", TOKEN_URLS)
def test_a_member_token_in_a_url_is_refused(world: World, where: str) -> None:
    with fresh(world) as client:
        answer = client.get(TOKEN_URLS[where](world.desk))
    assert answer.status_code == 400
    assert "tokens in the URL are refused" in answer.json()["error"]["message"]
    assert world.desk not in answer.text


@pytest.mark.parametrize("path", ["/ui/login", *PAGES])
def test_every_page_is_sent_with_the_security_headers(world: World, path: str) -> None:
    answer = world.operator.get(world.page(path))
    assert answer.status_code == 200, answer.text
    for name, value in HEADERS.items():
        assert answer.headers.get(name) == value, name
    policy = answer.headers["content-security-policy"]
    for directive in ("default-src 'self'", "script-src 'self'", "style-src 'self'"):
        assert directive in policy
    assert "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


def test_the_audit_log_names_the_member_for_the_tools_the_web_view_calls(world: World) -> None:
    with member(world, world.desk) as client:
        assert client.get("/ui/").status_code == 200
    lines = (world.server.home / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    mine = [r for r in records if r["caller"] == STAGER and r["op"] == "list_agents"]
    assert mine, f"no list_agents call of {STAGER} in the audit log: {records[-5:]}"
    assert mine[-1]["decision"] == "allow"
    assert mine[-1]["tier"] == "quarantined"
    assert mine[-1]["status"] == 200
    assert world.desk not in "\n".join(lines)
