"""Adopting a library the reference Bourdon wrote (issue 11): ``bourdon init`` on its folder.

The libraries here are built by hand in the reference's layout (agents/, versions/<agent>/
<stamp>-<digest8>.l5.yaml, provenance/<agent>.jsonl, staging/, lock files, no git), as observed
from bourdon 0.32.2; tests/interop/test_adopt_reference.py has the real reference write one.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bourdon.cli.main import main
from bourdon.digest import digest
from bourdon.errors import GitError, LibraryError
from bourdon.formats.yamlio import load
from bourdon.store import adopt
from bourdon.store.git.fastimport import ImportedCommit
from bourdon.store.library import Library


def manifest(agent: str, *entities: str, when: str = "2026-12-01T10:00:00+00:00") -> bytes:
    """A manifest as the reference writes it (its quoting, its key order)."""
    rows = "".join(f"- name: {name}\n  visibility: team\n" for name in entities)
    return (
        f"spec_version: '0.1'\nagent:\n  id: {agent}\n  type: code-assistant\n"
        f"last_updated: '{when}'\nrecent_sessions: []\nknown_entities:\n{rows}"
        "known_workstreams: []\nnotes: []\n"
    ).encode()


def sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def epoch(text: str) -> int:
    return int(datetime.fromisoformat(text).astimezone(UTC).timestamp())


class ReferenceLibrary:
    """Writes files in the reference's layout, the way its writes leave them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "agents").mkdir(parents=True)
        (root / ".bourdon-agents.lock").write_bytes(b"")

    def live(self, agent: str, raw: bytes) -> None:
        (self.root / "agents" / f"{agent}.l5.yaml").write_bytes(raw)
        (self.root / "agents" / f"{agent}.l5.yaml.lock").write_bytes(b"")

    def snapshot(self, agent: str, stamp: str, raw: bytes) -> Path:
        folder = self.root / "versions" / agent
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{stamp}-{sha(raw)[:8]}.l5.yaml"
        path.write_bytes(raw)
        return path

    def provenance(self, agent: str, ts: str, op: str, new: bytes, **more: Any) -> None:
        folder = self.root / "provenance"
        folder.mkdir(exist_ok=True)
        line = {"ts": ts, "agent_id": agent, "op": op, "caller": "operator"}
        line.update(more, new_digest=sha(new))
        with (folder / f"{agent}.jsonl").open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
        (folder / f"{agent}.jsonl.lock").write_bytes(b"")

    def staged(self, caller: str, agent: str, raw: bytes) -> None:
        folder = self.root / "staging" / caller
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{agent}.l5.yaml").write_bytes(raw)


# alpha: created at 10:00:00 (session s-1), changed at 10:00:02, rolled back at 10:00:04.
# beta: created at 10:00:01. The reference keeps the replaced manifests as snapshots stamped
# with the time they were replaced.
ALPHA_1 = manifest("alpha", "Ledgerline")
ALPHA_2 = manifest("alpha", "Ledgerline", "newthing", when="2026-12-01T10:00:02+00:00")
BETA_1 = manifest("beta", "Ledgerline")


def two_agents(root: Path) -> ReferenceLibrary:
    ref = ReferenceLibrary(root)
    ref.provenance(
        "alpha",
        "2026-12-01T10:00:00.100000Z",
        "commit",
        ALPHA_1,
        session_id="s-1",
        transcript_ref="t/1.jsonl",
        base_digest=None,
    )
    ref.provenance("beta", "2026-12-01T10:00:01.100000Z", "commit", BETA_1, base_digest=None)
    ref.snapshot("alpha", "20261201T100002050000Z", ALPHA_1)  # replaced by the second commit
    ref.provenance(
        "alpha", "2026-12-01T10:00:02.100000Z", "commit", ALPHA_2, base_digest=sha(ALPHA_1)
    )
    ref.snapshot("alpha", "20261201T100004050000Z", ALPHA_2)  # replaced by the rollback
    ref.provenance(
        "alpha", "2026-12-01T10:00:04.100000Z", "rollback", ALPHA_1, base_digest=sha(ALPHA_2)
    )
    ref.live("alpha", ALPHA_1)
    ref.live("beta", BETA_1)
    return ref


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


@pytest.fixture
def cli(capsysbinary: pytest.CaptureFixture[bytes]) -> Any:
    def run(*args: str | Path) -> tuple[int, str, str]:
        capsysbinary.readouterr()
        code = main([str(a) for a in args])
        out, err = capsysbinary.readouterr()
        return code, out.decode(), err.decode()

    return run


