"""``bourdon member ...`` and ``bourdon audit``, and the member registry behind them.

Tokens are shown once and never stored (only their SHA-256 and an 8-character token id);
revoke and rotate take effect on the next ``authenticate`` of a registry object that was
created before the change, without a restart, even when the file is rewritten to the same size
within one modification-time tick; concurrent ``member add`` loses nobody.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from bourdon.access.audit import AuditLog
from bourdon.access.trust import MemberRegistry
from bourdon.cli.main import main
from bourdon.formats import yamlio

TOKEN = re.compile(r"bdn_[0-9a-f]{48}")
SOURCE_ROOT = str(Path(__file__).resolve().parents[1])


@pytest.fixture
def home() -> Path:
    """The BOURDON_HOME the autouse fixture of conftest.py points at."""
    return Path(os.environ["BOURDON_HOME"])


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def add(capsys: pytest.CaptureFixture[str], member: str, *extra: str) -> str:
    code, out, err = run(capsys, "member", "add", member, *extra)
    assert code == 0, err
    tokens = TOKEN.findall(out)
    assert len(tokens) == 1, out
    return str(tokens[0])


def sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def registry_rows(home: Path) -> dict[str, dict[str, Any]]:
    data = yamlio.load((home / "federation.yaml").read_bytes(), what="federation.yaml")
    return {row["id"]: row for row in data["members"]}


def assert_no_token_material(text: str, *tokens: str) -> None:
    for token in tokens:
        assert token not in text
        assert token[4:] not in text
        assert token[8:] not in text  # anything past the public token id
        assert sha(token) not in text


# -- add -----------------------------------------------------------------------------------


def test_add_prints_the_token_once_and_stores_only_its_digest(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    code, out, err = run(
        capsys,
        "member",
        "add",
        "desk-chat",
        "--tier",
        "trusted",
        "--grant",
        "alpha",
        "--grant",
        "beta",
    )
    assert code == 0, err
    tokens = re.findall(r"bdn_\w+", out)
    assert len(tokens) == 1 and TOKEN.fullmatch(tokens[0]), out
    token = tokens[0]
    assert out.count(token) == 1
    assert "shown this once" in out

    path = home / "federation.yaml"
    raw = path.read_text(encoding="utf-8")
    assert token not in raw and token[4:] not in raw and token[8:] not in raw
    row = registry_rows(home)["desk-chat"]
    assert row["token_sha256"] == sha(token)
    assert row["token_id"] == token[:8] and len(row["token_id"]) == 8
    assert (row["tier"], row["grants"], row["revoked"]) == ("trusted", ["alpha", "beta"], None)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    member = MemberRegistry(home).authenticate(token)
    assert member is not None and member.id == "desk-chat" and member.grants == ("alpha", "beta")


def test_add_with_json_gives_the_token_and_the_default_tier_is_quarantined(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    code, out, _ = run(capsys, "member", "add", "phone", "--json")
    assert code == 0
    answer = json.loads(out)
    assert answer["id"] == "phone" and TOKEN.fullmatch(answer["token"])
    row = registry_rows(home)["phone"]
    assert row["tier"] == "quarantined" and row["grants"] == []
    assert row["token_sha256"] == sha(answer["token"])


@pytest.mark.parametrize("bad", ["../x", "A B", "x/y", "", "_x", "x\n", "a" * 65])
def test_a_bad_member_id_exits_2_and_enrols_nobody(
    capsys: pytest.CaptureFixture[str], home: Path, bad: str
) -> None:
    code, out, err = run(capsys, "member", "add", bad)
    assert code == 2
    assert "member id" in err
    assert not TOKEN.search(out + err)
    assert not (home / "federation.yaml").exists() or registry_rows(home) == {}


def test_a_bad_tier_or_namespace_exits_2(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["member", "add", "phone", "--tier", "admin"])
    assert exit_info.value.code == 2
    code, _, err = run(capsys, "member", "add", "phone", "--grant", "../etc")
    assert code == 2 and "namespace" in err
    assert not (home / "federation.yaml").exists() or registry_rows(home) == {}


def test_adding_an_active_member_again_exits_2_and_points_to_rotate(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    token = add(capsys, "laptop")
    code, out, err = run(capsys, "member", "add", "laptop")
    assert code == 2
    assert "bourdon member rotate laptop" in err
    assert not TOKEN.search(out)
    found = MemberRegistry(home).authenticate(token)
    assert found is not None and found.id == "laptop"  # the first token still works


# -- list ----------------------------------------------------------------------------------


def test_list_never_shows_token_material(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    code, out, _ = run(capsys, "member", "list")
    assert code == 0 and "No members yet" in out
    laptop = add(capsys, "laptop", "--tier", "trusted")
    phone = add(capsys, "phone", "--grant", "alpha")
    assert run(capsys, "member", "revoke", "phone")[0] == 0

    code, out, _ = run(capsys, "member", "list")
    assert code == 0
    assert_no_token_material(out, laptop, phone)
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "TIER", "GRANTS", "TOKEN", "STATE", "SINCE"]
    laptop_line = next(line for line in lines if line.startswith("laptop"))
    phone_line = next(line for line in lines if line.startswith("phone"))
    assert "trusted" in laptop_line and "active" in laptop_line
    assert f"{laptop[:8]}..." in laptop_line
    assert "alpha" in phone_line and "revoked" in phone_line

    code, out, _ = run(capsys, "member", "list", "--json")
    assert code == 0
    assert_no_token_material(out, laptop, phone)
    members = {m["id"]: m for m in json.loads(out)["members"]}
    assert set(members) == {"laptop", "phone"}
    assert "token_sha256" not in members["laptop"] and "token" not in members["laptop"]
    assert members["laptop"]["token_id"] == laptop[:8]
    assert (members["laptop"]["active"], members["phone"]["active"]) == (True, False)
    assert members["phone"]["grants"] == ["alpha"] and members["phone"]["revoked"]


# -- rotate and revoke -------------------------------------------------------------------


def test_rotate_gives_a_new_token_and_the_old_one_stops_working(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    old = add(capsys, "laptop", "--tier", "trusted")
    before = MemberRegistry(home)  # created before the change
    assert before.authenticate(old) is not None
    code, out, err = run(capsys, "member", "rotate", "laptop")
    assert code == 0, err
    tokens = TOKEN.findall(out)
    assert len(tokens) == 1 and tokens[0] != old
    new = tokens[0]
    assert before.authenticate(old) is None
    found = before.authenticate(new)
    assert found is not None and found.id == "laptop" and found.tier == "trusted"
    row = registry_rows(home)["laptop"]
    assert row["token_sha256"] == sha(new) and row["token_id"] == new[:8] and row["rotated"]
    fresh = MemberRegistry(home)
    assert fresh.authenticate(old) is None and fresh.authenticate(new) is not None

    code, out, _ = run(capsys, "member", "rotate", "laptop", "--json")
    assert code == 0
    newest = json.loads(out)["token"]
    assert before.authenticate(new) is None and before.authenticate(newest) is not None


def test_revoke_takes_effect_on_the_next_authenticate_without_a_restart(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    token = add(capsys, "phone")
    other = add(capsys, "laptop")
    before = MemberRegistry(home)
    assert before.authenticate(token) is not None
    code, out, err = run(capsys, "member", "revoke", "phone")
    assert code == 0, err
    assert "Revoked phone" in out
    assert before.authenticate(token) is None
    assert MemberRegistry(home).authenticate(token) is None
    assert before.authenticate(other) is not None  # the others are untouched
    assert registry_rows(home)["phone"]["revoked"]

    code, out, _ = run(capsys, "member", "revoke", "phone", "--json")
    assert code == 0 and json.loads(out)["active"] is False
    assert_no_token_material(out, token)


def test_a_same_size_rewrite_within_one_mtime_tick_is_still_seen(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    add(capsys, "laptop")
    first = TOKEN.findall(run(capsys, "member", "rotate", "laptop")[1])[0]  # 'rotated' is set
    path = home / "federation.yaml"
    registry = MemberRegistry(home)
    assert registry.authenticate(first) is not None
    seen = path.stat()

    # A digest starting with a digit is written quoted, so rotate until the file has the same
    # size again (half of the new tokens do).
    superseded = [first]
    for _ in range(40):
        second = TOKEN.findall(run(capsys, "member", "rotate", "laptop")[1])[0]
        if path.stat().st_size == seen.st_size:
            break
        superseded.append(second)
    os.utime(path, ns=(seen.st_atime_ns, seen.st_mtime_ns))  # as if in the same tick
    now = path.stat()
    assert (now.st_size, now.st_mtime_ns) == (seen.st_size, seen.st_mtime_ns)
    for old in superseded:
        assert registry.authenticate(old) is None
    found = registry.authenticate(second)
    assert found is not None and found.id == "laptop"

    # The same for a revoke: same size is impossible there ('revoked' gains a date), so only
    # the modification time is held still.
    seen = path.stat()
    assert run(capsys, "member", "revoke", "laptop")[0] == 0
    os.utime(path, ns=(seen.st_atime_ns, seen.st_mtime_ns))
    assert registry.authenticate(second) is None


# -- grant and ungrant -------------------------------------------------------------------


def test_grant_and_ungrant_change_what_a_member_may_read(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    token = add(capsys, "phone", "--grant", "alpha")
    registry = MemberRegistry(home)
    code, out, err = run(capsys, "member", "grant", "phone", "beta")
    assert code == 0, err
    assert "alpha, beta" in out
    found = registry.authenticate(token)
    assert found is not None and found.grants == ("alpha", "beta")
    assert run(capsys, "member", "grant", "phone", "beta")[0] == 0  # granting twice: once
    assert registry_rows(home)["phone"]["grants"] == ["alpha", "beta"]

    code, out, _ = run(capsys, "member", "ungrant", "phone", "alpha", "--json")
    assert code == 0
    assert json.loads(out)["grants"] == ["beta"]
    assert_no_token_material(out, token)
    found = registry.authenticate(token)
    assert found is not None and found.grants == ("beta",)

    code, _, err = run(capsys, "member", "grant", "phone", "../etc")
    assert code == 2 and "namespace" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["rotate", "ghost"],
        ["revoke", "ghost"],
        ["grant", "ghost", "alpha"],
        ["ungrant", "ghost", "alpha"],
    ],
)
def test_an_unknown_member_exits_4(
    capsys: pytest.CaptureFixture[str], home: Path, argv: list[str]
) -> None:
    add(capsys, "laptop")
    code, out, err = run(capsys, "member", *argv)
    assert code == 4
    assert "no member 'ghost'" in err and "bourdon member list" in err
    assert not TOKEN.search(out)
    assert set(registry_rows(home)) == {"laptop"}


# -- concurrency ---------------------------------------------------------------------------

ADDER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, sys.argv[3])
    from bourdon.cli.main import main

    start = float(sys.argv[2])
    while time.time() < start:
        time.sleep(0.001)
    sys.exit(main(["member", "add", sys.argv[1], "--json"]))
    """
)


