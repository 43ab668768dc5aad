"""The reference Bourdon's member registry keeps working, and ``bourdon member import`` converts it.

The registry below is written by hand in the shape bourdon 0.32.2 writes
(``$BOURDON_HOME/federation.yaml``: ``version: 1`` and an ``agents:`` mapping whose rows hold
the SHA-256 hex of the token string); tests/interop has the real reference enrol members.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from bourdon.access.callers import Caller
from bourdon.access.trust import MemberRegistry
from bourdon.access.visibility import resolve
from bourdon.cli.main import main
from bourdon.model import Visibility
from bourdon.serve.caller import scope_of, seen_level

LAPTOP = "bdn_" + "1a" * 24
GUEST = "bdn_" + "2b" * 24
GONE = "bdn_" + "3c" * 24
ROUTED = "bdn_" + "4d" * 24
CAPPED = "bdn_" + "5e" * 24
ODD = "bdn_" + "6f" * 24


def sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


REFERENCE = f"""agents:
  guest:
    created_at: '2026-12-01T13:59:38Z'
    grants:
    - alpha-agent
    handoff_required: false
    member_id: 1d282608-32b9-445d-b2fc-5485215bbf7a
    revoked: false
    tier: quarantined
    token_sha256: {sha(GUEST)}
  laptop:
    created_at: '2026-12-01T13:59:38Z'
    grants: []
    handoff_required: false
    member_id: f6898af5-3eb2-4d86-9044-1b176aaafcb4
    revoked: false
    tier: trusted
    token_sha256: {sha(LAPTOP)}
  old-phone:
    created_at: '2026-11-01T10:00:00Z'
    grants: []
    revoked: true
    revoked_at: '2026-11-20T10:00:00Z'
    tier: trusted
    token_sha256: {sha(GONE)}
  router-only:
    grants: []
    handoff_required: true
    revoked: false
    tier: trusted
    token_sha256: {sha(ROUTED)}
  reader:
    grants: []
    max_access: public
    revoked: false
    tier: trusted
    token_sha256: {sha(CAPPED)}
  odd:
    grants: []
    max_access: everything
    revoked: false
    token_sha256: {sha(ODD)}
version: 1
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / ".bourdon"
    folder.mkdir()
    (folder / "federation.yaml").write_text(REFERENCE, encoding="utf-8")
    return folder


def test_reference_tokens_authenticate_with_their_tier_and_grants(home: Path) -> None:
    registry = MemberRegistry(home)
    laptop, guest = registry.authenticate(LAPTOP), registry.authenticate(GUEST)
    assert laptop is not None and (laptop.id, laptop.tier, laptop.grants) == (
        "laptop",
        "trusted",
        (),
    )
    assert guest is not None and (guest.id, guest.tier, guest.grants) == (
        "guest",
        "quarantined",
        ("alpha-agent",),
    )
    assert registry.get("old-phone").revoked == "2026-11-20T10:00:00Z"
    assert registry.authenticate(GONE) is None


def test_reference_members_never_get_more_access_than_the_reference_gave(home: Path) -> None:
    registry = MemberRegistry(home)
    # Without a signed handoff the reference treats such a member's requests as tainted.
    routed = registry.authenticate(ROUTED)
    assert routed is not None and routed.tier == "quarantined"
    capped = registry.authenticate(CAPPED)
    assert capped is not None and (capped.tier, capped.max_access) == ("trusted", "public")
    odd = registry.authenticate(ODD)  # no tier, an unknown ceiling: the narrowest of both
    assert odd is not None and (odd.tier, odd.max_access) == ("quarantined", "public")


def test_a_members_ceiling_caps_the_level_it_is_answered_at() -> None:
    caller = Caller("reader", "trusted", frozenset(), "http", max_access="public")
    access = resolve("team", False, scope=scope_of(caller))
    assert access.level is Visibility.PUBLIC
    assert access.warning == "this caller may read up to public; answered at public"
    assert seen_level(caller) == Visibility.PUBLIC
    uncapped = Caller("laptop", "trusted", frozenset(), "http")
    assert resolve("team", False, scope=scope_of(uncapped)).level is Visibility.TEAM


def test_the_first_write_converts_the_file_and_keeps_the_original(home: Path) -> None:
    registry = MemberRegistry(home)
    new = registry.add("desk", "trusted")
    backup = home / "federation.yaml.reference.bak"
    assert backup.read_text(encoding="utf-8") == REFERENCE
    text = (home / "federation.yaml").read_text(encoding="utf-8")
    assert text.startswith("members:") and "agents:" not in text
    fresh = MemberRegistry(home)
    for token, member in ((LAPTOP, "laptop"), (GUEST, "guest"), (new, "desk")):
        found = fresh.authenticate(token)
        assert found is not None and found.id == member
    assert fresh.authenticate(GONE) is None
    capped = fresh.authenticate(CAPPED)
    assert capped is not None and capped.max_access == "public"
    # What bourdon does not use is kept on the row, the reference's booleans as booleans.
    assert fresh.get("guest").extra["member_id"] == "1d282608-32b9-445d-b2fc-5485215bbf7a"
    assert fresh.get("guest").extra["handoff_required"] is False


def test_member_import_converts_once_and_keeps_every_token(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BOURDON_HOME", str(home))
    assert main(["member", "import", "--json"]) == 0
    done: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert done["converted"] is True
    assert Path(done["backup"]).read_text(encoding="utf-8") == REFERENCE
    states = {m["id"]: (m["tier"], m["active"]) for m in done["members"]}
    assert states == {
        "guest": ("quarantined", True),
        "laptop": ("trusted", True),
        "odd": ("quarantined", True),
        "old-phone": ("trusted", False),
        "reader": ("trusted", True),
        "router-only": ("quarantined", True),
    }
    registry = MemberRegistry(home)
    assert [registry.authenticate(t) is not None for t in (LAPTOP, GUEST, GONE)] == [
        True,
        True,
        False,
    ]
    assert main(["member", "import"]) == 0
    assert "already in bourdon's shape (6 members); nothing to do" in capsys.readouterr().out