def test_init_replays_every_agent_in_one_time_order(tmp_path: Path) -> None:
    two_agents(tmp_path / "lib")
    with Library.init(tmp_path / "lib") as library:
        assert library.agent_ids() == ["alpha", "beta"]
    subjects = git(tmp_path / "lib", "log", "--reverse", "--format=%ct %s").splitlines()
    assert [line.split(" ", 1)[1] for line in subjects] == [
        "create the library",
        "commit alpha: adopted from versions/alpha/20261201T100002050000Z-"
        f"{sha(ALPHA_1)[:8]}.l5.yaml",
        "commit beta: adopted from agents/beta.l5.yaml",
        f"commit alpha: adopted from versions/alpha/20261201T100004050000Z-{sha(ALPHA_2)[:8]}"
        ".l5.yaml",
        "rollback alpha: adopted from agents/alpha.l5.yaml",
    ]
    # Each state at the time of the write that produced it; the history starts with the first.
    assert [int(line.split(" ", 1)[0]) for line in subjects] == [
        epoch("2026-12-01T10:00:00+00:00"),
        epoch("2026-12-01T10:00:00+00:00"),
        epoch("2026-12-01T10:00:01+00:00"),
        epoch("2026-12-01T10:00:02+00:00"),
        epoch("2026-12-01T10:00:04+00:00"),
    ]


def test_each_version_carries_the_provenance_of_the_write_that_made_it(tmp_path: Path) -> None:
    two_agents(tmp_path / "lib")
    with Library.init(tmp_path / "lib") as library:
        versions = library.history("alpha")
    assert [(v.op, v.caller, v.session, v.transcript) for v in versions] == [
        ("rollback", "operator", None, None),
        ("commit", "operator", None, None),
        ("commit", "operator", "s-1", "t/1.jsonl"),
    ]
    assert [v.reference_digest for v in versions] == [sha(ALPHA_1), sha(ALPHA_2), sha(ALPHA_1)]
    assert [v.time for v in versions] == [
        "2026-12-01T10:00:04Z",
        "2026-12-01T10:00:02Z",
        "2026-12-01T10:00:00Z",
    ]
    assert versions[0].digest == digest(load(ALPHA_1))


def test_versions_hold_the_reference_files_byte_for_byte(tmp_path: Path) -> None:
    two_agents(tmp_path / "lib")
    with Library.init(tmp_path / "lib") as library:
        versions = library.history("alpha")
        held = [library.read_bytes("alpha", v.version_id) for v in versions]
        assert library.read_bytes("beta") == BETA_1
    assert held == [ALPHA_1, ALPHA_2, ALPHA_1]


def test_explain_finds_a_state_by_the_references_digest_or_its_digest8(tmp_path: Path) -> None:
    two_agents(tmp_path / "lib")
    with Library.init(tmp_path / "lib") as library:
        versions = library.history("alpha")
        for wanted in (sha(ALPHA_2), sha(ALPHA_2)[:8], "sha256:" + sha(ALPHA_2)):
            assert library.explain("alpha", wanted).version.version_id == versions[1].version_id
        # Produced twice (the commit, then the rollback): the first write explains it.
        first = library.explain("alpha", sha(ALPHA_1)[:8])
        assert first.version.version_id == versions[2].version_id
        assert first.again_in == [versions[0].version_id]
        ours = library.explain("alpha", str(versions[1].digest))
        assert ours.version.version_id == versions[1].version_id
        assert ours.changes.added["known_entities"] == ["newthing"]


def test_staged_writes_stay_staged_and_are_not_served(tmp_path: Path) -> None:
    ref = two_agents(tmp_path / "lib")
    guest = manifest("alpha", "guestnote")
    ref.staged("guest", "alpha", guest)
    with Library.init(tmp_path / "lib") as library:
        staged = library.staged()
        assert [(s.caller, s.agent_id, s.rows) for s in staged] == [("guest", "alpha", 1)]
        assert library.read_bytes("alpha") == ALPHA_1
        assert "guestnote" not in library.read_bytes("alpha").decode()
        promoted = library.promote("guest", "alpha")
        names = [row["name"] for row in library.read("alpha").data["known_entities"]]
    assert promoted.op == "promote"
    assert names == ["Ledgerline", "guestnote"]


