"""What leaves the machine, said where the user decides it (issue 13, item 8).

A Claude Code store is exported into a real library; then ``bourdon remote add`` and
``bourdon member add`` must say what that audience will receive, counted as anyone reading the
manifest would count it; ``--keep-prompts-home`` must keep verbatim prompt text and
instruction-file notes out of a real sync to a bare remote and out of a member's answers; and
the prompt visibility setting must change the visibility the readers give.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from bourdon.access.trust import MemberRegistry
from bourdon.cli.main import main
from bourdon.ingest.pipeline import export_reader
from bourdon.query import reads
from bourdon.query.index import Index
from bourdon.readers.claude_code import ClaudeCodeReader
from bourdon.replicate.sync import sync
from bourdon.serve.caller import scope_of
from bourdon.store.library import Library
from bourdon.testing.readercheck import reader_context
from bourdon.testing.remotes import bare_repository, every_object
from tests.support.stores.claude_code import write_store

INSTRUCTION_TAGS = {"claude-md", "auto-memory"}  # what the Claude Code reader tags its notes


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    """A library holding a Claude Code store's export; its root."""
    home = tmp_path / "home"
    write_store(home)
    library = Library.init(tmp_path / "lib")
    try:
        export_reader(library, ClaudeCodeReader(), reader_context(home))
    finally:
        library.close()
    return tmp_path / "lib"


def manifest_of(root: Path) -> dict[str, Any]:
    with Library.open(root) as library:
        return dict(library.read("claude-code").data)


def team_rows(data: dict[str, Any], section: str) -> list[dict[str, Any]]:
    return [r for r in data.get(section) or [] if r.get("visibility", "team") in ("public", "team")]


def expected_counts(data: dict[str, Any]) -> dict[str, int]:
    """What a reader of the manifest counts at team: rows by kind, prompts, instruction notes."""
    sessions = team_rows(data, "recent_sessions")
    notes = team_rows(data, "notes")
    return {
        "entities": len(team_rows(data, "known_entities")),
        "sessions": len(sessions),
        "workstreams": len(team_rows(data, "known_workstreams")),
        "notes": len(notes),
        "prompt_sessions": sum(1 for s in sessions if s.get("key_actions")),
        "instruction_notes": sum(1 for n in notes if INSTRUCTION_TAGS & set(n.get("tags") or [])),
    }


def run(root: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["--library", str(root), *args])
    return code, capsys.readouterr().out


