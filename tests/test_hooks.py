"""``bourdon hooks install|uninstall|status``: idempotent, reversible, kind to the user's file.

Acceptance (issue: readers and export hooks): for each of the four agents, installing twice
gives the same settings file as installing once; uninstall restores it; the settings of a user
who already had other hooks keep them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bourdon.cli.main import build_parser, main
from bourdon.errors import InputError
from bourdon.ingest.hookfiles import AGENTS, TARGETS, fragment, hooks_dir, settings_path
from bourdon.ingest.hooks import INSTALLED, NOT_INSTALLED, PARTIAL, install, status, uninstall

ROOT = Path(__file__).resolve().parent.parent

# A user's settings file per agent, with hooks of their own and keys bourdon knows nothing of.
USER_SETTINGS: dict[str, dict[str, Any]] = {
    "claude-code": {
        "model": "claude-sonnet-4-6",
        "permissions": {"allow": ["Bash(git status)"], "deny": []},
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": "~/bin/notify-done", "timeout": 5}]}
            ],
            "PostToolUse": [
                {
                    "matcher": "Write|Edit",
                    "hooks": [{"type": "command", "command": "~/bin/track-edit"}],
                }
            ],
            "UserPromptSubmit": [],
        },
        "someFutureKey": {"nested": [1, 2, {"x": None}]},
    },
    "codex": {
        "hooks": {
            "SessionStart": [
                {"matcher": "startup|resume", "hooks": [{"type": "command", "command": "echo hi"}]}
            ]
        },
        "x-note": "kept",
    },
    "cursor": {
        "version": 1,
        "hooks": {
            "afterFileEdit": [{"command": "./hooks/format.sh"}],
            "stop": [{"command": "./hooks/audit.sh", "timeout": 3}],
        },
    },
    "gemini-cli": {
        "theme": "GitHub",
        "general": {"vimMode": True},
        "hooks": {
            "BeforeTool": [
                {
                    "matcher": "write_file",
                    "hooks": [{"type": "command", "command": "lint.sh", "timeout": 30000}],
                }
            ]
        },
    },
    "cascade": {
        "hooks": {
            "pre_run_command": [{"command": "python3 ~/guard.py", "show_output": True}],
            "post_cascade_response": [{"command": "~/bin/log-response", "show_output": False}],
        }
    },
    "qwen-code": {
        "model": {"name": "qwen3-coder-plus"},
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "run_shell_command",
                    "hooks": [{"type": "command", "command": "check.sh", "timeout": 5000}],
                }
            ]
        },
    },
    "copilot-cli": {
        "version": 1,
        "hooks": {
            "preToolUse": [{"type": "command", "bash": "./audit.sh", "timeoutSec": 10}],
        },
    },
    "goose": {
        "hooks": {
            "AfterFileEdit": [
                {"matcher": "\\.py$", "hooks": [{"type": "command", "command": "ruff format"}]}
            ],
        },
    },
}


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "bourdon-home"


def write(path: Path, data: Any, indent: int = 2, ascii: bool = True) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent, ensure_ascii=ascii) + "\n", encoding="utf-8")
    return path.read_bytes()


def commands(agent: str) -> set[str]:
    spec = TARGETS[agent]
    found = set()
    for event, groups in fragment(agent)["hooks"].items():
        for group in groups:
            for handler in [group] if spec.flat else group["hooks"]:
                found.add(f"{event}: {handler[spec.command_key]}")
    return found


def present(data: dict[str, Any], agent: str) -> set[str]:
    spec = TARGETS[agent]
    found = set()
    for event, groups in data.get("hooks", {}).items():
        for group in groups:
            for handler in [group] if spec.flat else group.get("hooks", []):
                if handler.get(spec.command_key, "").startswith("bourdon "):
                    found.add(f"{event}: {handler[spec.command_key]}")
    return found


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.bourdon-backup-*"))


# -- the shipped hook files ---------------------------------------------------------------


# The agents whose hook can hand turn-start context to the model, and the event it runs on.
PROMPT_HOOKS = {
    "claude-code": "UserPromptSubmit",
    "codex": "UserPromptSubmit",
    "gemini-cli": "BeforeAgent",
}


@pytest.mark.parametrize("agent", AGENTS)
def test_the_hook_files_hold_no_logic_and_call_commands_that_exist(agent: str) -> None:
    path = hooks_dir() / TARGETS[agent].fragment
    assert path.is_relative_to(ROOT / "hooks")
    wanted = commands(agent)
    assert any(f"bourdon hook export {agent}" in c for c in wanted)
    prompt = {c for c in wanted if "user-prompt" in c}
    if agent in PROMPT_HOOKS:
        assert prompt == {f"{PROMPT_HOOKS[agent]}: bourdon hook user-prompt --agent {agent}"}
    else:  # a prompt hook whose answer the agent ignores would only cost a start per prompt
        assert prompt == set()
    parser = build_parser()
    for item in wanted:
        command = item.split(": ", 1)[1]
        words = command.split()
        assert words[0] == "bourdon" and words[1] == "hook"  # nothing but a bourdon call
        args = parser.parse_args(words[1:])
        assert callable(args.func)


# Each agent's hook file as its documentation describes it (hooks/README.md gives the sources).
SHIPPED: dict[str, dict[str, Any]] = {
    "claude-code": {
        "hooks": {
            "SessionEnd": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "bourdon hook export claude-code",
                            "timeout": 120,
                        }
                    ]
                }
            ],
            "Stop": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "bourdon hook export claude-code",
                            "timeout": 120,
                            "async": True,
                        }
                    ]
                }
            ],
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "bourdon hook user-prompt --agent claude-code",
                            "timeout": 10,
                        }
                    ]
                }
            ],
        }
    },
    "codex": {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "bourdon hook export codex",
                            "timeout": 120,
                            "statusMessage": "bourdon: exporting memory",
                        }
                    ]
                }
            ],
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "bourdon hook user-prompt --agent codex",
                            "timeout": 10,
                        }
                    ]
                }
            ],
        }
    },
    # Cursor: flat entries under "version": 1; the export only (its prompt hook adds nothing).
    "cursor": {
        "version": 1,
        "hooks": {"stop": [{"command": "bourdon hook export cursor", "timeout": 120}]},
    },
    # Gemini CLI waits for AfterAgent hooks at every turn; SessionEnd it does not wait for.
    "gemini-cli": {
        "hooks": {
            "SessionEnd": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "name": "bourdon-export",
                            "command": "bourdon hook export gemini-cli",
                            "timeout": 120000,
                        }
                    ]
                }
            ],
            "BeforeAgent": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "name": "bourdon-recognition",
                            "command": "bourdon hook user-prompt --agent gemini-cli",
                            "timeout": 10000,
                        }
                    ]
                }
            ],
        }
    },
    # Windsurf's Cascade: flat entries, no version, show_output off.
    "cascade": {
        "hooks": {
            "post_cascade_response": [
                {"command": "bourdon hook export cascade", "show_output": False}
            ]
        }
    },
    # Qwen Code: Claude's shape, timeouts in milliseconds, async runs in the background.
    "qwen-code": {
        "hooks": {
            "SessionEnd": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "name": "bourdon-export",
                            "command": "bourdon hook export qwen-code",
                            "timeout": 120000,
                        }
                    ]
                }
            ],
            "Stop": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "name": "bourdon-export",
                            "command": "bourdon hook export qwen-code",
                            "timeout": 120000,
                            "async": True,
                        }
                    ]
                }
            ],
        }
    },
    # goose: a plugin of bourdon's own under ~/.agents/plugins/bourdon/, Claude's shape, seconds;
    # SessionEnd only (Stop runs, and may block, at every turn) [src block/goose:
    # documentation/docs/guides/context-engineering/hooks.md].
    "goose": {
        "hooks": {
            "SessionEnd": [
                {
                    "hooks": [
                        {
                            "type": "command",
                            "command": "bourdon hook export goose",
                            "timeout": 120,
                        }
                    ]
                }
            ]
        }
    },
    # Copilot CLI: a file of bourdon's own, version 1, the command under "bash", seconds.
    "copilot-cli": {
        "version": 1,
        "hooks": {
            "sessionEnd": [
                {"type": "command", "bash": "bourdon hook export copilot-cli", "timeoutSec": 120}
            ]
        },
    },
}


@pytest.mark.parametrize("agent", sorted(SHIPPED))
def test_the_hook_files_use_each_agents_own_shape_and_events(agent: str) -> None:
    assert fragment(agent) == SHIPPED[agent]
    assert (ROOT / "hooks" / "README.md").is_file()


def test_every_agent_with_hooks_has_its_file_checked() -> None:
    assert set(AGENTS) == set(SHIPPED)


def test_default_settings_paths(tmp_path: Path) -> None:
    assert settings_path("claude-code", tmp_path) == tmp_path / ".claude" / "settings.json"
    assert settings_path("codex", tmp_path) == tmp_path / ".codex" / "hooks.json"
    assert settings_path("cursor", tmp_path) == tmp_path / ".cursor" / "hooks.json"
    assert settings_path("gemini-cli", tmp_path) == tmp_path / ".gemini" / "settings.json"
    assert settings_path("cascade", tmp_path) == tmp_path / ".codeium" / "windsurf" / "hooks.json"
    assert settings_path("qwen-code", tmp_path) == tmp_path / ".qwen" / "settings.json"
    assert (
        settings_path("copilot-cli", tmp_path) == tmp_path / ".copilot" / "hooks" / "bourdon.json"
    )
    assert settings_path("goose", tmp_path) == (
        tmp_path / ".agents" / "plugins" / "bourdon" / "hooks" / "hooks.json"
    )
    assert settings_path("codex", tmp_path, tmp_path / "x.json") == tmp_path / "x.json"


def test_settings_paths_in_the_folders_the_user_moved(tmp_path: Path) -> None:
    moved = {
        "CLAUDE_CONFIG_DIR": f"{tmp_path}/work-claude,{tmp_path}/other-claude",  # the first
        "CODEX_HOME": f"{tmp_path}/codex",
        "COPILOT_HOME": f"{tmp_path}/copilot",
        "XDG_CONFIG_HOME": f"{tmp_path}/xdg",  # moves none of the hook files
    }
    home = tmp_path / "home"
    assert settings_path("claude-code", home, env=moved) == tmp_path / "work-claude/settings.json"
    assert settings_path("codex", home, env=moved) == tmp_path / "codex" / "hooks.json"
    assert settings_path("copilot-cli", home, env=moved) == tmp_path / "copilot/hooks/bourdon.json"
    assert settings_path("cursor", home, env=moved) == home / ".cursor" / "hooks.json"
    assert settings_path("gemini-cli", home, env=moved) == home / ".gemini" / "settings.json"
    assert settings_path("codex", home, tmp_path / "x.json", moved) == tmp_path / "x.json"
    assert settings_path("codex", home, env={"CODEX_HOME": ""}) == home / ".codex" / "hooks.json"


def test_goose_gets_a_plugin_of_bourdons_own_and_uninstall_takes_all_of_it_away(
    tmp_path: Path,
) -> None:
    home, state = tmp_path / "home", tmp_path / "state"
    (home / ".config" / "goose").mkdir(parents=True)
    path = settings_path("goose", home)
    change = install("goose", path, state_dir=state)
    plugin = home / ".agents" / "plugins" / "bourdon"
    # goose finds a plugin by its manifest: a name, a version, a description.
    manifest = json.loads((plugin / "plugin.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "bourdon" and manifest["version"] and manifest["description"]
    assert plugin / "plugin.json" in change.created_files
    assert json.loads(path.read_text(encoding="utf-8")) == SHIPPED["goose"]
    again = install("goose", path, state_dir=state)
    assert not again.changed and again.created_files == []
    uninstall("goose", path, state_dir=state)
    assert not (home / ".agents").exists(), "the plugin folder bourdon made is gone"


# -- the acceptance, for each agent --------------------------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
def test_install_twice_is_install_once_and_uninstall_restores_the_users_file(
    agent: str, tmp_path: Path, state: Path
) -> None:
    path = tmp_path / "settings.json"
    original = write(path, USER_SETTINGS[agent])
    first = install(agent, path, state_dir=state)
    assert first.changed and set(first.added) == commands(agent)
    once = path.read_bytes()
    data = json.loads(once)
    assert present(data, agent) == commands(agent)
    assert [b.read_bytes() for b in backups(path)] == [original]

    again = install(agent, path, state_dir=state)
    assert not again.changed and path.read_bytes() == once
    assert len(backups(path)) == 1  # only an install that changes something backs up
    assert status(agent, path).state == INSTALLED

    # The user's own hooks and unknown keys are all still there, untouched.
    for key, value in USER_SETTINGS[agent].items():
        if key != "hooks":
            assert data[key] == value
    for event, groups in USER_SETTINGS[agent]["hooks"].items():
        for group in groups:
            assert group in data["hooks"][event]

    gone = uninstall(agent, path, state_dir=state)
    assert gone.changed and set(gone.removed) == commands(agent)
    assert json.loads(path.read_bytes()) == USER_SETTINGS[agent]
    assert path.read_bytes() == original  # same indentation too
    assert status(agent, path).state == NOT_INSTALLED
    assert not uninstall(agent, path, state_dir=state).changed


@pytest.mark.parametrize("agent", AGENTS)
def test_install_into_a_missing_file_creates_it_and_uninstall_removes_it(
    agent: str, tmp_path: Path, state: Path
) -> None:
    path = settings_path(agent, tmp_path / "home")
    assert status(agent, path).state == NOT_INSTALLED and not status(agent, path).exists
    change = install(agent, path, state_dir=state)
    assert change.changed and change.before is None and change.backup is None
    assert json.loads(path.read_text(encoding="utf-8")) == fragment(agent)
    assert install(agent, path, state_dir=state).changed is False
    uninstall(agent, path, state_dir=state)
    assert not path.exists() and backups(path) == []
    assert not (state / "hooks-installed.json").exists()


@pytest.mark.parametrize("agent", AGENTS)
def test_dry_runs_write_nothing(agent: str, tmp_path: Path, state: Path) -> None:
    path = tmp_path / "settings.json"
    original = write(path, USER_SETTINGS[agent])
    change = install(agent, path, state_dir=state, dry_run=True)
    assert change.changed and change.dry_run and "bourdon hook export" in change.diff()
    assert path.read_bytes() == original and backups(path) == [] and not state.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
    install(agent, path, state_dir=state)
    installed = path.read_bytes()
    change = uninstall(agent, path, state_dir=state, dry_run=True)
    assert change.changed and path.read_bytes() == installed
    missing = tmp_path / "new" / "settings.json"
    assert install(agent, missing, state_dir=state, dry_run=True).changed
    assert not missing.parent.exists()


@pytest.mark.parametrize("agent", [a for a in AGENTS if len(commands(a)) > 1])
def test_partial_installs_are_reported_and_completed(
    agent: str, tmp_path: Path, state: Path
) -> None:
    path = tmp_path / "settings.json"
    write(path, USER_SETTINGS[agent])
    install(agent, path, state_dir=state)
    data = json.loads(path.read_text(encoding="utf-8"))
    first_event = next(iter(fragment(agent)["hooks"]))
    data["hooks"][first_event] = [
        g for g in data["hooks"][first_event] if "bourdon" not in json.dumps(g)
    ]
    write(path, data)
    found = status(agent, path)
    assert found.state == PARTIAL and found.missing and found.present
    change = install(agent, path, state_dir=state)
    assert change.changed and all(a.startswith(first_event) for a in change.added)
    assert status(agent, path).state == INSTALLED
    uninstall(agent, path, state_dir=state)
    assert json.loads(path.read_text(encoding="utf-8")) == USER_SETTINGS[agent]


# -- files bourdon must not break ----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{\n  // my settings\n  "theme": "dark"\n}\n',
        '{"theme": "dark",}\n',
        '{"hooks": {}, "hooks": {"Stop": []}}\n',
        "[1, 2]\n",
        '{"hooks": ["not", "an", "object"]}\n',
        '{"hooks": {"Stop": {"not": "a list"}}}\n',
    ],
    ids=[
        "comment",
        "trailing-comma",
        "duplicate-key",
        "not-an-object",
        "hooks-list",
        "event-object",
    ],
)
@pytest.mark.parametrize("agent", ["claude-code", "gemini-cli"])
def test_a_file_that_is_not_plain_json_is_refused_and_left_alone(
    agent: str, text: str, tmp_path: Path, state: Path
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text, encoding="utf-8")
    for action in (install, uninstall):
        with pytest.raises(InputError, match=r"changed nothing|not valid JSON"):
            action(agent, path, state_dir=state)
    with pytest.raises(InputError):
        status(agent, path)
    assert path.read_text(encoding="utf-8") == text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


def test_a_cursor_file_of_another_version_is_refused(tmp_path: Path, state: Path) -> None:
    path = tmp_path / "hooks.json"
    original = write(path, {"version": 2, "hooks": {}})
    with pytest.raises(InputError, match="version 2"):
        install("cursor", path, state_dir=state)
    assert path.read_bytes() == original


@pytest.mark.parametrize("ascii", [True, False], ids=["escaped", "utf-8"])
def test_indentation_and_unicode_are_kept(tmp_path: Path, state: Path, ascii: bool) -> None:
    path = tmp_path / "settings.json"
    original = write(path, {"statusLine": "café ☕", "hooks": {}}, indent=4, ascii=ascii)
    install("claude-code", path, state_dir=state)
    text = path.read_text(encoding="utf-8")
    assert '\n    "statusLine": ' in text and '\n        "SessionEnd"' in text
    assert ("caf\\u00e9" in text) is ascii
    uninstall("claude-code", path, state_dir=state)
    assert path.read_bytes() == original


def test_empty_containers_the_user_had_are_kept_and_those_install_made_go(
    tmp_path: Path, state: Path
) -> None:
    path = tmp_path / "settings.json"
    mine = {"hooks": {"Stop": []}}
    original = write(path, mine)
    install("claude-code", path, state_dir=state)
    uninstall("claude-code", path, state_dir=state)
    assert path.read_bytes() == original


def test_uninstall_keeps_a_users_handler_that_shares_a_group_with_bourdons(
    tmp_path: Path, state: Path
) -> None:
    path = tmp_path / "settings.json"
    shared = {
        "hooks": {
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "~/bin/mine"},
                        {"type": "command", "command": "bourdon hook export claude-code"},
                    ]
                }
            ]
        }
    }
    write(path, shared)
    assert status("claude-code", path).state == PARTIAL
    uninstall("claude-code", path, state_dir=state)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "~/bin/mine"}]}]}}


def test_a_symlinked_settings_file_stays_a_symlink(tmp_path: Path, state: Path) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    original = write(real, USER_SETTINGS["claude-code"])
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)
    install("claude-code", link, state_dir=state)
    assert link.is_symlink() and status("claude-code", real).state == INSTALLED
    uninstall("claude-code", link, state_dir=state)
    assert link.is_symlink() and real.read_bytes() == original


def test_uninstall_without_the_install_record_still_removes_only_bourdons_entries(
    tmp_path: Path, state: Path
) -> None:
    path = tmp_path / "settings.json"
    write(path, USER_SETTINGS["codex"])
    install("codex", path, state_dir=state)
    (state / "hooks-installed.json").unlink()
    uninstall("codex", path, state_dir=state)
    assert json.loads(path.read_text(encoding="utf-8")) == USER_SETTINGS["codex"]


# -- the CLI ------------------------------------------------------------------------------

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Iterator[Run]:
    def run(*args: object) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    yield run


def test_cli_install_status_and_uninstall(cli: Run, tmp_path: Path, isolated_home: Path) -> None:
    path = tmp_path / "settings.json"
    original = write(path, USER_SETTINGS["gemini-cli"])
    code, out, _ = cli("hooks", "install", "gemini-cli", "--settings", path, "--dry-run")
    assert code == 0 and out.startswith(f"Dry run: 'install' would change {path}")
    library = os.environ["BOURDON_LIBRARY"]  # the chosen library, carried by each command
    assert f'-m bourdon --library {library} hook export gemini-cli",' in out
    assert path.read_bytes() == original
    code, out, _ = cli("hooks", "install", "gemini-cli", "--settings", path)
    assert code == 0 and out.startswith(f"Installed bourdon's hooks for gemini-cli into {path}:")
    assert "backup of the previous file" in out
    code, out, _ = cli("hooks", "install", "gemini-cli", "--settings", path)
    assert "already installed" in out
    code, out, _ = cli("hooks", "status", "gemini-cli", "--settings", path, "--json")
    assert json.loads(out)["hooks"][0]["state"] == "installed"
    code, out, _ = cli("hooks", "status")
    lines = out.splitlines()
    assert lines[0].split() == ["AGENT", "STATE", "SETTINGS"] and len(lines) == 1 + len(AGENTS)
    assert "not installed" in out  # the default places under the test's home are empty
    code, out, _ = cli("hooks", "uninstall", "gemini-cli", "--settings", path, "--json")
    data = json.loads(out)
    assert code == 0 and data["changed"] and data["action"] == "uninstall"
    assert path.read_bytes() == original


def test_cli_install_into_the_default_place_under_home(cli: Run, isolated_home: Path) -> None:
    (isolated_home / ".claude").mkdir()  # Claude Code is installed
    code, out, _ = cli("hooks", "install", "claude-code")
    target = isolated_home / ".claude" / "settings.json"
    assert code == 0 and target.exists() and str(target) in out
    assert (isolated_home / ".bourdon" / "hooks-installed.json").exists()
    code, out, _ = cli("hooks", "uninstall", "claude-code")
    assert code == 0 and not target.exists() and "was removed" in out


def test_cli_errors_are_one_line(cli: Run, tmp_path: Path) -> None:
    code, out, err = cli("hooks", "install", "windsurf")
    assert code == 4 and "bourdon has no hooks for 'windsurf'" in err and out == ""
    path = tmp_path / "settings.json"
    path.write_text("{ // no\n}", encoding="utf-8")
    code, out, err = cli("hooks", "install", "cursor", "--settings", path)
    assert code == 2 and "is not valid JSON (line 1, column 3)" in err
    assert err.count("\n") == 1
    code, _, err = cli("hooks", "status", "--settings", path)
    assert code == 1 and "--settings needs an AGENT" in err


@pytest.mark.parametrize("agent", AGENTS)
def test_no_settings_file_is_made_for_an_agent_that_is_not_installed(
    agent: str, cli: Run, isolated_home: Path
) -> None:
    target = settings_path(agent, isolated_home)
    code, out, err = cli("hooks", "install", agent)
    assert code == 4 and out == "" and "is not installed here" in err and "--force" in err
    assert not target.exists() and sorted(p.name for p in isolated_home.iterdir()) == []
    code, out, _ = cli("hooks", "install", agent, "--force")  # the user insists: it is made
    assert code == 0 and target.is_file()
    code, out, _ = cli("hooks", "uninstall", agent)
    assert code == 0 and not target.exists()


def test_installing_codex_hooks_says_they_must_be_trusted_in_codex(
    cli: Run, isolated_home: Path
) -> None:
    (isolated_home / ".codex").mkdir()  # Codex is installed, with no hooks yet
    code, out, _ = cli("hooks", "install", "codex")
    assert code == 0 and (isolated_home / ".codex" / "hooks.json").is_file()
    assert "type /hooks" in out and "trust them" in out
    code, out, _ = cli("hooks", "install", "codex", "--json")
    assert json.loads(out)["changed"] is False  # nothing changed, nothing to trust again
    code, out, _ = cli("hooks", "install", "codex", "--json", "--library", isolated_home / "b")
    data = json.loads(out)
    assert data["changed"] and "/hooks" in data["notice"]  # a changed hook is trusted anew
    code, out, _ = cli("hooks", "install", "claude-code", "--force")
    assert code == 0 and "/hooks" not in out


# What an older bourdon installed: hooks on events this one no longer uses.
OLD_CURSOR = {
    "version": 1,
    "hooks": {
        "stop": [{"command": "bourdon hook export cursor", "timeout": 120}],
        "beforeSubmitPrompt": [
            {"command": "bourdon hook user-prompt --agent cursor", "timeout": 10}
        ],
    },
}
OLD_GEMINI = {
    "hooks": {
        "AfterAgent": [
            {"hooks": [{"type": "command", "name": "bourdon-export",
                        "command": "bourdon hook export gemini-cli", "timeout": 120000}]}
        ],
        "SessionEnd": [
            {"hooks": [{"type": "command", "name": "bourdon-export",
                        "command": "bourdon hook export gemini-cli", "timeout": 120000}]}
        ],
        "BeforeAgent": [
            {"hooks": [{"type": "command", "name": "bourdon-recognition",
                        "command": "bourdon hook user-prompt --agent gemini-cli",
                        "timeout": 10000}]}
        ],
    }
}  # fmt: skip


@pytest.mark.parametrize(
    ("agent", "old", "gone"),
    [
        ("cursor", OLD_CURSOR, "beforeSubmitPrompt"),
        ("gemini-cli", OLD_GEMINI, "AfterAgent"),
    ],
)
def test_an_upgrade_takes_out_the_hooks_bourdon_no_longer_installs(
    agent: str, old: dict[str, Any], gone: str, tmp_path: Path, state: Path
) -> None:
    path = tmp_path / "settings.json"
    write(path, old)  # the older bourdon created the file, and remembered so
    made = [["hooks"], *(["hooks", event] for event in old["hooks"])]
    made += [["version"]] if "version" in old else []
    record = {"agent": agent, "file_created": True, "created": made, "backup": None}
    write(state / "hooks-installed.json", {str(path.absolute()): record})
    change = install(agent, path, state_dir=state)
    assert (
        change.changed and change.removed and all(r.startswith(f"{gone}: ") for r in change.removed)
    )
    data = json.loads(path.read_text(encoding="utf-8"))
    assert gone not in data["hooks"]  # install had made the list: it goes with its last entry
    assert present(data, agent) == commands(agent)
    assert not install(agent, path, state_dir=state).changed
    uninstall(agent, path, state_dir=state)
    assert not path.exists()  # the file was install's: it goes


def test_an_upgrade_without_the_install_record_takes_out_the_old_hooks_too(
    tmp_path: Path, state: Path
) -> None:
    path = tmp_path / "settings.json"
    write(path, {"theme": "GitHub", **OLD_GEMINI})
    change = install("gemini-cli", path, state_dir=state)
    assert change.removed == ["AfterAgent: bourdon hook export gemini-cli"]
    assert "AfterAgent" not in json.loads(path.read_text(encoding="utf-8"))["hooks"]


def test_an_upgrade_keeps_the_users_own_hooks_on_a_retired_event(
    tmp_path: Path, state: Path
) -> None:
    path = tmp_path / "hooks.json"
    mine = {"command": "./hooks/check-prompt.sh"}
    old = json.loads(json.dumps(OLD_CURSOR))
    old["hooks"]["beforeSubmitPrompt"].insert(0, mine)
    old["hooks"]["afterFileEdit"] = [{"command": "./hooks/format.sh"}]
    write(path, old)
    change = install("cursor", path, state_dir=state)
    assert change.removed == ["beforeSubmitPrompt: bourdon hook user-prompt --agent cursor"]
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["hooks"]["beforeSubmitPrompt"] == [mine]
    assert data["hooks"]["afterFileEdit"] == [{"command": "./hooks/format.sh"}]
    assert status("cursor", path).state == INSTALLED


def test_an_upgrade_keeps_an_empty_list_the_user_had(tmp_path: Path, state: Path) -> None:
    path = tmp_path / "hooks.json"
    write(path, {"version": 1, "hooks": {"beforeSubmitPrompt": []}})
    install("cursor", path, state_dir=state)  # the user's list, in install's record as theirs
    data = json.loads(path.read_text(encoding="utf-8"))
    data["hooks"]["beforeSubmitPrompt"].append(OLD_CURSOR["hooks"]["beforeSubmitPrompt"][0])
    write(path, data)
    install("cursor", path, state_dir=state)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["hooks"]["beforeSubmitPrompt"] == []


def test_copilot_cli_hooks_live_in_a_file_of_their_own(tmp_path: Path, state: Path) -> None:
    home = tmp_path / "home"
    theirs = home / ".copilot" / "hooks" / "audit.json"
    original = write(theirs, USER_SETTINGS["copilot-cli"])
    path = settings_path("copilot-cli", home)
    install("copilot-cli", path, state_dir=state, prefix=["/opt/b/bourdon", "--library", "/l"])
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {
        "version": 1,
        "hooks": {
            "sessionEnd": [
                {
                    "type": "command",
                    "bash": "/opt/b/bourdon --library /l hook export copilot-cli",
                    "timeoutSec": 120,
                }
            ]
        },
    }
    assert theirs.read_bytes() == original
    uninstall("copilot-cli", path, state_dir=state)
    assert not path.exists() and theirs.read_bytes() == original


def test_status_calls_an_install_with_an_outdated_hook_partial(
    cli: Run, tmp_path: Path, state: Path
) -> None:
    path = tmp_path / "hooks.json"
    write(path, OLD_CURSOR)
    found = status("cursor", path)
    assert found.state == PARTIAL and found.missing == []
    assert found.outdated == ["beforeSubmitPrompt: bourdon hook user-prompt --agent cursor"]
    code, out, _ = cli("hooks", "status", "cursor", "--settings", path, "--library", "/l")
    assert code == 0 and "outdated beforeSubmitPrompt" in out and "install' takes it out" in out
    install("cursor", path, state_dir=state)
    assert status("cursor", path).state == INSTALLED and status("cursor", path).outdated == []
