"""Replication through a git remote: real libraries and a real bare repository in tmp folders."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bourdon.access.visibility import filter_manifest
from bourdon.cli.main import main
from bourdon.digest import digest
from bourdon.errors import GitError, InputError, NotFoundError
from bourdon.formats import schema
from bourdon.merge.threeway import merge3
from bourdon.model import Visibility
from bourdon.replicate.remotes import add_remote, remove_remote
from bourdon.replicate.report import SyncReport
from bourdon.replicate.state import remote_states
from bourdon.replicate.sync import sync
from bourdon.store.git.process import run_git
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest
from bourdon.testing.remotes import bare_repository, every_object, git_daemon, reject_pushes
from bourdon.testing.serving import free_port

ORIGIN = "origin"


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    return bare_repository(tmp_path / "remote.git")


@pytest.fixture
def libraries(tmp_path: Path, remote: Path) -> Iterator[Callable[[str], Library]]:
    """Libraries named after their machine, each with the bare repository as ``origin``."""
    opened: list[Library] = []

    def make(machine: str) -> Library:
        library = Library.init(tmp_path / machine, machine=machine)
        add_remote(library, ORIGIN, str(remote))
        opened.append(library)
        return library

    yield make
    for library in opened:
        library.close()


def run_sync(library: Library, **options: Any) -> SyncReport:
    return sync(library, ORIGIN, **options)


def commit(library: Library, agent: str, **sections: Any) -> str:
    change = manifest(agent, **sections)
    who = Provenance(caller="tester")
    result = library.commit(agent, change, provenance=who)
    assert result.version
    return result.digest


def entity(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "visibility": "team", **fields}


def names(library: Library, agent: str) -> set[str]:
    return {row["name"] for row in library.read(agent).data.get("known_entities", [])}


def row(library: Library, agent: str, name: str) -> dict[str, Any]:
    rows = library.read(agent).data["known_entities"]
    return next(r for r in rows if r["name"] == name)


def converge(*libraries: Library, rounds: int = 2) -> None:
    for _ in range(rounds):
        for library in libraries:
            run_sync(library)


def test_independent_changes_to_different_agents_integrate_without_conflict(
    libraries: Callable[[str], Library],
) -> None:
    a, b = libraries("laptop"), libraries("desktop")
    commit(a, "claude-code", known_entities=[entity("Ledgerline")])
    commit(b, "codex", known_entities=[entity("Paris")])

    first = run_sync(a)
    assert [s.agent_id for s in first.sent] == ["claude-code"] and not first.received
    second = run_sync(b)
    assert [r.agent_id for r in second.received] == ["claude-code"]
    assert [s.agent_id for s in second.sent] == ["codex"]
    third = run_sync(a)
    assert [r.agent_id for r in third.received] == ["codex"] and not third.sent

    for library in (a, b):
        assert library.agent_ids() == ["claude-code", "codex"]
    for agent in ("claude-code", "codex"):
        assert a.current_digest(agent) == b.current_digest(agent)
    # Nothing is left to exchange: another round on each side is a no-op.
    assert run_sync(a).up_to_date and run_sync(b).up_to_date
    assert a.fsck()[0] and b.fsck()[0]


def test_concurrent_changes_to_one_agent_merge_row_by_row_and_lose_nothing(
    libraries: Callable[[str], Library],
) -> None:
    a, b = libraries("laptop"), libraries("desktop")
    commit(a, "claude-code", known_entities=[entity("Shared", summary="base", tags=["x"])])
    converge(a, b)

    commit(
        a,
        "claude-code",
        known_entities=[
            entity("Only-A"),
            entity("Shared", summary="from the laptop", tags=["a"], last_touched="2026-11-02"),
        ],
    )
    commit(
        b,
        "claude-code",
        known_entities=[
            entity("Only-B"),
            entity("Shared", summary="from the desktop", tags=["b"], last_touched="2026-11-05"),
        ],
        notes=[{"date": "2026-11-05", "text": "desktop note", "visibility": "team"}],
    )
    converge(a, b)

    for library in (a, b):
        assert names(library, "claude-code") == {"Shared", "Only-A", "Only-B"}
        shared = row(library, "claude-code", "Shared")
        assert shared["summary"] == "from the desktop"  # the newer last_touched wins
        assert sorted(shared["tags"]) == ["a", "b", "x"]  # list fields are unioned
        assert [n["text"] for n in library.read("claude-code").data["notes"]] == ["desktop note"]
    assert a.current_digest("claude-code") == b.current_digest("claude-code")


def test_history_on_both_sides_shows_both_originals_and_the_integration(
    libraries: Callable[[str], Library],
) -> None:
    a, b = libraries("laptop"), libraries("desktop")
    original_a = commit(a, "claude-code", known_entities=[entity("From-A")])
    original_b = commit(b, "claude-code", known_entities=[entity("From-B")])
    run_sync(a)
    run_sync(b)  # the desktop integrates the laptop's change: a real three-way merge
    run_sync(a)

    for library, own in ((a, original_a), (b, original_b)):
        versions = library.history("claude-code")
        assert versions[0].op == "sync"
        assert own in [v.digest for v in versions]  # its own original, on its own line
        # Every state either side had is in this library's git history, and the merge of the
        # desktop names both parents' digests in its trailers.
        everything = run_git(library.root, "rev-list", "--all").decode().split()
        seen = {library.digest_at(c, "claude-code") for c in everything}
        assert {original_a, original_b} <= seen
    merge = b.history("claude-code")[0]
    assert (merge.ours_digest, merge.theirs_digest) == (original_b, original_a)
    assert merge.remote == ORIGIN and merge.theirs
    assert b.digest_at(merge.theirs, "claude-code") == original_a
    shown = merge.to_dict()
    assert shown["merged_version"] == merge.theirs and shown["ours_digest"] == original_b


def test_private_and_staged_rows_and_local_files_never_reach_the_remote(
    libraries: Callable[[str], Library], remote: Path
) -> None:
    a = libraries("laptop")
    commit(
        a,
        "claude-code",
        visibility_policy={"private_tags": ["personal"]},
        known_entities=[
            entity("Shared-Project"),
            {"name": "Canary-Private-Row", "visibility": "private"},
            {"name": "Canary-Tagged-Row", "tags": ["personal"], "visibility": "team"},
        ],
        notes=[{"date": "2026-11-01", "text": "Canary-Private-Note", "visibility": "private"}],
    )
    a.stage(
        "visitor",
        "claude-code",
        {"known_entities": [entity("Canary-Staged-Row")]},
        Provenance(caller="visitor"),
    )
    (a.root / ".bourdon" / "canary.txt").write_text("Canary-Local-File", encoding="utf-8")

    report = run_sync(a)
    assert [(s.agent_id, s.rows, s.withheld) for s in report.sent] == [("claude-code", 1, 3)]

    contents = b"\n".join(data for _, data in every_object(remote))
    assert b"Shared-Project" in contents
    for canary in (b"Canary-", b"personal", b"visitor", b"staging/"):
        assert canary not in contents
    # A plain 'git push origin' by hand in the library sends the published branch only.
    run_git(a.root, "push", "-q", ORIGIN)
    assert run_git(remote, "for-each-ref", "--format=%(refname)").decode().split() == [
        "refs/heads/bourdon/published"
    ]


def test_a_public_remote_receives_public_rows_only(tmp_path: Path) -> None:
    remote = bare_repository(tmp_path / "public.git")
    with Library.init(tmp_path / "laptop") as a:
        add_remote(a, "public", str(remote), visibility="public")
        commit(
            a,
            "claude-code",
            known_entities=[
                {"name": "Open-Row", "visibility": "public"},
                entity("Canary-Team-Row"),
            ],
        )
        report = sync(a, "public", machine="laptop")
        assert report.visibility == "public" and report.sent[0].withheld == 1
    contents = b"\n".join(data for _, data in every_object(remote))
    assert b"Open-Row" in contents and b"Canary-Team-Row" not in contents


def test_a_row_removed_on_one_machine_is_removed_everywhere_and_stays_removed(
    libraries: Callable[[str], Library],
) -> None:
    a, b = libraries("laptop"), libraries("desktop")
    reader = Provenance(caller="reader:claude-code")
    fresh = manifest("claude-code", known_entities=[entity("Keep"), entity("Drop")])
    a.regenerate("claude-code", fresh, reader="claude-code", provenance=reader)
    converge(a, b)
    assert names(b, "claude-code") == {"Keep", "Drop"}

    fresh = manifest("claude-code", known_entities=[entity("Keep")])
    a.regenerate("claude-code", fresh, reader="claude-code", provenance=reader)
    converge(a, b, rounds=3)
    assert names(a, "claude-code") == names(b, "claude-code") == {"Keep"}


def test_regenerating_a_reader_on_one_machine_keeps_the_other_machines_rows(
    libraries: Callable[[str], Library],
) -> None:
    a, b = libraries("laptop"), libraries("desktop")
    a.regenerate(
        "claude-code",
        manifest("claude-code", known_entities=[entity("Laptop-Project")]),
        reader="claude-code",
        provenance=Provenance(caller="reader:claude-code"),
    )
    b.regenerate(
        "claude-code",
        manifest("claude-code", known_entities=[entity("Desktop-Project")]),
        reader="claude-code",
        provenance=Provenance(caller="reader:claude-code"),
    )
    converge(a, b)
    assert row(a, "claude-code", "Desktop-Project")["source"]["machine"] == "desktop"

    # The laptop's reader runs again and sees only its own store.
    a.regenerate(
        "claude-code",
        manifest("claude-code", known_entities=[entity("Laptop-Project"), entity("New")]),
        reader="claude-code",
        provenance=Provenance(caller="reader:claude-code"),
    )
    converge(a, b)
    for library in (a, b):
        assert names(library, "claude-code") == {"Laptop-Project", "New", "Desktop-Project"}


def test_a_push_refused_because_the_remote_moved_on_is_retried_after_integrating(
    libraries: Callable[[str], Library],
) -> None:
    a, b = libraries("laptop"), libraries("desktop")
    commit(a, "claude-code", known_entities=[entity("From-Laptop")])
    commit(b, "codex", known_entities=[entity("From-Desktop")])
    raced = []

    def desktop_pushes_first(step: str) -> None:
        if step.startswith("pushing") and not raced:
            raced.append(step)
            run_sync(b)  # lands between the laptop's fetch and its push

    report = run_sync(a, progress=desktop_pushes_first)
    assert raced and report.attempts == 2
    assert [r.agent_id for r in report.received] == ["codex"]
    run_sync(b)
    assert a.agent_ids() == b.agent_ids() == ["claude-code", "codex"]


def test_retries_are_bounded_and_the_failure_is_recorded(
    libraries: Callable[[str], Library],
) -> None:
    a, b = libraries("laptop"), libraries("desktop")
    commit(a, "claude-code", known_entities=[entity("From-Laptop")])
    count = iter(range(100))

    def desktop_always_first(step: str) -> None:
        if step.startswith("pushing"):
            commit(b, "codex", known_entities=[entity(f"Desktop-{next(count)}")])
            run_sync(b)

    with pytest.raises(GitError, match="refused 2 times"):
        run_sync(a, progress=desktop_always_first, attempts=2)
    state = remote_states(a.root, a.repo)[0]
    assert state.last_error and "refused 2 times" in state.last_error
    run_sync(a)  # the next sync completes and clears the error
    state = remote_states(a.root, a.repo)[0]
    assert state.last_error is None and state.last_sync and state.ahead == 0


def test_dry_run_shows_what_would_move_and_changes_nothing(
    libraries: Callable[[str], Library], remote: Path
) -> None:
    a, b = libraries("laptop"), libraries("desktop")
    commit(a, "claude-code", known_entities=[entity("From-Laptop")])
    run_sync(a)
    commit(b, "codex", known_entities=[entity("From-Desktop")])
    head, published = b.head(), run_git(remote, "rev-parse", "bourdon/published")

    report = run_sync(b, dry_run=True)
    assert report.dry_run
    assert [(r.agent_id, r.added) for r in report.received] == [("claude-code", 1)]
    assert [s.agent_id for s in report.sent] == ["codex"]
    assert b.head() == head and b.agent_ids() == ["codex"]
    assert run_git(remote, "rev-parse", "bourdon/published") == published
    assert remote_states(b.root, b.repo)[0].last_attempt is None


def test_an_invalid_manifest_on_the_remote_is_skipped_and_the_rest_integrates(
    libraries: Callable[[str], Library], remote: Path, tmp_path: Path
) -> None:
    a, b = libraries("laptop"), libraries("desktop")
    commit(a, "claude-code", known_entities=[entity("Fine")])
    run_sync(a)
    hand = tmp_path / "hand"
    run_git(tmp_path, "clone", "-q", "-b", "bourdon/published", str(remote), str(hand))
    (hand / "agents" / "broken.l5.yaml").write_text("agent: [not, a, manifest\n", "utf-8")
    (hand / "agents" / "impostor.l5.yaml").write_bytes(
        (a.root / "agents" / "claude-code.l5.yaml").read_bytes()
    )
    run_git(hand, "add", "-A")
    run_git(hand, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "hand edit")
    run_git(hand, "push", "-q", "origin", "bourdon/published")

    report = run_sync(b)
    assert [r.agent_id for r in report.received] == ["claude-code"]
    assert sorted(s["file"] for s in report.skipped) == [
        "agents/broken.l5.yaml",
        "agents/impostor.l5.yaml",
    ]
    assert b.agent_ids() == ["claude-code"]


def test_remote_names_and_urls_are_checked(libraries: Callable[[str], Library]) -> None:
    a = libraries("laptop")
    with pytest.raises(InputError, match="exists already"):
        add_remote(a, ORIGIN, "/elsewhere")
    with pytest.raises(InputError, match="not valid"):
        add_remote(a, "../up", "/elsewhere")
    with pytest.raises(InputError, match="not a git remote"):
        add_remote(a, "sneaky", "--upload-pack=touch /tmp/x")
    with pytest.raises(InputError, match="private rows never leave"):
        add_remote(a, "everything", "/elsewhere", visibility="private")
    with pytest.raises(NotFoundError):
        run_sync_named(a, "nowhere")
    remove_remote(a, ORIGIN)
    assert remote_states(a.root, a.repo) == []


def run_sync_named(library: Library, name: str) -> SyncReport:
    return sync(library, name)


def test_a_remote_that_rejects_pushes_is_reported(
    libraries: Callable[[str], Library], remote: Path
) -> None:
    a = libraries("laptop")
    commit(a, "claude-code", known_entities=[entity("Waiting")])
    reject_pushes(remote, "pushes are closed for maintenance")
    with pytest.raises(GitError, match="closed for maintenance"):
        run_sync(a)
    state = remote_states(a.root, a.repo)[0]
    assert state.last_error and "closed for maintenance" in state.last_error
    assert state.ahead is None  # never synced: how far ahead is not known


# -- the CLI --------------------------------------------------------------------------------


def cli(library: Path, *args: str, machine: str = "laptop") -> tuple[int, str, str]:
    env = {**os.environ, "BOURDON_MACHINE": machine}
    done = subprocess.run(
        [sys.executable, "-m", "bourdon", "--library", str(library), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def test_cli_remote_and_sync(
    tmp_path: Path, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = tmp_path / "laptop"
    assert main(["--library", str(lib), "init"]) == 0
    change = tmp_path / "change.yaml"
    change.write_text(
        "agent: {id: claude-code, type: code-assistant}\n"
        "known_entities:\n  - {name: Ledgerline, visibility: team}\n",
        encoding="utf-8",
    )
    assert main(["--library", str(lib), "commit", "claude-code", "-f", str(change)]) == 0
    assert main(["--library", str(lib), "sync"]) == 2  # no remotes yet
    assert "bourdon remote add" in capsys.readouterr().err
    assert main(["--library", str(lib), "remote", "add", ORIGIN, str(remote)]) == 0
    capsys.readouterr()

    code, out, _ = cli(lib, "sync", "--dry-run", "--json")
    assert code == 0
    (dry,) = json.loads(out)["syncs"]
    assert dry["dry_run"] and [s["agent_id"] for s in dry["sent"]] == ["claude-code"]

    code, out, err = cli(lib, "sync")
    assert code == 0, err
    assert "origin: send claude-code: 1 row\n" in out
    code, out, _ = cli(lib, "sync")
    assert (code, out.strip()) == (0, "origin: up to date")

    code, out, _ = cli(lib, "remote", "list", "--json")
    (state,) = json.loads(out)["remotes"]
    assert state["name"] == ORIGIN and state["visibility"] == "team" and state["ahead"] == 0
    assert state["last_sync"] and state["last_error"] is None
    code, _, err = cli(lib, "sync", "nowhere")
    assert code == 4 and "no remote 'nowhere'" in err


def test_cli_watch_records_each_failure_for_status(tmp_path: Path, remote: Path) -> None:
    lib = tmp_path / "laptop"
    with Library.init(lib) as library:
        add_remote(library, ORIGIN, str(remote))
        commit(library, "claude-code", known_entities=[entity("Waiting")])
    reject_pushes(remote)
    code, _, err = cli(lib, "sync", "--watch", "--interval", "1", "--rounds", "2")
    assert code == 7
    assert err.count("sync with origin failed") == 2 and "recorded for status" in err
    code, out, _ = cli(lib, "remote", "list", "--json")
    assert "closed for maintenance" in json.loads(out)["remotes"][0]["last_error"]


# -- crashes --------------------------------------------------------------------------------


def test_kill_9_during_sync_leaves_both_libraries_consistent(tmp_path: Path, remote: Path) -> None:
    rng = random.Random(7)
    paths = {m: tmp_path / m for m in ("laptop", "desktop")}
    for path in paths.values():
        with Library.init(path) as library:
            add_remote(library, ORIGIN, str(remote))
    acknowledged: dict[str, set[str]] = {m: set() for m in paths}
    change = tmp_path / "change.yaml"
    for round_ in range(12):
        for machine, path in paths.items():
            name = f"{machine}-{round_}"
            change.write_text(
                f"agent: {{id: {machine}-agent, type: code-assistant}}\n"
                f"known_entities:\n  - {{name: {name}, visibility: team}}\n",
                encoding="utf-8",
            )
            code, _, err = cli(path, "commit", f"{machine}-agent", "-f", str(change))
            assert code == 0, err
            acknowledged[machine].add(name)
            proc = subprocess.Popen(
                [sys.executable, "-m", "bourdon", "--library", str(path), "sync"],
                env={**os.environ, "BOURDON_MACHINE": machine},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(rng.uniform(0.05, 0.6))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    for path in (*paths.values(), remote):
        clean, said = Library.open(path).fsck() if path != remote else fsck(remote)
        assert clean, said
    for _ in range(2):
        for machine, path in paths.items():
            code, _, err = cli(path, "sync", machine=machine)
            assert code == 0, err
    for path in paths.values():
        with Library.open(path) as library:
            assert library.fsck()[0]
            for machine, rows in acknowledged.items():
                assert names(library, f"{machine}-agent") == rows
            assert not list((path / "agents").glob(".*.tmp"))


def fsck(repo: Path) -> tuple[bool, str]:
    done = subprocess.run(
        ["git", "fsck", "--full", "--strict", "--no-progress"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode == 0, done.stdout + done.stderr


def test_digest_of_what_the_remote_holds_matches_what_was_published(
    libraries: Callable[[str], Library], remote: Path
) -> None:
    a = libraries("laptop")
    commit(
        a, "claude-code", known_entities=[entity("One"), {"name": "Two", "visibility": "private"}]
    )
    run_sync(a)
    published = run_git(remote, "show", "bourdon/published:agents/claude-code.l5.yaml")
    from bourdon.formats import schema

    expected = filter_manifest(a.read("claude-code").data, Visibility.TEAM)
    assert digest(schema.load_manifest(published).data) == digest(expected)


# -- the three-way merge on its own ----------------------------------------------------------

NAMES = st.sampled_from(["alpha", "beta", "gamma", "delta", "epsilon"])
ROWS = st.lists(
    st.fixed_dictionaries(
        {
            "name": NAMES,
            "summary": st.sampled_from(["one", "two", "three"]),
            "tags": st.lists(st.sampled_from(["x", "y", "z"]), max_size=2, unique=True),
            "last_touched": st.sampled_from(["2026-01-01", "2026-02-01", "2026-03-01"]),
        }
    ),
    max_size=5,
    unique_by=lambda r: r["name"],
)


def rows_manifest(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return manifest("claude-code", known_entities=rows)


@settings(max_examples=300, deadline=None)
@given(base=ROWS, ours_extra=ROWS, theirs_extra=ROWS)
def test_merge3_loses_no_row_when_nobody_removed_one(
    base: list[dict[str, Any]], ours_extra: list[dict[str, Any]], theirs_extra: list[dict[str, Any]]
) -> None:
    def grown(extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
        given = {r["name"]: r for r in extra}
        return [given.pop(r["name"], r) for r in base] + list(given.values())

    ours, theirs = rows_manifest(grown(ours_extra)), rows_manifest(grown(theirs_extra))
    merged = merge3(rows_manifest(base), ours, theirs)
    every = {r["name"] for r in [*base, *ours_extra, *theirs_extra]}
    assert {r["name"] for r in merged["known_entities"]} == every
    schema.validate(merged)
    # Integrating the result again changes nothing: both sides reach a fixed point.
    assert merge3(rows_manifest(base), merged, theirs) == merged


@settings(max_examples=300, deadline=None)
@given(base=ROWS, changed=ROWS)
def test_merge3_takes_a_one_sided_change_exactly(
    base: list[dict[str, Any]], changed: list[dict[str, Any]]
) -> None:
    before, after = rows_manifest(base), rows_manifest(changed)
    assert merge3(before, before, after)["known_entities"] == changed
    assert merge3(before, after, before)["known_entities"] == changed


def test_sync_over_the_git_protocol_on_loopback(tmp_path: Path) -> None:
    served = tmp_path / "served"
    bare_repository(served / "team.git")
    with git_daemon(served, free_port()) as url:
        a, b = Library.init(tmp_path / "laptop"), Library.init(tmp_path / "desktop")
        for library in (a, b):
            add_remote(library, ORIGIN, url + "team.git")
        commit(a, "claude-code", known_entities=[entity("Over-The-Wire")])
        commit(b, "codex", known_entities=[entity("Back-Again")])
        converge(a, b)
        assert a.agent_ids() == b.agent_ids() == ["claude-code", "codex"]
        assert a.current_digest("codex") == b.current_digest("codex")
        a.close()
        b.close()


def test_two_syncs_of_one_library_at_once_both_finish(tmp_path: Path, remote: Path) -> None:
    lib = tmp_path / "laptop"
    with Library.init(lib, machine="laptop") as library:
        add_remote(library, ORIGIN, str(remote))
        for n in range(5):
            commit(library, f"agent-{n}", known_entities=[entity(f"Row-{n}")])
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bourdon", "--library", str(lib), "sync", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    outcomes = [proc.communicate(timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outcomes
    sent = [len(json.loads(out)["syncs"][0]["sent"]) for out, _ in outcomes]
    assert sorted(sent) == [0, 5]  # the second waited, then found nothing left to send
    assert fsck(remote)[0]


def test_remote_list_never_shows_a_password_in_a_url(libraries: Callable[[str], Library]) -> None:
    a = libraries("laptop")
    add_remote(a, "forge", "https://ada:s3cret@git.example.com/ada/library.git")
    urls = {s.name: s.url for s in remote_states(a.root, a.repo)}
    assert urls["forge"] == "https://ada:***@git.example.com/ada/library.git"


def test_three_machines_editing_one_agent_converge_on_every_row(
    libraries: Callable[[str], Library],
) -> None:
    machines = [libraries(name) for name in ("laptop", "desktop", "server")]
    for n, library in enumerate(machines):
        commit(library, "claude-code", known_entities=[entity(f"From-{library.machine}")])
        commit(library, "codex", notes=[{"date": f"2026-11-0{n + 1}", "text": f"note {n}"}])
    converge(*machines, rounds=2)
    wanted = {"From-laptop", "From-desktop", "From-server"}
    for library in machines:
        assert names(library, "claude-code") == wanted
        assert len(library.read("codex").data["notes"]) == 3
    assert len({library.current_digest("claude-code") for library in machines}) == 1
    assert len({library.current_digest("codex") for library in machines}) == 1
    assert all(run_sync(library).up_to_date for library in machines)


def test_bourdon_history_names_what_a_sync_merged(
    libraries: Callable[[str], Library], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = libraries("laptop"), libraries("desktop")
    original_a = commit(a, "claude-code", known_entities=[entity("From-A")])
    original_b = commit(b, "claude-code", known_entities=[entity("From-B")])
    run_sync(a)
    run_sync(b)
    merge = b.history("claude-code")[0]
    assert main(["--library", str(b.root), "history", "claude-code"]) == 0
    line = next(
        x for x in capsys.readouterr().out.splitlines() if x.startswith(merge.version_id[:12])
    )
    assert f"merged origin version {merge.theirs[:12]}" in line
    assert f"{original_b[7:15]} + {original_a[7:15]}" in line
