"""Installed hooks and the printed MCP client config call *this* bourdon on *the chosen* library
(issue 13, item 15).

An agent runs its hooks with its own PATH, where ``bourdon`` is often missing (after
``make demo`` it lives in a virtualenv), and without ``--library``: a hook that says only
``bourdon hook export X`` fails quietly or exports into another library. So ``hooks install``
writes the absolute path of the running ``bourdon`` and ``--library <absolute path>`` into each
command, upgrades an install an older bourdon made with the bare command, and a second run
changes nothing; uninstall still restores the user's file. What is checked here runs the real
console script and then the installed command itself, through a shell whose PATH has no
bourdon.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from bourdon.ingest.hookfiles import running_bourdon
from bourdon.testing import make_library
from bourdon.testing.serving import child_env

pytestmark = pytest.mark.anyio

SCRIPT = Path(sys.executable).parent / "bourdon"  # this install's console script
BARE_PATH = "/usr/bin:/bin"  # an agent's PATH: no virtualenv on it
USERS = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "~/bin/notify"}]}]}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def run(home: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        capture_output=True, text=True, timeout=120, check=False, env=child_env(home),
    )  # fmt: skip


def this_checkout() -> dict[str, str]:
    """PYTHONPATH, when the tests run a checkout that the console script would not import."""
    path = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": path} if path else {}


def handlers(path: Path) -> list[tuple[str, str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        (event, h["command"])
        for event, groups in data["hooks"].items()
        for group in groups
        for h in group["hooks"]
    ]


def ours(path: Path) -> list[tuple[str, str]]:
    return [(e, c) for e, c in handlers(path) if " hook " in f" {c} "]


def test_the_console_script_is_the_running_bourdon() -> None:
    assert running_bourdon(str(SCRIPT), sys.executable) == [str(SCRIPT)]
    assert running_bourdon("/x/bourdon/__main__.py", sys.executable) == [
        sys.executable, "-m", "bourdon",
    ]  # fmt: skip


def test_installed_hooks_name_this_bourdon_and_the_chosen_library(tmp_path: Path) -> None:
    assert SCRIPT.is_file()
    root = tmp_path / "lib"
    make_library(root).close()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(USERS, indent=2) + "\n", encoding="utf-8")
    done = run(tmp_path / "home", "hooks", "install", "claude-code", "--settings", settings,
               "--library", root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    prefix = shlex.join([str(SCRIPT), "--library", str(root)])
    assert sorted(ours(settings)) == [
        ("SessionEnd", f"{prefix} hook export claude-code"),
        ("Stop", f"{prefix} hook export claude-code"),
        ("UserPromptSubmit", f"{prefix} hook user-prompt --agent claude-code"),
    ]
    # The agent runs the command through a shell, with its own PATH and no BOURDON_LIBRARY.
    prompt = next(c for e, c in ours(settings) if e == "UserPromptSubmit")
    env = {"PATH": BARE_PATH, "HOME": str(tmp_path / "agent-home")}
    said = subprocess.run(
        ["/bin/sh", "-c", prompt], input=json.dumps({"prompt": "what is ledgerline?"}),
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert said.returncode == 0 and said.stderr == "", said.stderr
    context = json.loads(said.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "ledgerline" in context


def test_a_second_install_changes_nothing_and_an_old_bare_install_is_upgraded(
    tmp_path: Path,
) -> None:
    root = tmp_path / "lib"
    make_library(root).close()
    settings = tmp_path / "settings.json"
    old: dict[str, Any] = json.loads(json.dumps(USERS))
    export = {"type": "command", "command": "bourdon hook export claude-code", "timeout": 120}
    prompt = {"type": "command", "command": "bourdon hook user-prompt --agent claude-code"}
    old["hooks"]["Stop"].append({"hooks": [{**export, "async": True}]})
    old["hooks"]["UserPromptSubmit"] = [{"hooks": [{**prompt, "timeout": 10}]}]
    settings.write_text(json.dumps(old, indent=2) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    args = ("hooks", "install", "claude-code", "--settings", settings, "--library", root)
    assert run(home, *args).returncode == 0
    upgraded = settings.read_bytes()
    found = ours(settings)
    assert len(found) == 3 and all(c.startswith(str(SCRIPT)) for _, c in found), found
    assert sorted(e for e, _ in found) == ["SessionEnd", "Stop", "UserPromptSubmit"]

    again = run(home, *args, "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["changed"] is False
    assert settings.read_bytes() == upgraded
    status = run(home, "hooks", "status", "claude-code", "--settings", settings, "--library", root,
                 "--json")  # fmt: skip
    assert json.loads(status.stdout)["hooks"][0]["state"] == "installed"

    gone = run(home, "hooks", "uninstall", "claude-code", "--settings", settings)
    assert gone.returncode == 0, gone.stderr
    assert ours(settings) == [] and ("Stop", "~/bin/notify") in handlers(settings)


async def test_the_printed_client_config_starts_this_bourdon_without_path(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    make_library(root).close()
    done = subprocess.run(
        [str(SCRIPT), "serve", "--library", str(root)], input="", capture_output=True,
        text=True, timeout=120, check=False, env=child_env(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if "MCP client config: " in x)
    config = json.loads(line.split("MCP client config: ", 1)[1])
    assert config == {"command": str(SCRIPT), "args": ["serve", "--library", str(root)]}
    env = {"PATH": BARE_PATH, "HOME": str(tmp_path), "BOURDON_HOME": str(tmp_path / ".b")}
    params = StdioServerParameters(command=config["command"], args=config["args"], env=env)
    async with Client(params) as client:
        found = await client.call_tool("find_entity", {"name": "bourdon", "access_level": "team"})
    assert found.structured_content and found.structured_content["matches"]


@pytest.mark.parametrize(
    ("agent", "event", "expected"),
    [
        ("gemini-cli", {"hook_event_name": "BeforeAgent"}, "BeforeAgent"),
        ("gemini-cli", {}, "BeforeAgent"),  # no name in the input: the agent's own event
        ("codex", {"hook_event_name": "UserPromptSubmit", "turn_id": "t-1"}, "UserPromptSubmit"),
    ],
)
def test_the_prompt_hooks_answer_names_the_event_it_was_called_for(
    agent: str, event: dict[str, str], expected: str, tmp_path: Path
) -> None:
    """Gemini CLI reads ``hookSpecificOutput`` only under its own event name, BeforeAgent."""
    root = tmp_path / "lib"
    make_library(root).close()
    settings = tmp_path / "settings.json"
    done = run(tmp_path / "home", "hooks", "install", agent, "--settings", settings,
               "--library", root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    prompt = next(c for _, c in ours(settings) if "user-prompt" in c)
    said = subprocess.run(
        ["/bin/sh", "-c", prompt],
        input=json.dumps({"session_id": "s-1", "prompt": "what is ledgerline?", **event}),
        capture_output=True, text=True, timeout=120, check=False,
        env={"PATH": BARE_PATH, "HOME": str(tmp_path / "agent-home"), **this_checkout()},
    )  # fmt: skip
    assert said.returncode == 0 and said.stderr == "", said.stderr
    answer = json.loads(said.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == expected and "ledgerline" in answer["additionalContext"]