def test_concurrent_member_add_from_8_processes_loses_none(home: Path) -> None:
    start = time.time() + 2.0  # all enrol together, once their imports are done
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", ADDER, f"m{n}", str(start), SOURCE_ROOT],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "BOURDON_HOME": str(home)},
        )
        for n in range(8)
    ]
    tokens = {}
    for n, proc in enumerate(procs):
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        tokens[f"m{n}"] = json.loads(out)["token"]
    registry = MemberRegistry(home)
    assert [m.id for m in registry.members()] == [f"m{n}" for n in range(8)]
    for member_id, token in tokens.items():
        found = registry.authenticate(token)
        assert found is not None and found.id == member_id
    assert stat.S_IMODE((home / "federation.yaml").stat().st_mode) == 0o600


# -- bourdon audit -----------------------------------------------------------------------


def fill_audit(home: Path) -> list[tuple[str, str | None, str]]:
    """60 records: (detail, namespace, decision), oldest first."""
    log = AuditLog(home)
    made: list[tuple[str, str | None, str]] = []
    for n in range(60):
        namespace = ("alpha", "beta", None)[n % 3]
        decision = "deny" if n % 4 == 0 else "allow"
        log.append(
            caller="phone" if n % 2 else "laptop",
            tier="quarantined",
            transport="http",
            op="query_agent_memory",
            namespace=namespace,
            decision=decision,
            status=403 if decision == "deny" else 200,
            detail=f"call {n}",
        )
        made.append((f"call {n}", namespace, decision))
    return made


