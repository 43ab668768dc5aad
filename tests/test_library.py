"""The library: the write protocol, history, rollback, explain and staging, on real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bourdon.digest import digest
from bourdon.errors import ConflictError, InputError, LibraryError, NotFoundError, SchemaError
from bourdon.formats import yamlio
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance

NEW = {"agent": {"type": "code-assistant"}}


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def names(library: Library, agent: str) -> list[str]:
    return [row["name"] for row in library.read(agent).rows("known_entities")]


def test_init_creates_a_git_repository_with_the_layout(library: Library) -> None:
    root = library.root
    assert (root / "agents").is_dir() and (root / "staging").is_dir()
    assert ".bourdon/" in (root / ".gitignore").read_text(encoding="utf-8")
    assert git(root, "status", "--porcelain") == ""
    assert library.agent_ids() == []


def test_init_refuses_a_folder_that_holds_other_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(LibraryError, match="not empty"):
        Library.init(tmp_path)
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_open_refuses_a_folder_that_is_not_a_library(tmp_path: Path) -> None:
    with pytest.raises(LibraryError, match="bourdon init"):
        Library.open(tmp_path)


def test_commit_creates_an_agent_and_records_provenance(library: Library) -> None:
    who = Provenance(caller="alice", session="s-1", transcript="file:///t.jsonl")
    result = library.commit(
        "claude-code", {**NEW, "known_entities": [{"name": "bourdon"}]}, provenance=who
    )
    assert result.created and not result.no_op
    assert result.stats.total_added == 1
    message = git(library.root, "log", "-1", "--format=%B")
    for trailer in (
        "Bourdon-Op: merge",
        "Bourdon-Agent: claude-code",
        "Bourdon-Caller: alice",
        "Bourdon-Session: s-1",
        "Bourdon-Transcript: file:///t.jsonl",
        f"Bourdon-Digest: {result.digest}",
    ):
        assert trailer in message
    row = library.read("claude-code").rows("known_entities")[0]
    assert row["source"] == {"kind": "commit", "name": "alice", "machine": library.machine}
    assert (library.root / result.path).read_bytes() == library.read_bytes("claude-code")


def test_a_new_agent_needs_a_type(library: Library) -> None:
    with pytest.raises(InputError, match=r"agent\.type"):
        library.commit("codex", {"known_entities": [{"name": "x"}]})
    assert library.agent_ids() == []


def test_a_change_that_names_another_agent_is_refused(library: Library) -> None:
    with pytest.raises(InputError, match="names agent 'codex'"):
        library.commit("cursor", {"agent": {"id": "codex", "type": "other"}})


def test_merging_the_same_rows_again_is_a_no_op_without_a_commit(library: Library) -> None:
    change = {**NEW, "known_entities": [{"name": "bourdon", "tags": ["git"]}]}
    first = library.commit("claude-code", change)
    head = library.head()
    again = library.commit("claude-code", {"known_entities": [{"name": "BOURDON", "tags": "git"}]})
    assert again.no_op and again.digest == first.digest
    assert library.head() == head


def test_replace_writes_only_what_is_given_and_keeps_the_identity(library: Library) -> None:
    library.commit(
        "codex",
        {
            **NEW,
            "known_entities": [{"name": "a"}, {"name": "b"}],
            "notes": [{"date": "2026-11-01", "text": "n"}],
        },
    )
    result = library.commit("codex", {"known_entities": [{"name": "c"}]}, mode="replace")
    assert names(library, "codex") == ["c"]
    assert library.read("codex").rows("notes") == []
    assert library.read("codex").agent_type == "code-assistant"
    assert result.stats.removed["known_entities"] == 2


def test_an_invalid_result_is_refused_and_nothing_is_written(library: Library) -> None:
    library.commit("codex", {**NEW, "known_entities": [{"name": "a"}]})
    head = library.head()
    with pytest.raises(SchemaError, match="/known_entities/1/summary"):
        library.commit("codex", {"known_entities": [{"name": "b", "summary": "x" * 2001}]})
    assert library.head() == head
    library.close()
    assert git(library.root, "status", "--porcelain") == ""


def test_a_stale_expected_digest_is_a_conflict_carrying_the_current_digest(
    library: Library,
) -> None:
    first = library.commit("codex", {**NEW, "known_entities": [{"name": "a"}]})
    second = library.commit("codex", {"known_entities": [{"name": "b"}]})
    with pytest.raises(ConflictError) as caught:
        library.commit("codex", {"known_entities": [{"name": "c"}]}, expected_digest=first.digest)
    assert caught.value.current_digest == second.digest
    ok = library.commit(
        "codex", {"known_entities": [{"name": "c"}]}, expected_digest=second.digest[7:15]
    )
    assert not ok.no_op and names(library, "codex") == ["a", "b", "c"]


def test_history_lists_every_version_newest_first(library: Library) -> None:
    digests = [
        library.commit("codex", {**NEW, "known_entities": [{"name": f"e{i}"}]}).digest
        for i in range(5)
    ]
    history = library.history("codex")
    assert [v.digest for v in history] == digests[::-1]
    assert [v.op for v in history] == ["merge"] * 5
    assert history[0].digest8 == digests[-1][7:15]
    assert len(library.history("codex", limit=2)) == 2


def test_history_of_an_unknown_agent_is_not_found(library: Library) -> None:
    with pytest.raises(NotFoundError, match="no agent 'ghost'"):
        library.history("ghost")


def test_show_at_a_version_returns_the_exact_bytes_written_then(library: Library) -> None:
    library.commit("codex", {**NEW, "known_entities": [{"name": "a"}]})
    then = library.read_bytes("codex")
    version = library.history("codex")[0].version_id
    library.commit("codex", {"known_entities": [{"name": "b"}]})
    assert library.read_bytes("codex", version) == then
    assert library.read_bytes("codex", version[:10]) == then
    assert library.read_bytes("codex") != then


def test_rollback_restores_the_bytes_and_is_itself_undoable(library: Library) -> None:
    library.commit("codex", {**NEW, "known_entities": [{"name": "a"}]})
    v1 = library.history("codex")[0]
    bytes_v1 = library.read_bytes("codex")
    library.commit("codex", {"known_entities": [{"name": "b"}]})
    bytes_v2 = library.read_bytes("codex")
    v2 = library.history("codex")[0]

    undo = library.rollback("codex", v1.version_id, expected_digest=v2.digest)
    assert library.read_bytes("codex") == bytes_v1
    assert undo.stats.total_removed == 1 and undo.digest == v1.digest
    assert library.history("codex")[0].op == "rollback"
    assert library.history("codex")[0].restores == v1.version_id

    library.rollback("codex", v2.version_id)
    assert library.read_bytes("codex") == bytes_v2
    assert len(library.history("codex")) == 4


def test_rollback_with_a_stale_expected_digest_writes_nothing(library: Library) -> None:
    first = library.commit("codex", {**NEW, "known_entities": [{"name": "a"}]})
    library.commit("codex", {"known_entities": [{"name": "b"}]})
    head = library.head()
    with pytest.raises(ConflictError):
        library.rollback("codex", first.version or "", expected_digest=first.digest)
    assert library.head() == head


def test_rollback_to_an_unknown_version_is_not_found(library: Library) -> None:
    library.commit("codex", {**NEW, "known_entities": [{"name": "a"}]})
    with pytest.raises(NotFoundError):
        library.rollback("codex", "deadbeefdeadbeef")
    with pytest.raises(InputError, match="not a version id"):
        library.rollback("codex", "HEAD~1")


def test_explain_finds_the_write_behind_a_digest8(library: Library) -> None:
    library.commit("codex", {**NEW, "known_entities": [{"name": "a"}]})
    who = Provenance(caller="bob", session="run-7", transcript="t-7")
    target = library.commit(
        "codex",
        {"known_entities": [{"name": "b"}, {"name": "a", "summary": "now described"}]},
        provenance=who,
    )
    library.commit("codex", {"known_entities": [{"name": "c"}]})
    found = library.explain("codex", target.digest[7:15])
    assert found.version.version_id == target.version
    assert (found.version.caller, found.version.session, found.version.transcript) == (
        "bob",
        "run-7",
        "t-7",
    )
    assert found.changes.added["known_entities"] == ["b"]
    assert found.changes.changed["known_entities"] == ["a"]
    with pytest.raises(NotFoundError):
        library.explain("codex", "0000000000")
    with pytest.raises(InputError):
        library.explain("codex", "xyz")


def test_staged_writes_wait_outside_the_live_manifests_until_promoted(library: Library) -> None:
    library.commit(
        "desk", {"agent": {"type": "other"}, "notes": [{"date": "2026-11-01", "text": "live"}]}
    )
    who = Provenance(caller="guest")
    staged = library.stage(
        "guest", "desk", {"notes": [{"date": "2026-11-02", "text": "from guest"}]}, who
    )
    assert staged.staged
    assert [n["text"] for n in library.read("desk").rows("notes")] == ["live"]
    waiting = library.staged()
    assert [(s.caller, s.agent_id, s.rows) for s in waiting] == [("guest", "desk", 1)]

    promoted = library.promote("guest", "desk")
    assert [n["text"] for n in library.read("desk").rows("notes")] == ["live", "from guest"]
    assert library.staged() == []
    assert promoted.op == "promote"
    assert library.history("desk")[0].stager == "guest"
    assert not (library.root / "staging" / "guest" / "desk.l5.yaml").exists()


def test_a_staged_write_for_a_new_agent_can_be_rejected_and_stays_in_history(
    library: Library,
) -> None:
    library.stage(
        "guest",
        "newbie",
        {"agent": {"type": "other"}, "known_entities": [{"name": "x"}]},
        Provenance(caller="guest"),
    )
    version = library.reject("guest", "newbie")
    assert library.staged() == [] and "newbie" not in library.agent_ids()
    log = git(library.root, "log", "--format=%B", "-n", "2")
    assert "Bourdon-Op: reject" in log and "Bourdon-Op: stage" in log
    assert version == library.head()
    with pytest.raises(NotFoundError):
        library.promote("guest", "newbie")


def test_manifests_on_disk_are_stable_yaml(library: Library) -> None:
    library.commit("codex", {**NEW, "known_entities": [{"name": "a", "tags": ["x", "y"]}]})
    raw = library.read_bytes("codex")
    assert yamlio.dump(yamlio.load(raw)) == raw
    assert digest(yamlio.load(raw)) == library.current_digest("codex")


def test_git_status_in_the_library_reads_clean_once_the_writer_is_done(library: Library) -> None:
    library.commit("codex", {**NEW, "known_entities": [{"name": "a"}]})
    library.stage("guest", "codex", {"known_entities": [{"name": "b"}]}, Provenance(caller="guest"))
    library.close()
    assert git(library.root, "status", "--porcelain") == ""
    ok, said = library.fsck()
    assert ok, said


def test_git_hooks_planted_in_the_library_never_run(library: Library) -> None:
    sentinel = library.root.parent / "hook-ran"
    hook = library.root / ".git" / "hooks" / "post-commit"
    hook.write_text(f"#!/bin/sh\ntouch {sentinel}\n", encoding="utf-8")
    hook.chmod(0o755)
    git(library.root, "config", "core.hooksPath", str(hook.parent))
    library.commit("codex", {**NEW, "known_entities": [{"name": "a"}]})
    library.rollback("codex", library.history("codex")[0].version_id)
    assert not sentinel.exists()
