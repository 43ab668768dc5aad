"""``bourdon completion bash|zsh|fish``: the scripts, run in the real shells.

bash: the script is sourced in a real ``bash -c`` and its completion function called with
``COMP_WORDS``/``COMP_CWORD`` set as bash sets them on a Tab. fish: the script is sourced and
``complete -C`` asked, as fish does on a Tab. zsh: the script must parse (``zsh -n``). A shell
that is not installed skips its own tests only.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from bourdon.cli import completion
from bourdon.cli.main import build_parser, main
from bourdon.cli.overview import commands


def script(shell: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["completion", shell]) == 0
    return capsys.readouterr().out


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """A folder shaped like a library, as far as completion looks: agents/*.l5.yaml."""
    agents = tmp_path / "lib" / "agents"
    agents.mkdir(parents=True)
    for name in ("claude-code", "codex", "gemini-cli"):
        (agents / f"{name}.l5.yaml").write_text("agent: {}\n")
    return tmp_path / "lib"


@pytest.fixture
def bash_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    path = tmp_path / "bourdon.bash"
    path.write_text(script("bash", capsys))
    return path


def complete_bash(path: Path, words: list[str], env: dict[str, str] | None = None) -> list[str]:
    """What Tab offers after ``words`` (the last one is the word being completed)."""
    array = " ".join(shlex.quote(w) for w in words)
    program = (
        f"source {shlex.quote(str(path))}\n"
        f"COMP_WORDS=({array}); COMP_CWORD={len(words) - 1}\n"
        "_bourdon\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "HOME": str(path.parent), **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return [line for line in done.stdout.splitlines() if line]


def test_bash_completes_the_commands(bash_script: Path) -> None:
    assert complete_bash(bash_script, ["bourdon", ""]) == list(commands(build_parser()))
    assert complete_bash(bash_script, ["bourdon", "ex"]) == ["explain", "export", "export-all"]
    assert complete_bash(bash_script, ["bourdon", "--json", "comp"]) == ["completion"]


def test_bash_completes_verbs_and_their_options(bash_script: Path) -> None:
    assert complete_bash(bash_script, ["bourdon", "peers", ""]) == [
        "list", "add", "remove", "check"
    ]  # fmt: skip
    assert complete_bash(bash_script, ["bourdon", "peers", "check", "--d"]) == ["--deadline"]
    offered = complete_bash(bash_script, ["bourdon", "history", "--"])
    assert {"--limit", "--json", "--library", "--help"} <= set(offered)
    assert "--deadline" not in offered


def test_bash_completes_closed_sets_and_skips_option_values(bash_script: Path) -> None:
    got = complete_bash(bash_script, ["bourdon", "find", "--access-level", ""])
    assert got == ["public", "team", "private"]
    assert complete_bash(bash_script, ["bourdon", "completion", "z"]) == ["zsh"]
    # the value of --deadline is not taken for a verb: still at 'peers check'
    assert complete_bash(bash_script, ["bourdon", "peers", "check", "--deadline", "3", "--j"]) == [
        "--json"
    ]


def test_bash_completes_agent_names_from_the_library(bash_script: Path, library: Path) -> None:
    named = complete_bash(bash_script, ["bourdon", "--library", str(library), "history", ""])
    assert named == ["claude-code", "codex", "gemini-cli"]
    after = complete_bash(bash_script, ["bourdon", "show", "--library", str(library), "c"])
    assert after == ["claude-code", "codex"]
    option = complete_bash(
        bash_script, ["bourdon", "recent", "--agent", "g"], env={"BOURDON_LIBRARY": str(library)}
    )
    assert option == ["gemini-cli"]
    assert complete_bash(bash_script, ["bourdon", "history", ""]) == []  # no library: nothing


def test_zsh_script_parses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed")
    path = tmp_path / "_bourdon"
    path.write_text(script("zsh", capsys))
    done = subprocess.run(["zsh", "-n", str(path)], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stderr) == (0, "")
    assert path.read_text().startswith("#compdef bourdon\n")


def test_zsh_script_offers_what_bash_offers(
    tmp_path: Path, library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The zsh function, run in real zsh; only the completion system's own builtins (compadd,
    _describe, _files, which need a live line editor) are replaced by printers."""
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed")
    path = tmp_path / "_bourdon"
    path.write_text(script("zsh", capsys))

    def offered(words: list[str]) -> list[str]:
        program = (
            "compdef() { :; }\n"
            'compadd() { [[ $1 == -a ]] && { print -l -- ${(P)2}; return }; shift; print -l -- "$@"; }\n'
            "_describe() { print -l -- ${(P)4}; }\n"
            '_files() { print "(files $*)"; }\n'
            f"source {shlex.quote(str(path))}\n"
            f"words=({' '.join(shlex.quote(w) for w in words)}); CURRENT={len(words)}\n"
            "_bourdon\n"
        )
        done = subprocess.run(
            ["zsh", "-f", "-c", program], capture_output=True, text=True, timeout=30
        )
        assert (done.returncode, done.stderr) == (0, "")
        return done.stdout.splitlines()

    verbs = offered(["bourdon", "peers", ""])
    assert [v.split(":")[0] for v in verbs] == ["list", "add", "remove", "check"]
    assert verbs[0] == "list:the configured peers"  # with its help, as zsh shows it
    assert offered(["bourdon", "--library", str(library), "history", ""]) == [
        "claude-code", "codex", "gemini-cli"
    ]  # fmt: skip
    assert offered(["bourdon", "agents", "--access-level", ""]) == ["public", "team", "private"]
    assert "--limit" in offered(["bourdon", "history", "--"])
    assert offered(["bourdon", "--library", ""]) == ["(files -/)"]


@pytest.fixture
def fish_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed")
    path = tmp_path / "bourdon.fish"
    path.write_text(script("fish", capsys))
    return path


def complete_fish(path: Path, line: str, library: Path | None = None) -> list[str]:
    program = f"source {shlex.quote(str(path))}; complete -C {shlex.quote(line)}"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(path.parent)}
    if library is not None:
        env["BOURDON_LIBRARY"] = str(library)
    done = subprocess.run(
        ["fish", "--no-config", "-c", program],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert (done.returncode, done.stderr) == (0, "")
    return [line.split("\t")[0] for line in done.stdout.splitlines()]


def test_fish_script_parses_and_completes(fish_script: Path, library: Path) -> None:
    done = subprocess.run(["fish", "-n", str(fish_script)], capture_output=True, timeout=30)
    assert done.returncode == 0
    assert complete_fish(fish_script, "bourdon pe") == ["peers"]
    assert sorted(complete_fish(fish_script, "bourdon peers ")) == [
        "add", "check", "list", "remove"
    ]  # fmt: skip
    assert "--deadline" in complete_fish(fish_script, "bourdon peers check --")
    assert complete_fish(fish_script, "bourdon agents --access-level ") == [
        "private", "public", "team"
    ]  # fmt: skip
    assert complete_fish(fish_script, "bourdon history ", library) == [
        "claude-code", "codex", "gemini-cli"
    ]  # fmt: skip


def test_every_command_and_option_is_in_every_script(capsys: pytest.CaptureFixture[str]) -> None:
    nodes = completion.tree(build_parser())
    for shell in completion.SHELLS:
        text = script(shell, capsys)
        for node in nodes:
            for name in node.subs:
                assert name in text, (shell, name)
            for option in node.options:
                for string in option.strings:
                    assert string.lstrip("-") in text, (shell, node.path, string)