def audit_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    code, out, err = run(capsys, "audit", *args, "--json")
    assert code == 0, err
    records: list[dict[str, Any]] = json.loads(out)["records"]
    return records


def test_audit_filters_by_namespace_and_denials_newest_last(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    code, out, _ = run(capsys, "audit")
    assert code == 0 and "The audit log is empty." in out
    assert audit_json(capsys) == []

    made = fill_audit(home)
    details = [d for d, _, _ in made]
    assert [r["detail"] for r in audit_json(capsys)] == details[-50:]  # default --limit 50
    assert [r["detail"] for r in audit_json(capsys, "--limit", "3")] == details[-3:]
    assert [r["detail"] for r in audit_json(capsys, "--limit", "100")] == details

    alpha = audit_json(capsys, "--agent", "alpha")
    assert [r["detail"] for r in alpha] == [d for d, ns, _ in made if ns == "alpha"]
    denials = audit_json(capsys, "--denials")
    assert [r["detail"] for r in denials] == [d for d, _, dec in made if dec == "deny"]
    both = audit_json(capsys, "--agent", "beta", "--denials", "--limit", "2")
    wanted = [d for d, ns, dec in made if ns == "beta" and dec == "deny"]
    assert [r["detail"] for r in both] == wanted[-2:]
    assert audit_json(capsys, "--agent", "nobody") == []
    assert set(alpha[0]) == {
        "time",
        "caller",
        "tier",
        "transport",
        "op",
        "namespace",
        "decision",
        "status",
        "detail",
    }

    code, out, _ = run(capsys, "audit", "--denials", "--limit", "2")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["TIME", "CALLER", "OP", "NAMESPACE", "DECISION", "STATUS", "DETAIL"]
    assert len(lines) == 3
    last_two = [d for d, _, dec in made if dec == "deny"][-2:]
    assert [line.rstrip().rsplit("  ", 1)[-1] for line in lines[1:]] == last_two
    assert all("deny" in line and "403" in line for line in lines[1:])
