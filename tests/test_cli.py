"""The ``bourdon`` command as a user meets it: what it prints, what it writes, how it exits.

Most cases run the real parser and handlers in-process (``bourdon.cli.main``) with stdout and
stderr captured; a handful run ``python -m bourdon`` in a subprocess to prove the console entry,
the exit status and standard input are real. Expected behaviour is the one docs/cli.md states.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bourdon import __version__
from bourdon.cli.main import main
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import make_library

COMMANDS = [
    "init", "validate", "commit", "show", "history", "diff", "explain", "rollback",
    "staging", "agents", "find", "recent", "summary", "serve", "demo",
]  # fmt: skip
Versions = dict[str, Any]  # what the two_versions fixture returns
SAMPLE_AGENTS = ["claude-code", "claude-desktop-chat", "codex", "cursor", "gemini-cli"]
WRITE_KEYS = [
    "agent_id", "op", "added", "updated", "removed", "total", "counts", "path", "digest",
    "digest8", "previous_digest", "version_id", "last_updated",
]  # fmt: skip

NEW_AGENT = b"""\
agent:
  type: code-assistant
  instance: Claude Code on ada-laptop
known_entities:
  - name: ledgerline
    type: project
    summary: Double-entry bookkeeping service in Go.
    tags: [work]
notes:
  - date: 2026-11-28
    text: Month partitions need a default partition for late postings.
"""
MORE_ROWS = b"""\
known_entities:
  - name: ledgerline
    type: project
    summary: Bookkeeping service in Go, now partitioned by month.
known_workstreams:
  - name: partition postings
    status: active
    related_entities: [ledgerline]