def test_nothing_of_the_reference_is_lost_and_git_status_is_clean(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    two_agents(root).staged("guest", "beta", manifest("beta", "x"))
    before = files(root)
    Library.init(root).close()
    after = files(root)
    for name, data in before.items():
        kept = after.get(name, after.get(f".bourdon/imported/{name}"))
        assert kept == data, name
    # Live manifests and staged writes stay where both implementations look for them; the
    # reference's bookkeeping moves under .bourdon/imported/ (git-ignored, never replicated).
    assert after["agents/alpha.l5.yaml"] == ALPHA_1
    assert "staging/guest/beta.l5.yaml" in after
    assert not (root / "versions").exists() and not (root / "provenance").exists()
    assert ".bourdon/imported/agents/alpha.l5.yaml.lock" in after
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""


def test_other_features_files_are_left_in_place_and_named(tmp_path: Path, cli: Any) -> None:
    # The reference keeps more than memory in its library folder (skills, meetings, its
    # library identity): adoption neither commits nor moves them, and says so.
    root = tmp_path / "lib"
    two_agents(root)
    (root / "skills").mkdir()
    (root / "skills" / "review.md").write_text("# review\n")
    (root / "library.yaml").write_text("id: ada-desktop\n")
    before = files(root)
    code, out, _ = cli("init", root)
    assert code == 0
    assert "left in place, not committed: library.yaml, skills/" in out
    after = files(root)
    assert after["skills/review.md"] == before["skills/review.md"]
    assert after["library.yaml"] == before["library.yaml"]
    tracked = git(root, "ls-files").split()
    assert "library.yaml" not in tracked and "skills/review.md" not in tracked


def test_dry_run_shows_the_plan_and_changes_nothing(tmp_path: Path, cli: Any) -> None:
    root = tmp_path / "lib"
    two_agents(root).staged("guest", "alpha", manifest("alpha", "x"))
    before = files(root)
    code, out, _ = cli("init", root, "--dry-run", "--json")
    assert code == 0
    plan = json.loads(out)
    assert plan["would"] == "adopt"
    assert plan["adoption"]["agents"] == {
        "alpha": {"versions": 3, "snapshots": 2, "provenance_lines": 3, "provenance_matched": 3},
        "beta": {"versions": 1, "snapshots": 0, "provenance_lines": 1, "provenance_matched": 1},
    }
    assert plan["adoption"]["staged"] == ["staging/guest/alpha.l5.yaml"]
    assert plan["adoption"]["moved"] == [
        "versions",
        "provenance",
        ".bourdon-agents.lock",
        "agents/alpha.l5.yaml.lock",
        "agents/beta.l5.yaml.lock",
    ]
    assert plan["adoption"]["untouched"] == []
    code, text, _ = cli("init", root, "--dry-run")
    assert code == 0
    assert "Would adopt the reference library" in text
    assert "alpha: 3 versions (2 from versions/)" in text
    assert files(root) == before
    assert not (root / ".git").exists()


def test_init_reports_the_adoption(tmp_path: Path, cli: Any) -> None:
    two_agents(tmp_path / "lib")
    code, out, err = cli("init", tmp_path / "lib")
    assert code == 0
    assert "Adopted the reference library" in out
    assert "replayed 4/4 versions" in err  # progress goes to stderr
    code, out, _ = cli("init", tmp_path / "lib")
    assert "is already a library (2 agents)" in out


def test_a_snapshot_our_schema_refuses_is_adopted_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    ref = two_agents(root)
    odd = ALPHA_1.replace(b"  visibility: team\n", b"  visibility: team\n  x-odd: kept\n")
    broken = b"spec_version: '0.1'\nagent: [not, a, mapping\n"
    ref.snapshot("alpha", "20261201T090000000000Z", odd)
    broken_path = ref.snapshot("alpha", "20261201T090001000000Z", broken)
    warned = " ".join(adopt.plan(root).warnings)
    assert f"versions/alpha/{broken_path.name}" in warned
    assert "adopted byte for byte all the same" in warned
    with Library.init(root) as library:
        versions = library.history("alpha")
        held = [library.read_bytes("alpha", v.version_id) for v in versions]
    assert held == [ALPHA_1, ALPHA_2, ALPHA_1, broken, odd]
    assert versions[-2].digest is None  # no YAML to take our digest of
    assert versions[-2].reference_digest == sha(broken)


def test_a_version_without_provenance_is_an_import_at_its_stamp(tmp_path: Path) -> None:
    ref = ReferenceLibrary(tmp_path / "lib")
    ref.snapshot("alpha", "20261130T080000000000Z", ALPHA_2)
    ref.live("alpha", ALPHA_1)
    with Library.init(tmp_path / "lib") as library:
        oldest = library.history("alpha")[-1]
    assert (oldest.op, oldest.caller, oldest.time) == (
        "import",
        "reference",
        "2026-11-30T08:00:00Z",
    )


def test_other_commands_say_how_to_adopt_a_reference_library(tmp_path: Path, cli: Any) -> None:
    two_agents(tmp_path / "lib")
    with pytest.raises(LibraryError, match=r"reference Bourdon.*'bourdon init "):
        Library.open(tmp_path / "lib")
    code, _, err = cli("--library", tmp_path / "lib", "agents")
    assert code != 0
    assert f"bourdon init {tmp_path / 'lib'}" in err
    assert "is not a bourdon library" not in err


def test_an_interrupted_adoption_starts_again_from_the_reference_files(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    two_agents(root)
    # A crash after 'git init' and before the history was complete leaves this behind.
    (root / ".bourdon").mkdir()
    (root / ".bourdon" / "adopting.json").write_text('{"state": "replaying"}', encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    with pytest.raises(LibraryError, match="bourdon init"):
        Library.open(root)
    with Library.init(root) as library:
        assert len(library.history("alpha")) == 3
    assert not (root / ".bourdon" / "adopting.json").exists()


def test_an_interrupted_move_is_finished(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    two_agents(root)
    Library.init(root).close()
    # As if the crash came after the history was written, before the files were moved.
    (root / ".bourdon" / "imported" / "provenance").rename(root / "provenance")
    record = {"state": "moving", "moved": ["provenance"]}
    (root / ".bourdon" / "adopting.json").write_text(json.dumps(record), encoding="utf-8")
    with Library.init(root) as library:
        assert len(library.history("alpha")) == 3
    assert (root / ".bourdon" / "imported" / "provenance" / "alpha.jsonl").is_file()
    assert not (root / "provenance").exists()


def test_a_file_whose_name_is_no_agent_id_is_left_in_place(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    two_agents(root)
    odd = root / "agents" / "Not An Id.l5.yaml"
    odd.write_bytes(b"kept: as it is\n")
    assert any("'Not An Id' is not an agent id" in w for w in adopt.plan(root).warnings)
    with Library.init(root) as library:
        assert library.agent_ids() == ["alpha", "beta"]
    assert odd.read_bytes() == b"kept: as it is\n"


def test_an_import_never_moves_a_branch_that_moved_meanwhile(tmp_path: Path) -> None:
    with Library.init(tmp_path / "lib") as library:
        start = library.head()
        moved = library.commit("a", {"agent": {"type": "other"}}).version
        line = [ImportedCommit({"agents/x.l5.yaml": b"x\n"}, "import x", "a <a@h>", "a <a@h>", 1)]
        with pytest.raises(GitError, match="compare-and-swap"):
            library.repo.import_commits(line, parent=start)
        assert library.head() == moved
        assert library.repo.read_ref("refs/bourdon/importing") is None


def test_init_shows_ten_warnings_and_counts_the_rest(tmp_path: Path, cli: Any) -> None:
    ref = two_agents(tmp_path / "lib")
    for n in range(12):
        ref.snapshot("alpha", f"20261130T0000{n:02d}000000Z", b"not: [a manifest\n%d" % n)
    code, out, err = cli("init", tmp_path / "lib", "--dry-run")
    assert code == 0
    assert err.count("bourdon: warning: versions/alpha/") == 10
    assert "bourdon: warning: and 2 more (--json lists every one)" in err
    code, out, _ = cli("init", tmp_path / "lib", "--dry-run", "--json")
    assert len(json.loads(out)["adoption"]["warnings"]) == 12


def test_writes_within_one_second_keep_their_order(tmp_path: Path) -> None:
    ref = ReferenceLibrary(tmp_path / "lib")
    ref.provenance("alpha", "2026-12-01T10:00:00.900000Z", "commit", ALPHA_1)
    ref.provenance("beta", "2026-12-01T10:00:00.100000Z", "commit", BETA_1)
    ref.live("alpha", ALPHA_1)
    ref.live("beta", BETA_1)
    Library.init(tmp_path / "lib").close()
    assert git(tmp_path / "lib", "log", "--reverse", "--format=%s").splitlines() == [
        "create the library",
        "commit beta: adopted from agents/beta.l5.yaml",
        "commit alpha: adopted from agents/alpha.l5.yaml",
    ]
