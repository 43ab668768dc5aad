"""Purge: a text or an entity leaves every commit, tree and blob of the library and, after the
next sync, of the remote; every other row keeps its whole history.

Real libraries with 50 commits, a real bare repository as the remote, the real command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bourdon.cli.main import main
from bourdon.formats import reading
from bourdon.model import fold
from bourdon.replicate.remotes import add_remote
from bourdon.replicate.sync import sync
from bourdon.store.git.process import run_git
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance, trailers
from bourdon.testing import manifest
from bourdon.testing.remotes import bare_repository

CANARY = "CANARY"
AGENTS = ("alpha", "beta", "gamma")


def build(root: Path, remote: Path) -> Library:
    """50 commits over three agents: CANARY in a team row's summary in some versions, in a
    note, in a session trailer; synced to ``remote`` half-way and at the end."""
    library = Library.init(root, machine="desk")
    add_remote(library, "origin", str(remote))
    for i in range(50):
        agent = AGENTS[i % 3]
        summary = f"tracks the {CANARY} rollout" if 9 <= i < 30 else "tracks the rollout"
        rows: dict[str, Any] = {
            "known_entities": [
                {"name": f"thing-{i}", "type": "project", "visibility": "team"},
                {
                    "name": "Orion",
                    "aliases": ["orion-x"],
                    "type": "project",
                    "summary": summary,
                    "visibility": "team",
                },
            ],
            "known_workstreams": [
                {
                    "name": f"stream-{agent}",
                    "status": "active",
                    "visibility": "team",
                    "related_entities": ["Orion", f"thing-{i}"],
                },
            ],
        }
        if i == 20:
            rows["notes"] = [
                {
                    "date": "2026-11-20",
                    "text": f"remember {CANARY} before Friday",
                    "visibility": "team",
                    "related_entities": ["orion-x"],
                }
            ]
        session = f"sess-{CANARY}-7" if i == 33 else f"sess-{i}"
        who = Provenance(caller="tester", session=session)
        assert library.commit(agent, manifest(agent, **rows), provenance=who).version
        if i in (24, 49):
            sync(library, "origin")
    return library


def history(root: Path) -> list[tuple[str, dict[str, dict[str, Any]], str]]:
    """Every commit of the main line, oldest first: (id, agent -> manifest, message)."""
    listed = run_git(root, "rev-list", "--topo-order", "--reverse", "main").decode().split()
    out = []
    for commit in listed:
        files = run_git(root, "ls-tree", "--name-only", f"{commit}:agents").decode().split()
        found = {}
        for name in files:
            if name.endswith(".l5.yaml"):
                raw = run_git(root, "cat-file", "blob", f"{commit}:agents/{name}")
                found[name[: -len(".l5.yaml")]] = reading.read_manifest(raw).data
        message = run_git(root, "log", "-1", "--format=%B", commit).decode()
        out.append((commit, found, message))
    return out


def all_objects(repo: Path) -> bytes:
    return run_git(repo, "cat-file", "--batch-all-objects", "--batch")


def fsck(repo: Path) -> None:
    run_git(repo, "fsck", "--full", "--strict")  # raises GitError unless clean


def replaced(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace(CANARY, "[purged]")
    if isinstance(value, dict):
        return {k: replaced(v) for k, v in value.items()}
    if isinstance(value, list):
        return [replaced(v) for v in value]
    return value


def without_orion(data: dict[str, Any]) -> dict[str, Any]:
    """What the test expects once Orion (alias orion-x) is purged from a manifest."""
    gone = {"orion", "orion-x"}
    out = dict(data)
    out["known_entities"] = [r for r in data["known_entities"] if fold(r["name"]) not in gone]
    for section in ("known_workstreams", "notes"):
        if section not in data:
            continue
        rows = []
        for row in data[section]:
            left = [e for e in row.get("related_entities", []) if fold(e) not in gone]
            row = {k: v for k, v in row.items() if k != "related_entities"}
            rows.append({**row, "related_entities": left} if left else row)
        out[section] = rows
    return out


@pytest.fixture
def built(tmp_path: Path, isolated_home: Path) -> tuple[Path, Path]:
    remote = bare_repository(tmp_path / "remote.git")
    build(tmp_path / "lib", remote).close()
    return tmp_path / "lib", remote


def bourdon(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(args))
    return code, capsys.readouterr().out


def test_purge_text_leaves_no_copy_here_or_on_the_remote_and_keeps_everything_else(
    built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, remote = built
    assert CANARY.encode() in all_objects(root) and CANARY.encode() in all_objects(remote)
    before = history(root)
    assert len(before) >= 50

    code, out = bourdon(
        "purge", "--text", CANARY, "--yes", "--json", "--library", str(root), capsys=capsys
    )
    assert code == 0, out
    report = json.loads(out)
    assert report["fsck_clean"] is True and report["remotes"] == ["origin"]
    assert set(report["agents"]) == set(AGENTS) and report["commits"] > 0

    code, out = bourdon("sync", "--library", str(root), capsys=capsys)
    assert code == 0, out
    for repo in (root, remote):
        assert CANARY.encode() not in all_objects(repo)
        fsck(repo)

    after = history(root)
    assert len(after) == len(before)
    for (old_id, old, old_msg), (new_id, new, new_msg) in zip(before, after, strict=True):
        assert new == {agent: replaced(data) for agent, data in old.items()}
        if CANARY in json.dumps(old) or CANARY in old_msg:
            assert new_id != old_id
        # The digest a commit names is its manifest's, recomputed for the new content.
        tags = trailers(new_msg)
        if tags.get("Op") == "commit":
            with Library.open(root) as library:
                assert library.digest_at(new_id, tags["Agent"]) == tags["Digest"]
    sessions = [trailers(message).get("Session") for _, _, message in after]
    assert "sess-[purged]-7" in sessions
    with Library.open(root) as library:
        assert library.read("gamma").data["notes"][0]["text"] == "remember [purged] before Friday"
        assert not library.recovered
    # The remote's published branch was replaced and keeps receiving ordinary syncs.
    with Library.open(root) as library:
        library.commit(
            "alpha",
            manifest(
                "alpha",
                known_entities=[{"name": "after-purge", "type": "project", "visibility": "team"}],
            ),
        )
        assert sync(library, "origin").pushed


def test_purge_entity_removes_every_version_of_it_and_its_mentions(
    built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, remote = built
    before = history(root)
    code, out = bourdon(
        "purge", "--entity", "orion", "--yes", "--json", "--library", str(root), capsys=capsys
    )
    assert code == 0, out
    assert bourdon("sync", "--library", str(root), capsys=capsys)[0] == 0
    after = history(root)
    assert len(after) == len(before) + 1  # and, last, the tombstone's commit
    assert trailers(after[-1][2])["Op"] == "purge"
    after = after[:-1]
    for (_, old, _), (_, new, _) in zip(before, after, strict=True):
        assert new == {agent: without_orion(data) for agent, data in old.items()}
    for repo in (root, remote):
        contents = all_objects(repo)
        assert b"Orion" not in contents and b"orion-x" not in contents
        assert b"thing-49" in contents  # the rest is all there
        fsck(repo)
    from bourdon.store.forgetting import tombstone

    with Library.open(root) as library:
        assert tombstone("Orion") in library.tombstones()  # an export will not bring it back


def test_dry_run_names_what_it_would_rewrite_and_changes_nothing(
    built: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = built
    refs = run_git(root, "for-each-ref").decode()
    code, out = bourdon(
        "purge", "--text", CANARY, "--dry-run", "--json", "--library", str(root), capsys=capsys
    )
    assert code == 0
    report = json.loads(out)
    assert report["dry_run"] is True and report["commits"] > 20
    assert "agents/beta.l5.yaml" in report["files"]
    assert run_git(root, "for-each-ref").decode() == refs
    assert CANARY.encode() in all_objects(root)


def test_without_a_terminal_and_without_yes_purge_refuses(
    built: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = built
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    refs = run_git(root, "for-each-ref").decode()
    code = main(["purge", "--text", CANARY, "--library", str(root)])
    assert code == 2
    assert "--yes" in capsys.readouterr().err
    assert run_git(root, "for-each-ref").decode() == refs


def test_purge_scrubs_the_audit_log(
    built: tuple[Path, Path], isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = built
    audit = isolated_home / ".bourdon" / "audit.jsonl"
    audit.parent.mkdir(parents=True, exist_ok=True)
    audit.write_text(json.dumps({"tool": "find_entity", "args": CANARY}) + "\n" + "{}\n")
    assert (
        bourdon("purge", "--text", CANARY, "--yes", "--library", str(root), capsys=capsys)[0] == 0
    )
    text = audit.read_text()
    assert CANARY not in text and "[purged]" in text and text.endswith("{}\n")


def test_an_interrupted_purge_leaves_a_library_that_opens_and_running_it_again_finishes(
    built: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from bourdon.store import purge as purging
    from bourdon.store.git import rewrite

    root, _ = built

    def killed(*_: object) -> None:
        raise KeyboardInterrupt  # the refs have moved; files, caches and old objects not yet

    monkeypatch.setattr(rewrite, "refresh_worktree", killed)
    with Library.open(root) as library, pytest.raises(KeyboardInterrupt):
        purging.purge(library, text=CANARY)
    monkeypatch.undo()
    with Library.open(root) as library:
        head = library.head()
        assert head is not None
        assert CANARY not in json.dumps(library.read("gamma").data)
        on_disk = (root / "agents" / "gamma.l5.yaml").read_bytes()
        assert on_disk == library.read_bytes("gamma")
        report = purging.purge(library, text=CANARY)
        assert report.commits == 0 and report.fsck_clean
        assert library.head() == head
    assert CANARY.encode() not in all_objects(root)
    kept = [
        p for p in (root / ".bourdon").rglob("*") if p.is_file() and not p.name.endswith(".lock")
    ]
    assert not [p for p in kept if CANARY.encode() in p.read_bytes()]