"""


# -- helpers -------------------------------------------------------------------------------


@dataclass
class Run:
    code: int
    raw: bytes  # stdout exactly as written
    err: str

    @property
    def out(self) -> str:
        return self.raw.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def cli(capsysbinary: pytest.CaptureFixture[bytes]) -> Any:
    """Run ``bourdon ARGS`` in-process; usage errors (argparse's SystemExit) become exit codes."""

    def run(*args: str | Path) -> Run:
        capsysbinary.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        out, err = capsysbinary.readouterr()
        return Run(code, out, err.decode("utf-8"))

    return run


@pytest.fixture(autouse=True)
def no_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BOURDON_DEBUG", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)  # captured output is not a terminal: no cut


def stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def bourdon(*args: str | Path, input: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """The real command in a child process (it inherits the test's HOME and BOURDON_LIBRARY)."""
    done = subprocess.run(
        [sys.executable, "-m", "bourdon", *map(str, args)],
        input=input,
        capture_output=True,
        timeout=60,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    )


def assert_one_line_error(err: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("bourdon: "), err
    assert "Traceback" not in err


def head(root: Path) -> str:
    with Library.open(root) as library:
        commit = library.head()
    assert commit is not None
    return commit


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.fixture
def root(library: Library) -> Path:
    """An empty library's folder."""
    return library.root


@pytest.fixture
def two_versions(root: Path, tmp_path: Path, cli: Any) -> dict[str, Any]:
    """'ada' committed twice through the CLI: the JSON summaries and bytes of both versions."""
    init = head(root)
    first = cli("--library", root, "commit", "ada", "-f", write(tmp_path / "a.yaml", NEW_AGENT),
                "--json")  # fmt: skip
    assert first.code == 0, first.err
    bytes1 = (root / "agents" / "ada.l5.yaml").read_bytes()
    second = cli("--library", root, "commit", "ada", "-f", write(tmp_path / "b.yaml", MORE_ROWS),
                 "--json")  # fmt: skip
    assert second.code == 0, second.err
    bytes2 = (root / "agents" / "ada.l5.yaml").read_bytes()
    return {
        "init": init, "v1": first.json(), "v2": second.json(), "bytes1": bytes1, "bytes2": bytes2
    }  # fmt: skip


@pytest.fixture(scope="module")
def sample_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The bundled sample library, shared by the read-only tests of this module."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(tmp_path_factory.mktemp("sample-home")))
        root = tmp_path_factory.mktemp("sample") / "library"
        make_library(root).close()
    yield root


# -- global options, help, version -----------------------------------------------------------


def test_help_lists_every_command_and_the_exit_codes(cli: Any) -> None:
    result = cli("--help")
    assert result.code == 0
    for command in COMMANDS:
        assert f"\n    {command} " in result.out, command
    assert "Exit codes" in result.out


@pytest.mark.parametrize(
    "args", [["commit", "-h"], ["staging", "-h"], ["staging", "promote", "-h"], ["recent", "-h"]]
)
def test_help_works_after_any_command_and_verb(cli: Any, args: list[str]) -> None:
    result = cli(*args)
    assert result.code == 0
    assert result.out.startswith("usage: bourdon ")


def test_version(cli: Any) -> None:
    result = cli("--version")
    assert (result.code, result.out) == (0, f"bourdon {__version__}\n")
    assert __version__ == "0.1.0"


def test_global_options_after_the_command_mean_what_they_mean_before_it(
    cli: Any, root: Path
) -> None:
    result = cli("history", "ada", "--library", root)  # the reference CLI's form (issue 11)
    assert (result.code, result.err) == (4, "bourdon: no agent 'ada' in this library; see "
                                            "'bourdon agents'\n")  # the library was found


def test_usage_errors_print_usage_and_exit_2_without_json(cli: Any, root: Path) -> None:
    result = cli("--library", root, "commit", "ada", "--json")  # --file is missing
    assert result.code == 2
    assert result.out == ""
    assert "usage: bourdon commit" in result.err
    assert "--file" in result.err


def test_console_entry_help_and_version_in_a_subprocess() -> None:
    done = bourdon("--help")
    assert done.returncode == 0
    for command in COMMANDS:
        assert f"\n    {command} " in done.stdout, command
    done = bourdon("--version")
    assert (done.returncode, done.stdout.strip()) == (0, "bourdon 0.1.0")


# -- init and the library path ----------------------------------------------------------------


def test_init_creates_a_library_in_a_new_folder(cli: Any, tmp_path: Path) -> None:
    target = tmp_path / "deep" / "new-lib"
    result = cli("init", target)
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        f"Created an empty library at {target}",
        f"  add memory:  bourdon --library {target} commit AGENT --file rows.yaml",
    ]
    for folder in ("agents", "staging", ".bourdon", ".git"):
        assert (target / folder).is_dir(), folder
    assert (target / ".gitignore").read_text().splitlines()[-1] == ".bourdon/"
    assert head(target) is not None
    again = cli("--library", target, "history", "anyone")
    assert again.code == 4  # a real, empty library


def test_init_on_a_library_is_harmless(cli: Any, root: Path) -> None:
    before = head(root)
    result = cli("init", root)
    assert (result.code, result.out) == (0, f"{root} is already a library (0 agents)\n")
    as_json = cli("init", root, "--json")
    assert as_json.code == 0
    assert as_json.json() == {"library": str(root), "created": False}
    assert head(root) == before


def test_init_json_on_a_new_folder_says_created(cli: Any, tmp_path: Path) -> None:
    result = cli("init", tmp_path / "fresh", "--json")
    assert result.code == 0
    assert result.json() == {"library": str(tmp_path / "fresh"), "created": True}


def test_init_tolerates_a_folder_holding_only_dot_bourdon(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "lib" / ".bourdon").mkdir(parents=True)
    assert cli("init", tmp_path / "lib").code == 0
    assert (tmp_path / "lib" / "agents").is_dir()


def test_init_refuses_a_non_empty_folder_with_exit_7(cli: Any, tmp_path: Path) -> None:
    folder = tmp_path / "stuff"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    result = cli("init", folder)
    assert result.code == 7
    assert result.out == ""
    assert_one_line_error(result.err)
    assert "not empty" in result.err
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]  # nothing created
    as_json = cli("init", folder, "--json")
    assert as_json.code == 7
    assert as_json.json()["error"]["code"] == "library"


def test_library_flag_beats_the_environment_which_beats_home(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    flag, env = tmp_path / "from-flag", tmp_path / "from-env"
    monkeypatch.setenv("BOURDON_LIBRARY", str(env))
    assert cli("--library", flag, "init").code == 0
    assert (flag / "agents").is_dir() and not env.exists()

    assert cli("init").code == 0
    assert (env / "agents").is_dir()
    assert not (isolated_home / "agent-library").exists()

    monkeypatch.delenv("BOURDON_LIBRARY")
    result = cli("init", "--json")
    assert result.code == 0
    assert result.json()["library"] == str(isolated_home / "agent-library")
    assert (isolated_home / "agent-library" / "agents").is_dir()


def test_an_empty_environment_variable_falls_back_to_home(
    cli: Any, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    monkeypatch.setenv("BOURDON_LIBRARY", "")
    assert cli("init").code == 0
    assert (isolated_home / "agent-library" / "agents").is_dir()


def test_tilde_in_library_is_expanded(cli: Any, isolated_home: Path) -> None:
    result = cli("--library", "~/tilde-lib", "init", "--json")
    assert result.code == 0
    assert result.json()["library"] == str(isolated_home / "tilde-lib")


def test_environment_library_is_used_by_other_commands(
    cli: Any, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOURDON_LIBRARY", str(root))
    assert cli("commit", "ada", "-f", write(tmp_path / "a.yaml", NEW_AGENT)).code == 0
    assert (root / "agents" / "ada.l5.yaml").exists()


def test_opening_a_folder_that_is_not_a_library_is_exit_7_with_the_hint(
    cli: Any, tmp_path: Path
) -> None:
    for args in (["history", "ada"], ["agents"], ["staging", "list"], ["show", "ada"]):
        result = cli("--library", tmp_path / "nowhere", *args)
        assert result.code == 7, args
        assert result.out == ""
        assert_one_line_error(result.err)
        assert f"create one with 'bourdon init {tmp_path / 'nowhere'}'" in result.err


# -- commit -----------------------------------------------------------------------------------


def test_commit_a_new_agent_from_a_file(cli: Any, root: Path, tmp_path: Path) -> None:
    result = cli("--library", root, "commit", "ada", "--file",
                 write(tmp_path / "rows.yaml", NEW_AGENT))  # fmt: skip
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "Merged into ada: +2 added, ~0 updated, -0 removed (2 rows in all)"
    assert lines[1].startswith("  version ") and "  digest " in lines[1]
    version, digest8 = lines[1].split()[1], lines[1].split()[3]
    assert len(version) == 12 and len(digest8) == 8
    assert head(root).startswith(version)
    text = (root / "agents" / "ada.l5.yaml").read_text()
    assert "Double-entry bookkeeping service in Go." in text
    assert "name: operator" in text  # rows without a source are stamped by the operator


def test_commit_json_summary_has_the_documented_keys(cli: Any, root: Path, tmp_path: Path) -> None:
    result = cli("--library", root, "commit", "ada", "-f", write(tmp_path / "a.yaml", NEW_AGENT),
                 "--json")  # fmt: skip
    assert result.code == 0
    summary = result.json()
    assert list(summary) == WRITE_KEYS  # no "no_op" on a real write
    assert summary["agent_id"] == "ada"
    assert summary["op"] == "merge"
    assert (summary["added"], summary["updated"], summary["removed"]) == (2, 0, 0)
    assert summary["total"] == 2
    assert summary["counts"] == {
        "known_entities": 1, "recent_sessions": 0, "known_workstreams": 0, "notes": 1
    }  # fmt: skip
    assert summary["path"] == "agents/ada.l5.yaml"
    assert summary["digest"].startswith("sha256:") and len(summary["digest"]) == 71
    assert summary["digest8"] == summary["digest"][7:15]
    assert summary["previous_digest"] is None  # a new agent
    assert summary["version_id"] == head(root)
    assert summary["last_updated"].endswith("Z")


def test_commit_merge_then_no_op(
    cli: Any, root: Path, tmp_path: Path, two_versions: Versions
) -> None:
    v1, v2 = two_versions["v1"], two_versions["v2"]
    assert (v2["op"], v2["added"], v2["updated"], v2["removed"]) == ("merge", 1, 1, 0)
    assert v2["total"] == 3
    assert v2["previous_digest"] == v1["digest"]

    before = head(root)
    again = cli("--library", root, "commit", "ada", "-f", tmp_path / "b.yaml")
    assert again.code == 0
    assert again.out == f"No change: ada already holds these rows (digest {v2['digest8']})\n"
    as_json = cli("--library", root, "commit", "ada", "-f", tmp_path / "b.yaml", "--json").json()
    assert list(as_json) == [*WRITE_KEYS, "no_op"]
    assert as_json["no_op"] is True
    assert as_json["version_id"] is None
    assert as_json["previous_digest"] == as_json["digest"] == v2["digest"]
    assert as_json["last_updated"] == v2["last_updated"]
    assert head(root) == before  # no commit


def test_commit_replace_keeps_only_what_the_file_gives(
    cli: Any, root: Path, tmp_path: Path, two_versions: Versions
) -> None:
    only_note = write(
        tmp_path / "r.yaml", b'notes:\n  - date: "2026-11-30"\n    text: fresh start\n'
    )
    result = cli("--library", root, "commit", "ada", "-f", only_note, "--mode", "replace", "--json")
    assert result.code == 0, result.err
    summary = result.json()
    assert summary["op"] == "replace"
    assert summary["total"] == 1
    assert summary["counts"] == {
        "known_entities": 0, "recent_sessions": 0, "known_workstreams": 0, "notes": 1
    }  # fmt: skip
    text = (root / "agents" / "ada.l5.yaml").read_text()
    assert "fresh start" in text and "ledgerline" not in text
    assert "type: code-assistant" in text  # the agent block is kept
    readable = cli("--library", root, "commit", "ada", "-f", tmp_path / "a.yaml",
                   "--mode", "replace")  # fmt: skip
    assert readable.out.startswith("Replaced ada: ")


def test_commit_from_stdin_in_process(
    cli: Any, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin(monkeypatch, NEW_AGENT)
    result = cli("--library", root, "commit", "ada", "--file", "-", "--json")
    assert result.code == 0, result.err
    assert result.json()["added"] == 2


def test_commit_from_stdin_in_a_subprocess(root: Path) -> None:
    done = bourdon("--library", root, "commit", "ada", "-f", "-", "--json", input=NEW_AGENT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["version_id"] == head(root)
    done = bourdon("--library", root, "commit", "ada", "-f", "-", input=MORE_ROWS)
    assert done.returncode == 0
    assert done.stdout.startswith("Merged into ada: +1 added, ~1 updated, -0 removed (3 rows")


def test_commit_with_a_stale_expected_digest_is_exit_5_with_the_current_digest(
    cli: Any, root: Path, tmp_path: Path, two_versions: Versions
) -> None:
    current = two_versions["v2"]["digest"]
    before = head(root)
    stale = two_versions["v1"]["digest8"]
    rows = write(tmp_path / "c.yaml", b"known_entities:\n  - name: other\n    type: project\n")
    result = cli("--library", root, "commit", "ada", "-f", rows, "--expected-digest", stale)
    assert result.code == 5
    assert result.out == ""
    assert_one_line_error(result.err)
    assert current in result.err
    as_json = cli("--library", root, "commit", "ada", "-f", rows, "--expected-digest", stale,
                  "--json")  # fmt: skip
    assert as_json.code == 5
    error = as_json.json()["error"]
    assert (error["code"], error["status"], error["retryable"]) == ("conflict", 409, False)
    assert error["current_digest"] == current
    assert head(root) == before

    ok = cli("--library", root, "commit", "ada", "-f", rows, "--expected-digest", current[7:15])
    assert ok.code == 0, ok.err
    full = cli("--library", root, "commit", "ada", "-f", write(tmp_path / "d.yaml", MORE_ROWS),
               "--expected-digest", two_versions["v2"]["digest"])  # fmt: skip
    assert full.code == 5  # the full digest is checked too, and it is stale now


def test_commit_to_a_new_agent_with_any_expected_digest_is_a_conflict(
    cli: Any, root: Path, tmp_path: Path
) -> None:
    result = cli("--library", root, "commit", "ada", "-f", write(tmp_path / "a.yaml", NEW_AGENT),
                 "--expected-digest", "12345678", "--json")  # fmt: skip
    assert result.code == 5
    assert result.json()["error"]["code"] == "conflict"
    assert not (root / "agents" / "ada.l5.yaml").exists()


def test_commit_a_new_agent_without_type_is_exit_2(cli: Any, root: Path, tmp_path: Path) -> None:
    rows = write(tmp_path / "n.yaml", b'notes:\n  - date: "2026-11-30"\n    text: hi\n')
    result = cli("--library", root, "commit", "ada", "-f", rows)
    assert result.code == 2
    assert result.out == ""
    assert_one_line_error(result.err)
    assert "new agent" in result.err and "agent.type" in result.err
    assert not (root / "agents" / "ada.l5.yaml").exists()


def test_commit_of_a_file_naming_another_agent_is_exit_2(
    cli: Any, root: Path, tmp_path: Path
) -> None:
    rows = write(tmp_path / "o.yaml", b"agent:\n  id: codex\n  type: code-assistant\n")
    result = cli("--library", root, "commit", "claude-code", "-f", rows, "--json")
    assert result.code == 2
    assert_one_line_error(result.err)
    assert "the change names agent 'codex' but is being committed to 'claude-code'" in result.err
    assert result.json()["error"]["code"] == "bad_input"


def test_commit_of_invalid_yaml_is_exit_3_with_the_line_number(
    cli: Any, root: Path, tmp_path: Path
) -> None:
    rows = write(
        tmp_path / "dup.yaml", b'notes:\n  - date: "2026-11-30"\n    text: a\n    text: b\n'
    )
    result = cli("--library", root, "commit", "ada", "-f", rows)
    assert result.code == 3
    assert result.out == ""
    assert_one_line_error(result.err)
    assert "line 4" in result.err
    syntax = write(tmp_path / "syn.yaml", b"agent:\n  type: other\nnotes:\n  - text: a: b: c\n")
    result = cli("--library", root, "commit", "ada", "-f", syntax, "--json")
    assert result.code == 3
    assert "line 4" in result.err
    assert result.json()["error"]["code"] == "bad_manifest"


def test_commit_of_a_schema_error_is_exit_3_naming_the_path(
    cli: Any, root: Path, tmp_path: Path
) -> None:
    rows = write(
        tmp_path / "s.yaml", b"agent: {type: other}\nnotes:\n  - date: yesterday\n    text: a\n"
    )
    result = cli("--library", root, "commit", "ada", "-f", rows, "--json")
    assert result.code == 3
    error = result.json()["error"]
    assert error["code"] == "schema"
    assert "/notes/0/date" in error["message"]
    assert error["problems"]


def test_commit_of_a_missing_file_is_exit_2_no_such_file(cli: Any, root: Path) -> None:
    result = cli("--library", root, "commit", "ada", "-f", "missing.yaml")
    assert result.code == 2
    assert result.out == ""
    assert result.err == "bourdon: no such file: missing.yaml\n"


def test_commit_of_something_that_is_not_a_mapping_is_exit_2(
    cli: Any, root: Path, tmp_path: Path
) -> None:
    result = cli("--library", root, "commit", "ada", "-f", write(tmp_path / "l.yaml", b"- a\n"))
    assert result.code == 2
    assert_one_line_error(result.err)


def test_commit_with_a_bad_agent_id_is_exit_2(cli: Any, root: Path, tmp_path: Path) -> None:
    result = cli("--library", root, "commit", "Bad Id", "-f", write(tmp_path / "a.yaml", NEW_AGENT))
    assert result.code == 2
    assert_one_line_error(result.err)


# -- show -------------------------------------------------------------------------------------


def test_show_prints_the_exact_bytes_now_and_at_a_version(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    now = cli("--library", root, "show", "ada")
    assert now.code == 0
    assert now.raw == (root / "agents" / "ada.l5.yaml").read_bytes() == two_versions["bytes2"]
    old = cli("--library", root, "show", "ada", "--version", two_versions["v1"]["version_id"][:8])
    assert old.code == 0
    assert old.raw == two_versions["bytes1"]
    assert old.raw != now.raw


def test_show_reads_git_not_a_hand_edit(cli: Any, root: Path, two_versions: Versions) -> None:
    path = root / "agents" / "ada.l5.yaml"
    path.write_bytes(path.read_bytes() + b"# a hand edit\n")
    assert cli("--library", root, "show", "ada").raw == two_versions["bytes2"]


def test_show_json_has_the_manifest_and_digest(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    result = cli("--library", root, "show", "ada", "--json")
    assert result.code == 0
    data = result.json()
    assert data["agent_id"] == "ada"
    assert data["version"] is None
    assert data["digest"] == two_versions["v2"]["digest"]
    assert data["manifest"]["agent"] == {
        "id": "ada", "type": "code-assistant", "instance": "Claude Code on ada-laptop"
    }  # fmt: skip
    assert len(data["manifest"]["known_workstreams"]) == 1
    v1 = two_versions["v1"]["version_id"][:12]
    old = cli("--library", root, "show", "ada", "--version", v1, "--json").json()
    assert old["version"] == v1
    assert old["digest"] == two_versions["v1"]["digest"]
    assert "known_workstreams" not in old["manifest"]


def test_show_in_a_subprocess_writes_the_bytes_unchanged(
    root: Path, two_versions: Versions
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bourdon", "--library", str(root), "show", "ada"],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert done.stdout == two_versions["bytes2"]
    assert done.stderr == b""


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["show", "nobody"], 4),
        (["show", "ada", "--version", "abcdef12"], 4),
        (["show", "ada", "--version", "not-hex"], 2),
    ],
)
def test_show_errors(
    cli: Any, root: Path, two_versions: Versions, args: list[str], code: int
) -> None:
    result = cli("--library", root, *args)
    assert result.code == code
    assert result.out == ""
    assert_one_line_error(result.err)


def test_show_at_a_version_before_the_agent_existed_is_exit_4(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    result = cli("--library", root, "show", "ada", "--version", two_versions["init"])
    assert result.code == 4
    assert_one_line_error(result.err)


# -- history ----------------------------------------------------------------------------------


def test_history_is_a_table_newest_first(cli: Any, root: Path, two_versions: Versions) -> None:
    result = cli("--library", root, "history", "ada")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].split() == ["VERSION", "TIME", "OP", "CALLER", "DIGEST", "SUBJECT"]
    rows = [line.split() for line in lines[1:]]
    assert len(rows) == 2
    newest, oldest = rows
    assert newest[0] == two_versions["v2"]["version_id"][:12]
    assert oldest[0] == two_versions["v1"]["version_id"][:12]
    assert newest[2:5] == ["merge", "operator", two_versions["v2"]["digest8"]]
    assert oldest[4] == two_versions["v1"]["digest8"]
    assert " ".join(newest[5:]) == "merge ada: +1 ~1 -0 rows"
    assert newest[1].endswith("Z") and newest[1] >= oldest[1]


def test_history_json_and_limit(cli: Any, root: Path, two_versions: Versions) -> None:
    data = cli("--library", root, "history", "ada", "--json").json()
    assert data["agent_id"] == "ada"
    versions = data["versions"]
    assert [v["version_id"] for v in versions] == [
        two_versions["v2"]["version_id"], two_versions["v1"]["version_id"]
    ]  # fmt: skip
    for v in versions:
        for key in ("version_id", "digest", "digest8", "op", "caller", "time", "subject"):
            assert key in v, key
        assert v["digest8"] == v["digest"][7:15]
        assert (v["op"], v["caller"], v["session_id"], v["transcript_ref"]) == (
            "merge", "operator", None, None
        )  # fmt: skip
        assert "restores" not in v and "stager" not in v
    limited = cli("--library", root, "history", "ada", "--limit", "1", "--json").json()
    assert [v["version_id"] for v in limited["versions"]] == [two_versions["v2"]["version_id"]]
    table = cli("--library", root, "history", "ada", "--limit", "1").out.splitlines()
    assert len(table) == 2


def test_history_of_an_unknown_agent_is_exit_4(cli: Any, root: Path) -> None:
    result = cli("--library", root, "history", "nobody", "--json")
    assert result.code == 4
    assert_one_line_error(result.err)
    assert result.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("limit", ["0", "-5"])
def test_history_limit_below_1_is_clamped_to_1_and_says_so(
    cli: Any, root: Path, two_versions: Versions, limit: str
) -> None:
    """Bounds are clamped, never rejected (DESIGN section 5), and never silently."""
    result = cli("--library", root, "history", "ada", "--limit", limit, "--json")
    assert result.code == 0, result.err
    assert len(json.loads(result.out)["versions"]) == 1
    assert result.err == f"bourdon: warning: --limit {limit} is below 1; using 1\n"
    table = cli("--library", root, "history", "ada", "--limit", limit)
    assert len(table.out.splitlines()) == 2  # the header and the newest version
    assert "is below 1; using 1" in table.err


@pytest.mark.parametrize(
    ("command", "most"),
    [
        (["recent"], 100),
        (["summary", "ledgerline"], 100),
        (["search", "ledger"], 50),
        (["neighbors", "ledgerline"], 24),
        (["trace", "ledgerline"], 1000),
    ],
)
def test_every_limit_clamps_the_same_way_with_a_warning(
    cli: Any, sample_root: Path, command: list[str], most: int
) -> None:
    low = cli("--library", sample_root, *command, "--limit", "0", "--json")
    assert low.code == 0, low.err
    assert low.err == "bourdon: warning: --limit 0 is below 1; using 1\n"
    high = cli("--library", sample_root, *command, "--limit", str(most + 1), "--json")
    assert high.code == 0, high.err
    assert high.err == f"bourdon: warning: --limit {most + 1} is above {most:,}; using {most:,}\n"
    fine = cli("--library", sample_root, *command, "--limit", str(most), "--json")
    assert (fine.code, fine.err) == (0, "")


def test_a_limit_that_is_not_a_number_is_a_usage_error(cli: Any, root: Path) -> None:
    result = cli("--library", root, "history", "ada", "--limit", "ten")
    assert result.code == 2
    assert "not a whole number: 'ten'" in result.err


# -- diff -------------------------------------------------------------------------------------


def test_diff_shows_row_changes_then_a_unified_diff(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    v1 = two_versions["v1"]["version_id"][:12]
    result = cli("--library", root, "diff", "ada", v1)
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[:2] == [
        "  + known_workstreams: partition postings",
        "  ~ known_entities: ledgerline",
    ]
    assert lines[2] == ""
    assert lines[3:5] == [f"--- ada@{v1}", "+++ ada@HEAD"]
    assert lines[5].startswith("@@ ")
    assert "+    summary: Bookkeeping service in Go, now partitioned by month." in lines
    assert "-    summary: Double-entry bookkeeping service in Go." in lines


def test_diff_between_two_versions_and_removals(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    v1, v2 = two_versions["v1"]["version_id"], two_versions["v2"]["version_id"]
    backwards = cli("--library", root, "diff", "ada", v2, v1)
    assert backwards.code == 0
    assert backwards.out.splitlines()[:2] == [
        "  - known_workstreams: partition postings",
        "  ~ known_entities: ledgerline",
    ]
    assert f"+++ ada@{v1[:12]}" in backwards.out.splitlines()
    same = cli("--library", root, "diff", "ada", v2)
    assert same.out == "  no row changed\n"


def test_diff_json(cli: Any, root: Path, two_versions: Versions) -> None:
    v1 = two_versions["v1"]["version_id"][:12]
    data = cli("--library", root, "diff", "ada", v1, "--json").json()
    assert data == {
        "agent_id": "ada",
        "from": v1,
        "to": "HEAD",
        "added": {"known_workstreams": ["partition postings"]},
        "removed": {},
        "changed": {"known_entities": ["ledgerline"]},
        "agent_changed": False,
    }


def test_diff_at_a_version_without_the_agent_is_exit_4(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    result = cli("--library", root, "diff", "ada", two_versions["init"])
    assert result.code == 4
    assert_one_line_error(result.err)


# -- explain ----------------------------------------------------------------------------------


def test_explain_names_the_write_by_digest8(cli: Any, root: Path, two_versions: Versions) -> None:
    v2 = two_versions["v2"]
    result = cli("--library", root, "explain", "ada", v2["digest8"])
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].startswith(f"{v2['digest8']} of ada was written by operator (merge) at ")
    assert lines[1:4] == [
        f"  version     {v2['version_id']}",
        "  session     -",
        "  transcript  -",
    ]
    assert lines[4:] == [
        "  + known_workstreams: partition postings",
        "  ~ known_entities: ledgerline",
    ]


def test_explain_shows_the_session_and_caller_of_an_api_write(cli: Any, root: Path) -> None:
    with Library.open(root) as library:
        written = library.commit(
            "ada",
            {"agent": {"type": "other"}, "notes": [{"date": "2026-11-30", "text": "hello"}]},
            provenance=Provenance(caller="helper-bot", session="s-0142", transcript="t/1.jsonl"),
        )
    result = cli("--library", root, "explain", "ada", written.digest)
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0].startswith(
        f"{written.digest[7:15]} of ada was written by helper-bot (merge) at "
    )
    assert lines[1:4] == [
        f"  version     {written.version}",
        "  session     s-0142",
        "  transcript  t/1.jsonl",
    ]
    assert "  + notes: 2026-11-30 | hello" in result.out.splitlines()
    data = cli("--library", root, "explain", "ada", written.digest[7:15], "--json").json()
    assert (data["caller"], data["session_id"], data["op"]) == ("helper-bot", "s-0142", "merge")
    assert data["version_id"] == written.version
    assert data["changes"]["added"] == {"notes": ["2026-11-30 | hello"]}


def test_explain_json_is_the_version_plus_changes(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    v2 = two_versions["v2"]
    data = cli("--library", root, "explain", "ada", v2["digest8"], "--json").json()
    history = cli("--library", root, "history", "ada", "--json").json()["versions"][0]
    assert {k: data[k] for k in history} == history
    assert data["agent_id"] == "ada"
    assert data["changes"] == {
        "added": {"known_workstreams": ["partition postings"]},
        "removed": {},
        "changed": {"known_entities": ["ledgerline"]},
        "agent_changed": False,
    }


@pytest.mark.parametrize(("digest", "code"), [("deadbeef", 4), ("zz", 2), ("1234", 2)])
def test_explain_errors(
    cli: Any, root: Path, two_versions: Versions, digest: str, code: int
) -> None:
    result = cli("--library", root, "explain", "ada", digest, "--json")
    assert result.code == code
    assert_one_line_error(result.err)
    assert result.json()["error"]["code"] == {4: "not_found", 2: "bad_input"}[code]


# -- rollback ---------------------------------------------------------------------------------


def test_rollback_dry_run_writes_nothing_and_shows_the_changes(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    v1 = two_versions["v1"]["version_id"][:12]
    before = head(root)
    result = cli("--library", root, "rollback", "ada", v1, "--dry-run")
    assert result.code == 0
    assert result.out.splitlines() == [
        f"Rolling ada back to {v1} would change:",
        "  - known_workstreams: partition postings",
        "  ~ known_entities: ledgerline",
        f"To do it: bourdon rollback ada {v1} --expected-digest {two_versions['v2']['digest8']}",
    ]
    assert head(root) == before
    assert (root / "agents" / "ada.l5.yaml").read_bytes() == two_versions["bytes2"]
    data = cli("--library", root, "rollback", "ada", v1, "--dry-run", "--json").json()
    assert data == {
        "agent_id": "ada",
        "preview": True,
        "current_digest": two_versions["v2"]["digest"],
        "added": {},
        "removed": {"known_workstreams": ["partition postings"]},
        "changed": {"known_entities": ["ledgerline"]},
        "agent_changed": False,
    }
    assert head(root) == before


def test_rollback_restores_the_bytes_and_can_itself_be_rolled_back(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    v1, v2 = two_versions["v1"], two_versions["v2"]
    result = cli("--library", root, "rollback", "ada", v1["version_id"][:12],
                 "--expected-digest", v2["digest8"])  # fmt: skip
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == "Rolled back ada: +0 added, ~1 updated, -1 removed (2 rows in all)"
    assert lines[1].split()[3] == v1["digest8"]
    assert (root / "agents" / "ada.l5.yaml").read_bytes() == two_versions["bytes1"]
    assert cli("--library", root, "show", "ada").raw == two_versions["bytes1"]

    history = cli("--library", root, "history", "ada", "--json").json()["versions"]
    rollback_version = history[0]
    assert rollback_version["op"] == "rollback"
    assert rollback_version["restores"] == v1["version_id"]
    assert len(history) == 3  # the old commits stay

    undo = cli("--library", root, "rollback", "ada", v2["version_id"], "--json")
    assert undo.code == 0, undo.err
    summary = undo.json()
    assert list(summary) == WRITE_KEYS
    assert summary["op"] == "rollback"
    assert summary["digest"] == v2["digest"]
    assert summary["previous_digest"] == v1["digest"]
    assert (root / "agents" / "ada.l5.yaml").read_bytes() == two_versions["bytes2"]

    again = cli("--library", root, "rollback", "ada", v2["version_id"])
    assert again.code == 0
    assert again.out.startswith("No change: ada already holds these rows")


def test_rollback_with_a_stale_expected_digest_is_exit_5_also_with_dry_run(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    v1, v2 = two_versions["v1"], two_versions["v2"]
    before = head(root)
    for extra in ([], ["--dry-run"]):
        result = cli("--library", root, "rollback", "ada", v1["version_id"],
                     "--expected-digest", v1["digest8"], *extra)  # fmt: skip
        assert result.code == 5, extra
        assert result.out == ""
        assert_one_line_error(result.err)
        assert v2["digest"] in result.err
        as_json = cli("--library", root, "rollback", "ada", v1["version_id"],
                      "--expected-digest", v1["digest8"], "--json", *extra)  # fmt: skip
        assert as_json.code == 5
        assert as_json.json()["error"]["current_digest"] == v2["digest"]
    assert head(root) == before


@pytest.mark.parametrize(("version", "code"), [("abcdef123456", 4), ("xyz", 2)])
def test_rollback_to_an_unknown_version(
    cli: Any, root: Path, two_versions: Versions, version: str, code: int
) -> None:
    result = cli("--library", root, "rollback", "ada", version)
    assert result.code == code
    assert_one_line_error(result.err)


# -- staging ----------------------------------------------------------------------------------


def stage(root: Path, caller: str, agent: str, change: dict[str, Any]) -> None:
    with Library.open(root) as library:
        library.stage(caller, agent, change, Provenance(caller=caller))


STAGED_ENTITY = {
    "known_entities": [{"name": "staged-thing", "type": "project", "summary": "from helper-bot"}]
}


def test_staging_list_show_and_promote(cli: Any, root: Path, two_versions: Versions) -> None:
    assert cli("--library", root, "staging", "list").out == "Nothing is waiting in staging.\n"
    assert cli("--library", root, "staging", "list", "--json").json() == {"staged": []}
    stage(root, "helper-bot", "ada", STAGED_ENTITY)

    listed = cli("--library", root, "staging", "list")
    assert listed.code == 0
    lines = listed.out.splitlines()
    assert lines[0].split() == ["AGENT", "FROM", "ROWS", "STAGED", "AT", "DIGEST"]
    row = lines[1].split()
    assert row[:3] == ["ada", "helper-bot", "1"]
    data = cli("--library", root, "staging", "list", "--json").json()["staged"]
    assert len(data) == 1
    assert data[0]["path"] == "staging/helper-bot/ada.l5.yaml"
    assert (data[0]["caller"], data[0]["agent_id"], data[0]["rows"]) == ("helper-bot", "ada", 1)
    assert row[4] == data[0]["digest"][7:15]

    shown = cli("--library", root, "staging", "show", "ada")
    assert shown.code == 0
    assert "name: staged-thing" in shown.out and "spec_version:" in shown.out
    shown_json = cli("--library", root, "staging", "show", "ada", "--json").json()
    assert (shown_json["agent_id"], shown_json["caller"]) == ("ada", "helper-bot")
    assert shown_json["manifest"]["known_entities"][0]["name"] == "staged-thing"

    # Staged rows are not live until promoted.
    assert "staged-thing" not in cli("--library", root, "show", "ada").out
    promoted = cli("--library", root, "staging", "promote", "ada")
    assert promoted.code == 0, promoted.err
    assert promoted.out.startswith("Promoted into ada: +1 added, ~0 updated, -0 removed (4 rows")
    assert "staged-thing" in cli("--library", root, "show", "ada").out
    assert not (root / "staging" / "helper-bot" / "ada.l5.yaml").exists()
    assert cli("--library", root, "staging", "list").out == "Nothing is waiting in staging.\n"
    newest = cli("--library", root, "history", "ada", "--json").json()["versions"][0]
    assert (newest["op"], newest["caller"], newest["stager"]) == (
        "promote",
        "operator",
        "helper-bot",
    )


def test_staging_promote_json_is_the_write_summary(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    stage(root, "helper-bot", "ada", STAGED_ENTITY)
    summary = cli("--library", root, "staging", "promote", "ada", "--json").json()
    assert list(summary) == WRITE_KEYS
    assert summary["op"] == "promote"
    assert summary["previous_digest"] == two_versions["v2"]["digest"]


def test_staging_reject_drops_the_write(cli: Any, root: Path, two_versions: Versions) -> None:
    stage(root, "helper-bot", "ada", STAGED_ENTITY)
    result = cli("--library", root, "staging", "reject", "ada")
    assert result.code == 0, result.err
    now = head(root)
    assert result.out == f"Rejected the staged write of helper-bot for ada (version {now[:12]})\n"
    assert not (root / "staging" / "helper-bot" / "ada.l5.yaml").exists()
    assert cli("--library", root, "staging", "list").out == "Nothing is waiting in staging.\n"
    assert cli("--library", root, "show", "ada").raw == two_versions["bytes2"]  # live untouched

    stage(root, "helper-bot", "ada", STAGED_ENTITY)
    data = cli("--library", root, "staging", "reject", "ada", "--json").json()
    assert data == {
        "agent_id": "ada", "caller": "helper-bot", "rejected": True, "version_id": head(root)
    }  # fmt: skip


def test_staging_needs_from_when_two_callers_staged_the_agent(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    stage(root, "helper-bot", "ada", STAGED_ENTITY)
    stage(root, "other-bot", "ada", {"notes": [{"date": "2026-11-30", "text": "from other"}]})
    for verb in ("show", "promote", "reject"):
        result = cli("--library", root, "staging", verb, "ada")
        assert result.code == 2, verb
        assert result.out == ""
        assert result.err == (
            "bourdon: several callers staged 'ada' (helper-bot, other-bot); pick one with --from\n"
        )
    as_json = cli("--library", root, "staging", "promote", "ada", "--json")
    assert as_json.json()["error"]["code"] == "bad_input"

    shown = cli("--library", root, "staging", "show", "ada", "--from", "other-bot")
    assert "from other" in shown.out and "staged-thing" not in shown.out
    promoted = cli("--library", root, "staging", "promote", "ada", "--from", "other-bot")
    assert promoted.code == 0, promoted.err
    live = cli("--library", root, "show", "ada").out
    assert "from other" in live and "staged-thing" not in live
    listed = cli("--library", root, "staging", "list", "--json").json()["staged"]
    assert [(s["caller"], s["agent_id"]) for s in listed] == [("helper-bot", "ada")]
    # Now there is one caller left: --from is no longer needed.
    assert cli("--library", root, "staging", "reject", "ada").code == 0


def test_staging_with_nothing_staged_is_exit_4(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    for verb in ("show", "promote", "reject"):
        result = cli("--library", root, "staging", verb, "ada")
        assert result.code == 4, verb
        assert result.out == ""
        assert_one_line_error(result.err)
    stage(root, "helper-bot", "ada", STAGED_ENTITY)
    wrong = cli("--library", root, "staging", "promote", "ada", "--from", "nobody", "--json")
    assert wrong.code == 4
    assert wrong.json()["error"]["code"] == "not_found"


# -- validate ---------------------------------------------------------------------------------

BAD_MANIFEST = b'spec_version: "0.1"\nagent: {id: bad, type: other}\nnotes:\n  - date: yesterday\n    text: hi\n'


def test_validate_the_whole_library(cli: Any, sample_root: Path) -> None:
    result = cli("--library", sample_root, "validate")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[:-1] == [f"ok       agents/{a}.l5.yaml" for a in SAMPLE_AGENTS]
    assert lines[-1] == "5 valid, 0 invalid"
    data = cli("--library", sample_root, "validate", "--json").json()
    assert (data["valid"], data["invalid"]) == (5, 0)
    assert all(f["valid"] and f["problems"] == [] for f in data["files"])


def test_validate_reports_a_broken_file_among_good_ones(
    cli: Any, tmp_path: Path, sample_library: Library
) -> None:
    root = sample_library.root
    write(root / "agents" / "bad.l5.yaml", BAD_MANIFEST)
    result = cli("--library", root, "validate")
    assert result.code == 3
    lines = result.out.splitlines()
    assert "INVALID  agents/bad.l5.yaml" in lines
    assert "         agents/bad.l5.yaml: /notes/0/date: is not a 'date' (YYYY-MM-DD)" in lines
    assert "ok       agents/codex.l5.yaml" in lines
    assert lines[-1] == "5 valid, 1 invalid"
    data = cli("--library", root, "validate", "--json").json()
    assert (data["valid"], data["invalid"]) == (5, 1)
    bad = [f for f in data["files"] if not f["valid"]]
    assert [f["path"] for f in bad] == ["agents/bad.l5.yaml"]
    assert any("/notes/0/date" in p for p in bad[0]["problems"])


def test_validate_checks_staged_files_too(cli: Any, root: Path, two_versions: Versions) -> None:
    stage(root, "helper-bot", "ada", STAGED_ENTITY)
    result = cli("--library", root, "validate")
    assert result.code == 0
    assert result.out.splitlines() == [
        "ok       agents/ada.l5.yaml",
        "ok       staging/helper-bot/ada.l5.yaml",
        "2 valid, 0 invalid",
    ]


def test_validate_explicit_files(cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "bad.yaml", BAD_MANIFEST)
    write(tmp_path / "alias.yaml", b"a: &x 1\nb: *x\n")
    good = Path(__file__).resolve().parents[1] / "library" / "agents" / "codex.l5.yaml"
    result = cli("validate", "bad.yaml", "alias.yaml", good)
    assert result.code == 3
    lines = result.out.splitlines()
    assert lines[0] == "INVALID  bad.yaml"
    assert "         bad.yaml: /: 'last_updated' is a required property" in lines
    assert "         bad.yaml: /notes/0/date: is not a 'date' (YYYY-MM-DD)" in lines
    assert "INVALID  alias.yaml" in lines
    assert any(line.startswith("         alias.yaml: uses a YAML anchor") for line in lines)
    assert f"ok       {good}" in lines
    assert lines[-1] == "1 valid, 2 invalid"

    only_good = cli("validate", good)
    assert only_good.code == 0
    assert only_good.out.splitlines()[-1] == "1 valid, 0 invalid"

    missing = cli("validate", "nope.yaml", "--json")
    assert missing.code == 3  # a file that cannot be read counts as invalid
    assert missing.json()["files"][0]["valid"] is False


REFERENCE_WRITTEN = b"""\
spec_version: '0.1'
agent:
  id: alpha-agent
  type: code-assistant
last_updated: '2026-12-01T13:59:28.728347+00:00'
known_entities:
- name: Ledgerline
  visibility: team
  origin: committed
"""


def test_validate_as_read_checks_what_bourdon_serves(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "reference.yaml", REFERENCE_WRITTEN)  # as the reference Bourdon writes it
    one_bad_row = REFERENCE_WRITTEN + b"- name: Birch\n  last_touched: yesterday\n"
    write(tmp_path / "one-bad-row.yaml", one_bad_row)
    write(tmp_path / "broken.yaml", b"agent: [not, a, mapping]\n")

    strict = cli("validate", "reference.yaml")
    assert strict.code == 3  # what bourdon writes has no origin field...
    assert strict.out.splitlines()[0] == (
        "INVALID  reference.yaml  (bourdon reads and serves it whole: see --as-read)"
    )
    as_read = cli("validate", "--as-read", "reference.yaml", "one-bad-row.yaml", "broken.yaml")
    assert as_read.code == 3
    lines = as_read.out.splitlines()
    assert "ok       reference.yaml" in lines  # ...but bourdon serves every row of it
    assert "INVALID  one-bad-row.yaml" in lines
    assert any("known_entities[1]" in line and "'last_touched'" in line for line in lines)
    assert "INVALID  broken.yaml" in lines
    assert lines[-1] == "1 valid, 2 invalid"
    data = cli("validate", "reference.yaml", "--json").json()["files"][0]
    assert (data["valid"], data["served_whole"]) == (False, True)


def test_validate_reads_stdin(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    good = Path(__file__).resolve().parents[1] / "library" / "agents" / "cursor.l5.yaml"
    stdin(monkeypatch, good.read_bytes())
    result = cli("validate", "-")
    assert (result.code, result.out) == (0, "ok       -\n1 valid, 0 invalid\n")


def test_validate_of_a_folder_that_is_not_a_library_is_exit_7(cli: Any, tmp_path: Path) -> None:
    result = cli("--library", tmp_path, "validate")
    assert result.code == 7
    assert result.out == ""
    assert_one_line_error(result.err)


# -- the read commands on the sample library --------------------------------------------------


def test_agents_table(cli: Any, sample_root: Path) -> None:
    result = cli("--library", sample_root, "agents")
    assert result.code == 0
    assert result.err == ""
    lines = result.out.splitlines()
    assert lines[0].split() == [
        "AGENT", "TYPE", "ENTITIES", "SESSIONS", "WORKSTREAMS", "NOTES", "LAST", "SESSION"
    ]  # fmt: skip
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert list(rows) == SAMPLE_AGENTS
    assert rows["claude-code"] == ["code-assistant", "10", "5", "2", "1", "2026-11-29"]
    assert rows["claude-desktop-chat"][0] == "research-assistant"
    private = cli("--library", sample_root, "agents", "--private").out.splitlines()
    claude = next(line.split() for line in private if line.startswith("claude-code "))
    assert claude[2:6] == ["11", "6", "2", "2"]


def test_agents_json(cli: Any, sample_root: Path) -> None:
    data = cli("--library", sample_root, "agents", "--json").json()
    assert data["problems"] == []
    assert [a["id"] for a in data["agents"]] == SAMPLE_AGENTS
    claude = data["agents"][0]
    assert (claude["entities"], claude["sessions"], claude["notes"]) == (10, 5, 1)
    assert claude["freshest_session"] == "2026-11-29"
    assert claude["digest"].startswith("sha256:")
    public = cli("--library", sample_root, "agents", "--access-level", "public", "--json").json()
    assert public["agents"][0]["entities"] < claude["entities"]


def test_find_exact_alias_and_typo(cli: Any, sample_root: Path) -> None:
    exact = cli("--library", sample_root, "find", "ledgerline")
    assert exact.code == 0
    lines = exact.out.splitlines()
    assert lines[0] == "ledgerline [project]"
    assert [line.split()[0] for line in lines[1:]] == ["claude-code", "codex", "cursor"]

    alias = cli("--library", sample_root, "find", "bdn").out.splitlines()
    assert alias[0] == "bourdon [project]  (alias, score 95.0)"

    typo = cli("--library", sample_root, "find", "ledgr-line")
    assert typo.out.splitlines()[0] == "ledgerline [project]  (fuzzy, score 81.8)"
    assert "  codex        Bookkeeping CLI in Python" in typo.out  # aligned on the widest name

    data = cli("--library", sample_root, "find", "ledgr-line", "--json").json()
    assert data["name"] == "ledgr-line"
    match = data["matches"][0]
    assert (match["name"], match["match"], match["score"]) == ("ledgerline", "fuzzy", 81.8)
    assert match["agents"] == ["claude-code", "codex", "cursor"]
    assert data["meta"]["access_level"] == "team"


def test_find_of_an_unknown_name(cli: Any, sample_root: Path) -> None:
    result = cli("--library", sample_root, "find", "Marco Bianchi")
    assert (result.code, result.out) == (0, "No agent knows 'Marco Bianchi'.\n")
    empty = cli("--library", sample_root, "find", "")
    assert empty.code == 2
    assert_one_line_error(empty.err)


def test_private_rows_need_private(cli: Any, sample_root: Path) -> None:
    # library/agents/claude-code.l5.yaml: the entity 'dotfiles' and its 2026-11-08 session are
    # 'visibility: private'; codex's 'Marco Bianchi' is private too.
    assert cli("--library", sample_root, "find", "dotfiles").out == "No agent knows 'dotfiles'.\n"
    shown = cli("--library", sample_root, "find", "dotfiles", "--private").out.splitlines()
    assert shown == [
        "dotfiles [project]",
        "  claude-code  Ada's personal shell, editor and tmux configuration, managed with "
        "chezmoi.",
    ]
    marco = cli("--library", sample_root, "find", "Marco Bianchi", "--access-level", "private")
    assert marco.out.splitlines()[0] == "Marco Bianchi [person]"

    team = cli("--library", sample_root, "recent", "--since", "2026-11-01", "--limit", "100")
    assert "move my zsh config to chezmoi" not in team.out
    private = cli("--library", sample_root, "recent", "--since", "2026-11-01", "--limit", "100",
                  "--private")  # fmt: skip
    assert "2026-11-08  claude-code" in private.out
    assert "move my zsh config to chezmoi" in private.out


def test_recent_table_and_paging(cli: Any, sample_root: Path) -> None:
    everything = cli("--library", sample_root, "recent", "--since", "2026-11-01", "--limit", "100",
                     "--json").json()  # fmt: skip
    assert everything["has_more"] is False
    assert everything["meta"]["since_applied"] == "2026-11-01"
    all_sessions = everything["sessions"]
    assert len(all_sessions) > 6
    dates = [s["date"] for s in all_sessions]
    assert dates == sorted(dates, reverse=True) and min(dates) >= "2026-11-01"

    first = cli("--library", sample_root, "recent", "--since", "2026-11-01", "--limit", "3")
    assert first.code == 0
    lines = first.out.splitlines()
    assert lines[0].split() == ["DATE", "AGENT", "PROJECT", "WHAT"]
    assert [line.split()[:2] for line in lines[1:4]] == [
        [s["date"], s["agent"]] for s in all_sessions[:3]
    ]
    assert lines[4] == ""
    assert lines[5].startswith("More: bourdon recent --cursor ")
    cursor = lines[5].split()[-1]

    # Follow the cursors (without --since: the cursor remembers the window).
    paged = all_sessions[:3]
    for _ in range(20):
        page = cli("--library", sample_root, "recent", "--cursor", cursor, "--limit", "3",
                   "--json").json()  # fmt: skip
        paged += page["sessions"]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert paged == all_sessions


def test_recent_errors_and_empty_window(cli: Any, sample_root: Path) -> None:
    nothing = cli("--library", sample_root, "recent", "--since", "2030-01-01")
    assert (nothing.code, nothing.out) == (0, "No sessions since 2030-01-01.\n")
    for args, code in (
        (["--cursor", "garbage"], 2),
        (["--since", "yesterday"], 2),
        (["--agent", "nobody"], 4),
    ):
        result = cli("--library", sample_root, "recent", *args)
        assert result.code == code, args
        assert result.out == ""
        assert_one_line_error(result.err)
    one = cli("--library", sample_root, "recent", "--since", "2026-11-01", "--agent", "codex",
              "--json").json()  # fmt: skip
    assert {s["agent"] for s in one["sessions"]} == {"codex"}


def test_summary_of_a_project(cli: Any, sample_root: Path) -> None:
    result = cli("--library", sample_root, "summary", "ledgerline")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == "ledgerline: known to claude-code, codex, cursor, gemini-cli"
    assert lines[1].startswith("  claude-code  Python CLI for double-entry bookkeeping")
    sessions = lines.index("Sessions")
    assert lines[sessions + 1].split() == ["DATE", "AGENT", "WHAT"]
    assert lines[sessions + 2].startswith("2026-11-26  codex")
    workstreams = lines.index("Workstreams")
    assert workstreams > sessions
    assert lines[workstreams + 1].split() == ["NAME", "STATUS", "AGENTS"]
    assert lines[workstreams + 2].split() == ["OFX", "import", "active", "codex"]

    data = cli("--library", sample_root, "summary", "ledgerline", "--json").json()
    for key in ("project", "agents", "entities", "recent_sessions", "workstreams", "notes",
                "next_cursor", "has_more", "meta"):  # fmt: skip
        assert key in data, key
    assert data["agents"] == ["claude-code", "codex", "cursor", "gemini-cli"]
    assert data["recent_sessions"][0]["date"] == "2026-11-26"

    notes = cli("--library", sample_root, "summary", "bourdon", "--json").json()["notes"]
    assert any(n["text"].startswith("Run the slow reliability tests") for n in notes)
    limited = cli("--library", sample_root, "summary", "ledgerline", "--limit", "2", "--json")
    assert len(limited.json()["recent_sessions"]) == 2


def test_reads_report_a_broken_manifest_and_answer_from_the_others(
    cli: Any, sample_library: Library
) -> None:
    root = sample_library.root
    write(root / "agents" / "broken.l5.yaml", b"spec_version: [\n")
    result = cli("--library", root, "agents")
    assert result.code == 0
    assert [line.split()[0] for line in result.out.splitlines()[1:]] == SAMPLE_AGENTS
    assert result.err.startswith("bourdon: warning: agents/broken.l5.yaml skipped")
    data = cli("--library", root, "find", "ledgerline", "--json").json()
    assert any("broken.l5.yaml" in w for w in data["meta"]["warnings"])


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "error_code", "status"),
    [
        (["show", "nobody"], 4, "not_found", 404),
        (["history", "Not An Id"], 2, "bad_input", 400),
        (["explain", "ada", "nothex!!"], 2, "bad_input", 400),
        (["commit", "ada", "-f", "missing.yaml"], 2, "bad_input", 400),
        (["staging", "promote", "ada"], 4, "not_found", 404),
        (["find", ""], 2, "bad_input", 400),
    ],
)
def test_every_error_is_one_line_on_stderr_and_json_on_stdout_with_json(
    cli: Any, root: Path, args: list[str], code: int, error_code: str, status: int
) -> None:
    plain = cli("--library", root, *args)
    assert plain.code == code
    assert plain.out == ""
    assert_one_line_error(plain.err)
    as_json = cli("--library", root, *args, "--json")
    assert as_json.code == code
    assert as_json.err == plain.err
    error = as_json.json()["error"]
    assert (error["code"], error["status"]) == (error_code, status)
    assert error["message"] == plain.err.removeprefix("bourdon: ").rstrip("\n")
    assert error["retryable"] is False


def test_an_internal_error_is_one_line_without_a_traceback(
    cli: Any, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(Library, "history", boom)
    result = cli("--library", root, "history", "ada")
    assert result.code == 1
    assert result.out == ""
    assert result.err == (
        "bourdon: internal error: RuntimeError: boom (set BOURDON_DEBUG=1 for details)\n"
    )
    monkeypatch.setenv("BOURDON_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        main(["--library", str(root), "history", "ada"])


def test_interrupted_is_exit_130(cli: Any, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupt(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(Library, "history", interrupt)
    result = cli("--library", root, "history", "ada")
    assert (result.code, result.out, result.err) == (130, "", "bourdon: interrupted\n")


def test_exit_codes_are_real_in_a_subprocess(root: Path, tmp_path: Path) -> None:
    cases: list[tuple[list[str | Path], int]] = [
        (["--library", tmp_path / "nowhere", "history", "ada"], 7),
        (["--library", root, "show", "nobody"], 4),
        (["--library", root, "commit", "ada", "-f", tmp_path / "missing.yaml"], 2),
    ]
    for args, code in cases:
        done = bourdon(*args)
        assert done.returncode == code, (args, done.stderr)
        assert done.stdout == ""
        assert_one_line_error(done.stderr)
    usage = bourdon("--library", root, "history")  # AGENT missing: argparse's usage error
    assert usage.returncode == 2
    assert usage.stderr.startswith("usage: bourdon history")
    done = bourdon("--library", root, "commit", "ada", "-f", "-", "--json", input=b"agent: [\n")
    assert done.returncode == 3
    assert json.loads(done.stdout)["error"]["code"] == "bad_manifest"
    assert_one_line_error(done.stderr)
    assert "line 2" in done.stderr


# -- demo -------------------------------------------------------------------------------------


def test_demo_runs_every_step_and_ends_clean(tmp_path: Path) -> None:
    done = bourdon("demo")
    assert done.returncode == 0, done.stderr
    steps = [line for line in done.stdout.splitlines() if line.startswith("== ")]
    assert [s.split(".")[0] for s in steps] == ["== 1", "== 2", "== 3", "== 4", "== 5", "== 6"]
    assert "find_entity('Priya Ramen') -> 'Priya Raman' (fuzzy" in done.stdout
    assert "restored the exact bytes of" in done.stdout and ": True" in done.stdout
    assert "explain " in done.stdout and "written by demo in session demo-session-1 (merge)" in (
        done.stdout
    )
    assert "'git fsck' says: clean." in done.stdout
    assert not Path(os.environ["BOURDON_LIBRARY"]).exists()  # it does not touch the library


# -- crash recovery ---------------------------------------------------------------------------


def test_an_interrupted_write_is_recovered_and_reported(
    cli: Any, root: Path, two_versions: Versions
) -> None:
    target = root / "agents" / "ada.l5.yaml"
    target.write_bytes(two_versions["bytes2"] + b"# half-written\n")
    intent = {"paths": ["agents/ada.l5.yaml"], "head": head(root), "pid": 999_999}
    (root / ".bourdon" / "intent.json").write_text(json.dumps(intent))

    result = cli("--library", root, "history", "ada", "--limit", "1")
    assert result.code == 0
    assert result.err.startswith("bourdon: recovered from an interrupted write: ")
    assert "agents/ada.l5.yaml" in result.err
    assert target.read_bytes() == two_versions["bytes2"]  # back to HEAD
    assert not (root / ".bourdon" / "intent.json").exists()
    aside = list((root / ".bourdon" / "recovered").iterdir())
    assert len(aside) == 1 and aside[0].read_bytes().endswith(b"# half-written\n")

    again = cli("--library", root, "history", "ada", "--limit", "1")
    assert again.err == ""  # reported once


def test_the_read_commands_recover_too(cli: Any, root: Path, two_versions: Versions) -> None:
    target = root / "agents" / "ada.l5.yaml"
    target.write_bytes(b"garbage: [\n")
    intent = {"paths": ["agents/ada.l5.yaml"], "head": head(root), "pid": 999_999}
    (root / ".bourdon" / "intent.json").write_text(json.dumps(intent))
    result = cli("--library", root, "agents")
    assert result.code == 0
    assert "recovered from an interrupted write" in result.err
    assert "skipped" not in result.err
    assert result.out.splitlines()[1].split()[0] == "ada"
    assert target.read_bytes() == two_versions["bytes2"]
