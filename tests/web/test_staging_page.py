"""The staging review through a real ``bourdon ui``: quarantined members' writes with their
diff against the live manifest, Promote and Reject for the operator only, and nothing written
for a member or a form without the session's CSRF token."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx2
import pytest

from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest
from tests.support.webui import UiServer, csrf

CANARY = "staged-private-canary"


def _entity(name: str, summary: str, visibility: str = "team") -> dict[str, str]:
    return {"name": name, "type": "project", "summary": summary, "visibility": visibility}


def _stage(library: Library, member: str, *rows: dict[str, str]) -> None:
    """What ``commit_to_federation`` over HTTP does for a quarantined member."""
    change = manifest(member, known_entities=list(rows))
    who = Provenance(caller=member, session=f"{member}-session", transcript=None)
    library.stage(member, member, change, who)


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[UiServer, dict[str, str]]]:
    base = tmp_path_factory.mktemp("staging")
    library = Library.init(base / "lib")
    for member in ("desk-chat", "field-notes", "scratch-pad", "spare-desk"):
        library.commit(member, manifest(member, known_entities=[_entity("harbor", "old plan")]))
        _stage(
            library,
            member,
            _entity("harbor", "new plan"),
            _entity("lighthouse", "a tall light"),
            _entity(CANARY, "kept to myself", "private"),
        )
    library.commit("calm-desk", manifest("calm-desk", known_entities=[_entity("quiet", "x")]))
    library.close()
    (base / "user").mkdir()
    server = UiServer(base / "lib", base / "user")
    tokens = {
        "desk-chat": server.add_member("desk-chat", "quarantined"),
        "field-notes": server.add_member("field-notes", "quarantined"),
        "reviewer": server.add_member("reviewer", "trusted"),
        "onlooker": server.add_member("onlooker", "quarantined", ["spare-desk", "calm-desk"]),
    }
    with server:
        yield server, tokens


@pytest.fixture(scope="module")
def operator(ui: tuple[UiServer, dict[str, str]]) -> Iterator[httpx2.Client]:
    with closing(ui[0].operator()) as client:
        yield client


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, timeout=30
    ).stdout.strip()


def _staged_files(root: Path) -> set[str]:
    return set(_git(root, "ls-tree", "-r", "--name-only", "HEAD", "staging").splitlines())


def _live_names(root: Path, agent: str) -> list[str]:
    return re.findall(r"name: (\S+)", _git(root, "show", f"HEAD:agents/{agent}.l5.yaml"))


def test_the_operator_sees_every_staged_write_with_a_link_to_its_diff(
    operator: httpx2.Client,
) -> None:
    page = operator.get("/ui/staging")
    assert page.status_code == 200
    for member in ("desk-chat", "field-notes", "spare-desk"):
        assert f'href="/ui/staging/{member}?member={member}"' in page.text
    assert 'aria-current="page">Staging' in page.text


def test_the_diff_shows_the_added_row_and_the_changed_field_against_the_live_manifest(
    operator: httpx2.Client,
) -> None:
    page = operator.get("/ui/staging/desk-chat", params={"member": "desk-chat"})
    assert page.status_code == 200
    html = page.text
    added = re.search(r'<li class="added">(.*?)</li>', html, flags=re.S)
    assert added and "lighthouse" in added.group(1)
    changed = re.search(r'<li class="changed">(.*?)</li>', html, flags=re.S)
    assert changed and "harbor" in changed.group(1)
    assert "old plan</del>" in changed.group(1) and "new plan</ins>" in changed.group(1)
    assert ">Promote</button>" in html and ">Reject</button>" in html
    assert CANARY not in html  # read at team, the default
    private = operator.get(
        "/ui/staging/desk-chat", params={"member": "desk-chat", "level": "private"}
    )
    assert CANARY in private.text


def test_a_quarantined_member_sees_only_its_own_staged_write_and_no_buttons(
    ui: tuple[UiServer, dict[str, str]],
) -> None:
    server, tokens = ui
    with closing(server.member(tokens["desk-chat"])) as member:
        listing = member.get("/ui/staging")
        own = member.get("/ui/staging/desk-chat", params={"level": "private"})
        other = member.get("/ui/staging/field-notes", params={"member": "field-notes"})
    assert listing.status_code == 200
    assert "desk-chat" in listing.text
    assert "field-notes" not in listing.text and "scratch-pad" not in listing.text
    assert own.status_code == 200
    assert "lighthouse" in own.text and CANARY not in own.text
    assert "Promote" not in own.text and "Reject" not in own.text
    assert other.status_code == 403
    assert "lighthouse" not in other.text


def test_a_trusted_member_sees_the_list_as_memory_status_gives_it_but_no_ones_rows(
    ui: tuple[UiServer, dict[str, str]],
) -> None:
    server, tokens = ui
    with closing(server.member(tokens["reviewer"])) as member:
        listing = member.get("/ui/staging")
        diff = member.get("/ui/staging/spare-desk", params={"member": "spare-desk"})
    assert "spare-desk" in listing.text and "/ui/staging/spare-desk?" not in listing.text
    assert diff.status_code == 404 and "lighthouse" not in diff.text


def test_a_member_granted_an_agent_cannot_tell_whether_its_owner_staged_a_write(
    ui: tuple[UiServer, dict[str, str]],
) -> None:
    server, tokens = ui
    with closing(server.member(tokens["onlooker"])) as member:
        staged = member.get("/ui/staging/spare-desk", params={"member": "spare-desk"})
        unstaged = member.get("/ui/staging/calm-desk")
        listing = member.get("/ui/staging")
    assert staged.status_code == unstaged.status_code == 404
    assert "lighthouse" not in staged.text and "spare-desk" not in listing.text
    assert staged.text.replace("spare-desk", "X") == unstaged.text.replace("calm-desk", "X")


def test_the_operator_promotes_a_staged_write_into_one_commit_naming_both(
    ui: tuple[UiServer, dict[str, str]], operator: httpx2.Client
) -> None:
    root = ui[0].root
    head = _git(root, "rev-parse", "HEAD")
    form = operator.get("/ui/staging/desk-chat", params={"member": "desk-chat"})
    answer = operator.post(
        "/ui/staging/desk-chat/promote", data={"csrf": csrf(form.text), "member": "desk-chat"}
    )
    assert answer.status_code == 303 and answer.headers["location"] == "/ui/staging"
    assert _git(root, "rev-parse", "HEAD^") == head  # exactly one commit
    message = _git(root, "log", "-1", "--format=%B")
    assert "Bourdon-Op: promote" in message
    assert "Bourdon-Caller: operator" in message and "Bourdon-Stager: desk-chat" in message
    assert "staging/desk-chat/desk-chat.l5.yaml" not in _staged_files(root)
    assert {"harbor", "lighthouse", CANARY} <= set(_live_names(root, "desk-chat"))
    short = _git(root, "rev-parse", "--short=8", "HEAD")
    notice = operator.get("/ui/staging").text
    assert f"promoted desk-chat from desk-chat: 3 rows, commit {short}" in notice
    assert f"commit {short}" not in operator.get("/ui/staging").text  # shown once


def test_the_operator_rejects_a_staged_write_in_a_commit_of_its_own(
    ui: tuple[UiServer, dict[str, str]], operator: httpx2.Client
) -> None:
    root = ui[0].root
    head = _git(root, "rev-parse", "HEAD")
    form = operator.get("/ui/staging/scratch-pad", params={"member": "scratch-pad"})
    answer = operator.post(
        "/ui/staging/scratch-pad/reject", data={"csrf": csrf(form.text), "member": "scratch-pad"}
    )
    assert answer.status_code == 303
    assert _git(root, "rev-parse", "HEAD^") == head
    assert "Bourdon-Op: reject" in _git(root, "log", "-1", "--format=%B")
    assert "staging/scratch-pad/scratch-pad.l5.yaml" not in _staged_files(root)
    assert "lighthouse" not in _live_names(root, "scratch-pad")
    short = _git(root, "rev-parse", "--short=8", "HEAD")
    notice = operator.get("/ui/staging").text
    assert f"rejected the staged write of scratch-pad for scratch-pad, commit {short}" in notice


@pytest.mark.parametrize("verb", ["promote", "reject"])
def test_a_member_cannot_promote_or_reject_even_its_own_write(
    ui: tuple[UiServer, dict[str, str]], verb: str
) -> None:
    server, tokens = ui
    head = _git(server.root, "rev-parse", "HEAD")
    with closing(server.member(tokens["field-notes"])) as member:
        token = csrf(member.get("/ui/staging").text)
        answer = member.post(
            f"/ui/staging/field-notes/{verb}", data={"csrf": token, "member": "field-notes"}
        )
    assert answer.status_code == 403
    assert _git(server.root, "rev-parse", "HEAD") == head
    assert "staging/field-notes/field-notes.l5.yaml" in _staged_files(server.root)


@pytest.mark.parametrize("sent", [None, "", "not-the-session-token"])
def test_a_promote_without_the_sessions_csrf_token_writes_nothing(
    ui: tuple[UiServer, dict[str, str]], operator: httpx2.Client, sent: str | None
) -> None:
    root = ui[0].root
    head = _git(root, "rev-parse", "HEAD")
    data = {"member": "spare-desk", **({"csrf": sent} if sent is not None else {})}
    answer = operator.post("/ui/staging/spare-desk/promote", data=data)
    assert answer.status_code == 403
    assert _git(root, "rev-parse", "HEAD") == head
    assert "staging/spare-desk/spare-desk.l5.yaml" in _staged_files(root)


def test_a_promote_without_a_session_writes_nothing(ui: tuple[UiServer, dict[str, str]]) -> None:
    root = ui[0].root
    head = _git(root, "rev-parse", "HEAD")
    with closing(ui[0].client()) as anonymous:
        answer = anonymous.post("/ui/staging/spare-desk/promote", data={"csrf": "x"})
    assert answer.status_code == 401
    assert _git(root, "rev-parse", "HEAD") == head


def test_a_cross_site_promote_is_refused_and_writes_nothing(
    ui: tuple[UiServer, dict[str, str]], operator: httpx2.Client
) -> None:
    root = ui[0].root
    head = _git(root, "rev-parse", "HEAD")
    token = csrf(operator.get("/ui/staging").text)
    answer = operator.post(
        "/ui/staging/spare-desk/promote",
        data={"csrf": token, "member": "spare-desk"},
        headers={"Origin": "https://evil.example"},
    )
    assert answer.status_code == 403
    assert _git(root, "rev-parse", "HEAD") == head
    assert "staging/spare-desk/spare-desk.l5.yaml" in _staged_files(root)
