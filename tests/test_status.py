"""The library reports its own health: ``memory_status``, ``bourdon status`` and ``bourdon doctor``.

Real parts throughout: libraries in temporary git repositories, a reader whose store drifts
through the real export pipeline, a staged write whose commit git itself dates eight days back,
a peer on a refused port of 127.0.0.1, the MCP client in-process and over stdio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from bourdon.access.trust import MemberRegistry
from bourdon.cli.main import main
from bourdon.federation.peers import Peer, PeerList
from bourdon.ingest.outcome import REFUSED
from bourdon.ingest.pipeline import export_reader
from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    default_health,
    store_path,
)
from bourdon.replicate.remotes import add_remote
from bourdon.replicate.state import RemoteState
from bourdon.serve.server import create_server
from bourdon.status import doctor, health
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import make_library
from bourdon.testing.remotes import bare_repository, reject_pushes
from bourdon.testing.serving import child_env, free_port

pytestmark = pytest.mark.anyio

DAY = 86_400


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FakeReader:
    """A reader over ``<home>/.fake-agent/rows.json``: the rows of its "native store"."""

    name = "fake-agent"
    agent_type = "code-assistant"
    store_env = "FAKE_AGENT_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        return [ctx.home / ".fake-agent"]

    def read(self, ctx: ReaderContext) -> ReadResult:
        folder = store_path(self, ctx)
        assert folder is not None
        data = json.loads((folder / "rows.json").read_text(encoding="utf-8"))
        return ReadResult({"agent": {"instance": "fake"}, **data}, ReadStats(files=1))

    def health(self, ctx: ReaderContext) -> Health:
        return default_health(self, ctx)


def write_store(home: Path, tick: int, **sections: Any) -> None:
    path = home / ".fake-agent" / "rows.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sections), encoding="utf-8")
    stamp = time.time() + tick  # a distinct modification time: the fingerprint must see it
    os.utime(path, (stamp, stamp))


def make_drift(library: Library, home: Path) -> None:
    """Export four rows, then let the store yield none: the export refuses and records drift."""
    ctx = ReaderContext(home=home, machine="test-box")
    rows = [{"name": f"entity-{i}", "type": "project"} for i in range(4)]
    write_store(home, 1, known_entities=rows)
    assert export_reader(library, FakeReader(), ctx).outcome == "committed"
    write_store(home, 2)
    assert export_reader(library, FakeReader(), ctx).outcome == REFUSED


def git(root: Path, *args: str, stdin: str | None = None, **env: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        env={**child_env(root.parent), **env},
    )
    return done.stdout.strip()


def backdate_head(root: Path, days: int) -> None:
    """Give the last commit a date ``days`` back, as git records one: same tree, parent and
    message, committed by git itself with that date (the staged write's age is its commit's)."""
    when = f"@{int(time.time()) - days * DAY} +0000"
    who = {
        "GIT_AUTHOR_NAME": "desk-chat",
        "GIT_AUTHOR_EMAIL": "desk-chat@example.com",
        "GIT_COMMITTER_NAME": "bourdon",
        "GIT_COMMITTER_EMAIL": "bourdon@example.com",
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
    }
    message = git(root, "log", "-1", "--format=%B")
    old = git(root, "rev-parse", "HEAD")
    new = git(
        root, "commit-tree", "HEAD^{tree}", "-p", "HEAD^", "-F", "-", stdin=message + "\n", **who
    )
    git(root, "update-ref", "refs/heads/main", new, old)


def stage_old_write(library: Library) -> None:
    change = {"notes": [{"date": "2026-11-01", "text": "from the desk"}]}
    library.stage("desk-chat", "codex", change, Provenance(caller="desk-chat"))
    backdate_head(library.root, 8)


def dead_peer(home: Path) -> str:
    """peers.yaml naming a peer on 127.0.0.1 where nothing listens (connection refused)."""
    url = f"http://127.0.0.1:{free_port()}/mcp"
    PeerList(home / ".bourdon").add(Peer("desktop", url))
    return url


@pytest.fixture
def world(tmp_path: Path, isolated_home: Path) -> Iterator[Library]:
    """The sample library with a drifting reader and a stale staged write; a dead peer."""
    library = make_library(tmp_path / "lib")
    make_drift(library, isolated_home)
    stage_old_write(library)
    dead_peer(isolated_home)
    yield library
    library.close()


Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    """``bourdon`` in-process, with the fake reader as the one registered reader."""
    monkeypatch.setattr(
        "bourdon.ingest.selection.available_readers",
        lambda only=None: ({"fake-agent": FakeReader()}, []),
    )

    def run(*args: object) -> tuple[int, str, str]:
        code = main([*map(str, args)])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def by_reader(report: dict[str, Any], name: str = "fake-agent") -> dict[str, Any]:
    return next(r for r in report["readers"] if r["reader"] == name)


def codes(problems: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    return {p["code"]: p for p in problems}


async def status_of(client: Client) -> dict[str, Any]:
    result = await client.call_tool("memory_status", {})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def check_world(report: dict[str, Any]) -> None:
    """What every surface must say about ``world``: drift, a stale staged write."""
    fake = by_reader(report)
    assert fake["drifting"] is True and fake["yielding"] is False
    assert fake["erosion"] == {"refused": True, "forced": False}
    assert "yielded no rows" in fake["drift"]["reason"]
    [write] = report["staging"]["writes"]
    assert (write["caller"], write["agent_id"], write["stale"]) == ("desk-chat", "codex", True)
    assert write["age_seconds"] >= 8 * DAY - 60
    assert report["staging"]["stale"] == 1
    found = codes(report["problems"])
    assert "reader_drifting" in found and "stale_staged_write" in found


# -- memory_status -------------------------------------------------------------------------


async def test_memory_status_reports_drift_a_dead_peer_and_a_stale_staged_write(
    world: Library, isolated_home: Path
) -> None:
    server = create_server(
        world.root,
        watch=False,
        home=isolated_home / ".bourdon",
        readers=({"fake-agent": FakeReader()}, []),
        reader_ctx=ReaderContext(home=isolated_home, machine="test-box"),
    )
    async with Client(server, mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        hints = tools["memory_status"].annotations
        assert hints is not None and hints.read_only_hint and hints.idempotent_hint

        report = await status_of(client)
        check_world(report)
        assert report["scope"] == "full" and report["library"] == str(world.root)
        [peer] = report["peers"]["peers"]
        # No federated call yet: the peer is not checked, and nothing is claimed about it.
        assert (peer["name"], peer["checked"], peer["reachable"]) == ("desktop", False, None)
        assert peer["latency_ms"] is None and report["peers"]["not_checked"] == 1
        assert report["index"]["loaded"] is True and report["index"]["matches_head"] is True
        assert report["index"]["head"] == world.head() == report["head"]
        codex = report["agents"]["agents"]["codex"]
        assert codex["valid"] and codex["spec_version"] == "0.1" and len(codex["digest8"]) == 8
        assert sum(codex["by_visibility"].values()) == codex["total"] == sum(codex["rows"].values())
        assert report["schema_versions"] == {"0.1": 6}

        # A federated call reaches the dead peer; memory_status reports how it went.
        await client.call_tool("find_entity", {"name": "bourdon"})
        [peer] = (await status_of(client))["peers"]["peers"]
        assert peer["checked"] is True and peer["reachable"] is False
        assert peer["problem"] and "Connect" in peer["problem"]
        # ... and that federated calls now skip it for a while, without asking it
        assert peer["backoff"]["failures"] == 1 and not peer["backoff"]["probing"]
        assert peer["backoff"]["problem"] == "could not connect"
        assert "peer_unreachable" in codes((await status_of(client))["problems"])

        # What changes is seen on the next call: a new staged write (HEAD), a new remote
        # (the git config), a write interrupted by a process that is gone (its intent file).
        world.stage(
            "desk-chat",
            "cursor",
            {"notes": [{"date": "2026-11-02", "text": "x"}]},
            Provenance(caller="desk-chat"),
        )
        git(world.root, "remote", "add", "origin", str(world.root.parent / "nowhere.git"))
        intent = {"paths": ["agents/codex.l5.yaml"], "head": world.head(), "pid": gone_pid()}
        (world.root / ".bourdon" / "intent.json").write_text(json.dumps(intent))
        report = await status_of(client)
    assert [w["agent_id"] for w in report["staging"]["writes"]] == ["codex", "cursor"]
    [remote] = report["remotes"]["remotes"]
    assert (remote["name"], remote["last_sync"], remote["ahead"]) == ("origin", None, None)
    found = codes(report["problems"])
    assert found["remote_never_synced"]["fix"].endswith("sync origin")
    assert found["interrupted_write"]["severity"] == "error"
    assert report["leftovers"][0]["kind"] == "intent"


def gone_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


async def test_memory_status_over_stdio(world: Library, isolated_home: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "bourdon", "--library", str(world.root), "serve"],
        env=child_env(isolated_home),
    )
    async with Client(params) as client:
        report = await status_of(client)
        await client.call_tool("list_agents", {})  # a federated call: it reaches the dead peer
        after = await status_of(client)
    check_world(report)
    # The fake reader is not registered in that process: it is known from its watermark.
    fake = by_reader(report)
    assert fake["registered"] is False and fake["present"] is None
    assert {r["reader"] for r in report["readers"] if r["registered"]} >= {"claude-code", "codex"}
    assert report["peers"]["peers"][0]["checked"] is False
    [peer] = after["peers"]["peers"]
    assert peer["checked"] is True and peer["reachable"] is False and peer["problem"]
    assert codes(after["problems"])["peer_unreachable"]["fix"] == "bourdon peers remove desktop"


# -- bourdon status and doctor -------------------------------------------------------------


def test_status_json_reports_drift_a_dead_peer_and_a_stale_staged_write(
    world: Library, cli: Run
) -> None:
    code, out, _ = cli("--library", world.root, "status", "--json", "--deadline", "20")
    assert code == 0
    report = json.loads(out)
    check_world(report)
    [peer] = report["peers"]["peers"]
    assert peer["checked"] is True and peer["reachable"] is False and peer["problem"]
    assert report["index"] == {"loaded": False, "head": world.head()}
    assert "checks" not in report  # the slow checks are doctor's

    code, out, _ = cli("--library", world.root, "status", "--no-peers")
    assert code == 0
    assert "DRIFTING" in out and "not checked" in out and "older than 7 days" in out
    assert "'bourdon doctor' gives the fix of each" in out


def test_doctor_names_a_fix_for_each_problem(world: Library, cli: Run) -> None:
    code, out, _ = cli("--library", world.root, "doctor", "--json", "--deadline", "20")
    data = json.loads(out)
    found = codes(data["problems"])
    lib = str(world.root)
    assert found["reader_drifting"]["fix"] == f"bourdon --library {lib} export fake-agent --dry-run"
    assert found["stale_staged_write"]["fix"] == (
        f"bourdon --library {lib} staging promote codex --from desk-chat"
    )
    assert "staging reject codex --from desk-chat" in found["stale_staged_write"]["message"]
    assert found["peer_unreachable"]["fix"] == "bourdon peers remove desktop"
    assert all(p["severity"] == "warning" for p in data["problems"])
    assert code == 0 and data["ok"] is True
    assert data["checks"]["fsck"]["clean"] is True and data["checks"]["manifests"] == []

    code, out, _ = cli("--library", world.root, "doctor", "--no-peers")
    assert code == 0
    assert "WARNING  reader_drifting:" in out
    assert f"fix: bourdon --library {lib} staging promote codex --from desk-chat" in out


def test_absent_is_reported_as_absent_not_as_zero(
    tmp_path: Path, isolated_home: Path, cli: Run
) -> None:
    Library.init(tmp_path / "empty").close()
    dead_peer(isolated_home)
    code, out, _ = cli("--library", tmp_path / "empty", "status", "--json", "--no-peers")
    assert code == 0
    report = json.loads(out)
    fake = by_reader(report)
    for key in ("last_export", "last_commit", "outcome", "rows", "yielding", "drifting", "erosion"):
        assert fake[key] is None, key  # no export ever ran: unknown, not "0 rows"
    assert report["members"] is None  # no member registry at all
    [peer] = report["peers"]["peers"]
    assert (peer["checked"], peer["reachable"], peer["latency_ms"]) == (False, None, None)
    # What was looked at and found empty is a count.
    assert report["agents"]["count"] == 0 and report["staging"]["waiting"] == 0
    assert report["remotes"] == {"configured": 0, "failing": 0, "remotes": []}
    assert report["schema_versions"] == {} and report["problems"] == []


def test_members_are_counted_by_tier_with_the_revoked_apart(
    sample_library: Library, isolated_home: Path, cli: Run
) -> None:
    registry = MemberRegistry(isolated_home / ".bourdon")
    registry.add("laptop", "trusted")
    registry.add("desk-chat", grants=["codex"])
    registry.add("old-box", "trusted")
    registry.add("desktop", "trusted", peer=True)
    registry.revoke("old-box")
    code, out, _ = cli("--library", sample_library.root, "status", "--json", "--no-peers")
    assert code == 0
    assert json.loads(out)["members"] == {
        "active": 3,
        "trusted": 2,
        "quarantined": 1,
        "revoked": 1,
        "peers": 1,
    }
    assert (
        "Members  3 active (2 trusted, 1 quarantined, 1 peer), 1 revoked"
        in cli("--library", sample_library.root, "status", "--no-peers")[1]
    )


def test_doctor_checks_a_bind_off_loopback_against_the_members(
    sample_library: Library, isolated_home: Path, cli: Run
) -> None:
    root = sample_library.root
    code, out, _ = cli("--library", root, "doctor", "--json", "--no-peers", "--host", "0.0.0.0")
    exposed = codes(json.loads(out)["problems"])["exposed_without_auth"]
    assert code == 7 and exposed["severity"] == "error"
    assert exposed["fix"] == "bourdon member add NAME"
    assert "bourdon serve --transport http --host 127.0.0.1" in exposed["message"]
    code, out, _ = cli("--library", root, "doctor", "--json", "--no-peers", "--host", "127.0.0.1")
    assert "exposed_without_auth" not in codes(json.loads(out)["problems"])

    MemberRegistry(isolated_home / ".bourdon").add("laptop", "trusted")
    code, out, _ = cli("--library", root, "doctor", "--json", "--no-peers", "--host", "0.0.0.0")
    assert "exposed_without_auth" not in codes(json.loads(out)["problems"])
    assert code == 0


def test_doctor_checks_the_git_identity_hand_commits_use(
    sample_library: Library, isolated_home: Path, cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (
        "EMAIL",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ):
        monkeypatch.delenv(name, raising=False)
    config = isolated_home / ".gitconfig"
    config.write_text("[user]\n\tuseConfigOnly = true\n")  # no guessing from the host name
    root = sample_library.root
    code, out, _ = cli("--library", root, "doctor", "--json", "--no-peers")
    missing = codes(json.loads(out)["problems"])["git_identity_missing"]
    assert code == 0 and missing["severity"] == "warning"
    assert missing["fix"] == (
        f"git -C {root} config user.name 'Your Name' && "
        f"git -C {root} config user.email you@example.com"
    )
    assert "bourdon's own commits do not need them" in missing["message"]

    config.write_text("[user]\n\tuseConfigOnly = true\n\tname = Ada\n\temail = ada@example.com\n")
    data = json.loads(cli("--library", root, "doctor", "--json", "--no-peers")[1])
    assert "git_identity_missing" not in codes(data["problems"])
    assert data["checks"]["git_identity"] == {"ok": True, "ident": "Ada <ada@example.com>"}


def test_doctor_finds_manifests_that_do_not_validate_at_head_or_on_disk(
    sample_library: Library, cli: Run
) -> None:
    root = sample_library.root
    good = sample_library.history("cursor")[0].version_id
    sample_library.close()  # brings git's own index in line with HEAD, as any bourdon run does
    # A hand commit of a broken manifest (git itself, bypassing bourdon), then a hand edit.
    (root / "agents" / "cursor.l5.yaml").write_text("spec_version: '0.1'\nagent: [broken\n")
    git(root, "add", "agents/cursor.l5.yaml")
    git(
        root,
        "commit",
        "-q",
        "-m",
        "hand commit",
        GIT_AUTHOR_NAME="Ada",
        GIT_AUTHOR_EMAIL="ada@example.com",
        GIT_COMMITTER_NAME="Ada",
        GIT_COMMITTER_EMAIL="ada@example.com",
    )
    (root / "agents" / "codex.l5.yaml").write_text("agent: {id: codex}\n")
    code, out, _ = cli("--library", root, "doctor", "--json", "--no-peers")
    assert code == 7
    found = {(p["code"], p["subject"]): p for p in json.loads(out)["problems"]}
    at_head = found["manifest_invalid", "agents/cursor.l5.yaml"]
    assert at_head["fix"] == (
        f"git -C {root} checkout {good[:12]} -- agents/cursor.l5.yaml && "
        f"git -C {root} commit -m 'restore cursor' -- agents/cursor.l5.yaml"
    )
    on_disk = found["hand_edit_invalid", "agents/codex.l5.yaml"]
    assert on_disk["fix"] == f"git -C {root} checkout -- agents/codex.l5.yaml"
    assert on_disk["severity"] == "error"
    # status sees the manifest that is broken at HEAD without the slow checks.
    report = json.loads(cli("--library", root, "status", "--json", "--no-peers")[1])
    assert report["agents"]["agents"]["cursor"]["valid"] is False
    assert "manifest_invalid" in codes(report["problems"])


def test_doctor_without_a_library_says_how_to_make_one(tmp_path: Path, cli: Run) -> None:
    code, out, _ = cli("--library", tmp_path / "none", "doctor", "--json", "--no-peers")
    [missing] = [p for p in json.loads(out)["problems"] if p["code"] == "no_library"]
    assert code == 7 and missing["fix"] == f"bourdon init {tmp_path / 'none'}"
    code, _, err = cli("--library", tmp_path / "none", "status")
    assert code == 7 and "bourdon init" in err


# -- the report's pure parts ---------------------------------------------------------------


def test_doctor_turns_a_failed_remote_sync_into_its_fix(tmp_path: Path) -> None:
    failed = RemoteState(
        name="origin",
        url="https://ada:s3cret@git.example.com/ada/library.git",
        visibility="team",
        last_attempt="2026-11-30T01:00:00Z",
        last_sync="2026-11-29T01:00:00Z",
        last_error="git push failed: remote rejected: pushes are closed for maintenance",
        last_error_at="2026-11-30T01:00:01Z",
        ahead=2,
        behind=0,
    )
    facts = health.Facts(root=tmp_path / "lib", exists=True, remotes=[failed])
    report = health.compose(facts)
    assert (
        report["remotes"]["remotes"][0]["url"] == "https://ada:***@git.example.com/ada/library.git"
    )
    [problem] = [p for p in report["problems"] if p["code"] == "remote_sync_failed"]
    assert problem["severity"] == "error" and problem["subject"] == "origin"
    assert problem["fix"] == f"bourdon --library {tmp_path / 'lib'} sync origin"
    assert "pushes are closed for maintenance" in problem["message"]
    assert f"git -C {tmp_path / 'lib'} ls-remote origin" in problem["message"]
    assert "s3cret" not in json.dumps(report)
    assert doctor.has_errors(report["problems"])


def test_a_quarantined_audience_sees_its_namespaces_and_counts_only(
    world: Library, isolated_home: Path
) -> None:
    facts = health.collect(
        world,
        world.root,
        isolated_home / ".bourdon",
        readers=({"fake-agent": FakeReader()}, []),
        ctx=ReaderContext(home=isolated_home),
        peer_outcomes={"desktop": {"reachable": False, "problem": "refused"}},
    )
    full = health.compose(facts)
    assert (
        set(full["agents"]["agents"]) > {"codex"}
        and full["agents"]["totals"]["by_visibility"]["private"]
    )
    desk = health.Audience(
        agents=frozenset({"codex", "desk-chat"}), private=False, detail=False, me="desk-chat"
    )
    seen = health.compose(facts, desk)
    text = json.dumps(seen)
    assert seen["scope"] == "filtered" and "library" not in seen
    assert list(seen["agents"]["agents"]) == ["codex"]
    assert set(seen["agents"]["agents"]["codex"]["by_visibility"]) == {"public", "team"}
    assert seen["readers"] == []  # fake-agent is not one of its namespaces
    assert seen["peers"] == {"configured": 1, "reachable": 0, "unreachable": 1, "not_checked": 0}
    assert "127.0.0.1" not in text and "desktop" not in text and str(world.root) not in text
    assert [w["caller"] for w in seen["staging"]["writes"]] == ["desk-chat"]
    other = health.Audience(agents=frozenset({"codex"}), private=False, detail=False, me="x")
    assert health.compose(facts, other)["staging"]["writes"] == []
    assert "claude-code" not in text


def test_bourdon_readers_shows_a_reader_known_only_from_its_watermark(
    world: Library, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bourdon.ingest.selection.available_readers", lambda only=None: ({}, []))
    assert main(["--library", str(world.root), "readers", "--json"]) == 0
    [fake] = json.loads(capsys.readouterr().out)["readers"]
    assert (fake["reader"], fake["registered"], fake["drifting"]) == ("fake-agent", False, True)
    assert main(["--library", str(world.root), "readers"]) == 0
    out = capsys.readouterr().out
    assert "fake-agent  (not registered)" in out and "DRIFTING" in out


# -- a remote that rejects pushes, end to end ----------------------------------------------


async def test_a_remote_that_rejects_pushes_is_reported_by_every_surface(
    tmp_path: Path, isolated_home: Path, cli: Run
) -> None:
    library = make_library(tmp_path / "lib")
    remote = bare_repository(tmp_path / "remote.git")
    add_remote(library, "origin", str(remote))
    reject_pushes(remote, "pushes are closed for maintenance")
    code, _, err = cli("--library", library.root, "sync")
    assert code == 7 and "closed for maintenance" in err

    server = create_server(
        library.root,
        watch=False,
        home=isolated_home / ".bourdon",
        readers=({}, []),
        reader_ctx=ReaderContext(home=isolated_home, machine="test-box"),
    )
    async with Client(server, mode="legacy") as client:
        live = await status_of(client)
    code, out, _ = cli("--library", library.root, "status", "--json", "--no-peers")
    assert code == 0
    printed = json.loads(out)
    for report in (live, printed):
        [state] = report["remotes"]["remotes"]
        assert state["name"] == "origin" and "closed for maintenance" in state["last_error"]
        assert state["last_sync"] is None and state["last_attempt"]
        assert (
            "closed for maintenance" in codes(report["problems"])["remote_sync_failed"]["message"]
        )

    code, out, _ = cli("--library", library.root, "doctor", "--json", "--no-peers")
    found = codes(json.loads(out)["problems"])["remote_sync_failed"]
    assert code == 7 and found["severity"] == "error"
    assert found["fix"] == f"bourdon --library {library.root} sync origin"

    # Once the remote takes pushes again, the next sync clears the problem everywhere.
    (remote / "hooks" / "pre-receive").unlink()
    assert cli("--library", library.root, "sync")[0] == 0
    code, out, _ = cli("--library", library.root, "doctor", "--json", "--no-peers")
    assert "remote_sync_failed" not in codes(json.loads(out)["problems"])
    library.close()