def test_remote_add_says_how_many_prompts_and_instruction_notes_the_remote_receives(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = bare_repository(tmp_path / "remote.git")
    code, out = run(exported, "remote", "add", "origin", str(remote), "--json", capsys=capsys)
    assert code == 0
    shares = json.loads(out)["shares"]
    want = expected_counts(manifest_of(exported))
    assert want["prompt_sessions"] > 0 and want["instruction_notes"] > 0  # the leak is real
    assert shares["agents"]["claude-code"] == {**want, "kept_home": shares["agents"]["claude-code"]["kept_home"]}
    assert shares["total"]["prompt_sessions"] == want["prompt_sessions"]

    code, out = run(exported, "remote", "add", "nas", str(remote), capsys=capsys)
    assert code == 0
    assert f"{want['prompt_sessions']} sessions hold verbatim prompt text" in out
    assert f"{want['instruction_notes']} notes come from instruction files" in out
    assert "--keep-prompts-home" in out  # and how to keep them home


def test_member_add_says_what_the_member_will_read(
    exported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(
        exported, "member", "add", "desk", "--grant", "claude-code", "--json", capsys=capsys
    )
    assert code == 0
    answer = json.loads(out)
    assert answer["token"].startswith("bdn_")
    want = expected_counts(manifest_of(exported))
    got = answer["shares"]["agents"]["claude-code"]
    assert {k: got[k] for k in want} == want

    code, out = run(exported, "member", "add", "nogrant", capsys=capsys)
    assert code == 0
    assert "verbatim prompt text" not in out  # a quarantined member without grants reads none
    assert "claude-code" not in out


def test_keep_prompts_home_counts_nothing_of_them(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = bare_repository(tmp_path / "remote.git")
    code, out = run(
        exported, "remote", "add", "origin", str(remote), "--keep-prompts-home", "--json",
        capsys=capsys,
    )
    assert code == 0
    answer = json.loads(out)
    assert answer["keep_prompts_home"] is True
    got = answer["shares"]["agents"]["claude-code"]
    want = expected_counts(manifest_of(exported))
    assert got["prompt_sessions"] == got["instruction_notes"] == 0
    assert got["kept_home"] >= want["prompt_sessions"] + want["instruction_notes"]
    assert got["entities"] == want["entities"]


ROWS = ("known_entities", "recent_sessions", "active_workstreams", "notes")


def test_a_remote_that_keeps_prompts_home_never_receives_them(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = bare_repository(tmp_path / "remote.git")
    code, _ = run(
        exported, "remote", "add", "origin", str(remote), "--keep-prompts-home", capsys=capsys
    )
    assert code == 0
    data = manifest_of(exported)
    prompts = [a for s in team_rows(data, "recent_sessions") for a in s.get("key_actions", [])]
    notes = [n["text"] for n in team_rows(data, "notes")]
    with Library.open(exported) as library:
        report = sync(library, "origin")
    assert report.sent
    # What was kept home is counted as such, not as rows above the remote's visibility.
    homebound = sum(1 for s in team_rows(data, "recent_sessions") if s.get("key_actions"))
    assert sum(s.kept_home for s in report.sent) >= homebound > 0
    assert sum(s.withheld for s in report.sent) == sum(
        1 for section in ROWS for r in data.get(section) or [] if r.get("visibility") == "private"
    )
    blobs = b"\n".join(content for _, content in every_object(remote))
    assert b"ledgerline" in blobs  # the project entities went
    for text in prompts + notes:
        first = text.split("\n")[0][:40].encode("utf-8")
        assert first not in blobs, text


def test_an_ordinary_remote_receives_them_as_it_was_told(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remote = bare_repository(tmp_path / "remote.git")
    run(exported, "remote", "add", "origin", str(remote), capsys=capsys)
    with Library.open(exported) as library:
        sync(library, "origin")
    blobs = b"\n".join(content for _, content in every_object(remote))
    assert b"Bump the version to 0.4.0" in blobs


def test_a_member_that_keeps_prompts_home_is_never_answered_with_them(
    exported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run(
        exported, "member", "add", "desk", "--grant", "claude-code", "--keep-prompts-home",
        capsys=capsys,
    )
    assert code == 0
    member = MemberRegistry(Path(os.environ["BOURDON_HOME"])).get("desk")
    assert member.keep_home
    caller = member.caller()
    index = Index(exported)
    index.refresh()
    scope = scope_of(caller)
    recent = reads.list_recent_work(index, "2026-01-01", agent="claude-code", access_level="team", scope=scope)
    notes = reads.list_notes(index, "2026-01-01", agent="claude-code", access_level="team", scope=scope)
    found = reads.find_entity(index, "ledgerline", access_level="team", scope=scope)
    text = json.dumps([recent, notes, found])
    assert "Bump the version to 0.4.0" not in text
    for note in team_rows(manifest_of(exported), "notes"):
        assert note["text"][:40] not in text
    assert "ledgerline" in text  # the rest is answered
    assert recent["meta"]["returned"] == 0 and notes["meta"]["returned"] == 0

    plain = MemberRegistry(Path(os.environ["BOURDON_HOME"]))
    run(exported, "member", "add", "open", "--grant", "claude-code", capsys=capsys)
    other = scope_of(plain.get("open").caller())
    recent = reads.list_recent_work(index, "2026-01-01", agent="claude-code", access_level="team", scope=other)
    assert "Bump the version to 0.4.0" in json.dumps(recent)
    notes = reads.list_notes(index, "2026-01-01", agent="claude-code", access_level="team", scope=other)
    assert notes["meta"]["returned"] > 0


def test_a_member_that_keeps_prompts_home_gets_none_from_the_export_or_the_resources(
    exported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bourdon.model import Visibility

    run(
        exported, "member", "add", "desk", "--tier", "trusted", "--keep-prompts-home",
        capsys=capsys,
    )
    caller = MemberRegistry(Path(os.environ["BOURDON_HOME"])).get("desk").caller()
    index = Index(exported)
    index.refresh()
    scope = scope_of(caller)
    envelope = reads.export_agents(index, scope=scope)
    memory = reads.agent_memory(index, "claude-code", Visibility.TEAM, scope=scope)
    text = json.dumps([envelope, memory])
    assert "Bump the version to 0.4.0" not in text
    assert memory["recent_sessions"] == [] and memory["notes"] == []
    assert memory["known_entities"]
