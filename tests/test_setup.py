"""``bourdon setup``: every installed agent wired to this bourdon, in its own file's format.

Acceptance: in a fake home holding each supported agent's config files (with entries of the
user's own) and one agent with none, ``setup --yes`` writes the entries each agent's
documentation describes (the expectations below are written by hand from those documents, not
from bourdon's output), a second run changes no byte, ``--undo`` restores every file byte for
byte, and each registered command, run as written, starts a server that answers an MCP
initialize.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client, StdioServerParameters

from bourdon.cli.main import main

VSCODE_USER = ".config/Code/User"
CLINE = f"{VSCODE_USER}/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
ROO = f"{VSCODE_USER}/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json"
KILO = f"{VSCODE_USER}/globalStorage/kilocode.kilo-code/settings/mcp_settings.json"
FOREIGN = {"command": "npx", "args": ["-y", "@example/other-server"]}

# Each agent's MCP file as a user has it: a server of their own and keys bourdon never reads.
USER_FILES: dict[str, str] = {
    ".claude.json": json.dumps(
        {
            "numStartups": 42,
            "projects": {"/src/app": {"allowedTools": [], "mcpServers": {}}},
            "mcpServers": {"other": {"type": "stdio", **FOREIGN, "env": {}}},
            "oauthAccount": {"emailAddress": "user@example.com"},
        },
        indent=2,
    ),
    ".codex/config.toml": (
        '# my Codex settings\nmodel = "gpt-5-codex"\n\n'
        '[mcp_servers.other]\ncommand = "npx"\nargs = ["-y", "@example/other-server"]\n\n'
        '[projects."/src/app"]\ntrust_level = "trusted"\n'
    ),
    ".cursor/mcp.json": json.dumps({"mcpServers": {"other": FOREIGN}}, indent=2) + "\n",
    ".gemini/settings.json": json.dumps(
        {"theme": "GitHub", "mcpServers": {"other": FOREIGN}}, indent=2
    )
    + "\n",
    f"{VSCODE_USER}/mcp.json": json.dumps(
        {"servers": {"other": {"type": "stdio", **FOREIGN}}, "inputs": []}, indent="\t"
    )
    + "\n",
    ".copilot/mcp-config.json": json.dumps(
        {"mcpServers": {"other": {"type": "local", **FOREIGN, "tools": ["*"]}}}, indent=2
    )
    + "\n",
    ".config/Claude/claude_desktop_config.json": json.dumps(
        {"mcpServers": {"other": FOREIGN}, "globalShortcut": "Ctrl+Space"}, indent=2
    )
    + "\n",
    ".codeium/windsurf/mcp_config.json": json.dumps({"mcpServers": {"other": FOREIGN}}, indent=2)
    + "\n",
    ".continue/mcpServers/other.yaml": (
        "name: Other\nversion: 0.0.1\nschema: v1\nmcpServers:\n"
        "  - name: other\n    command: npx\n    args: [-y, '@example/other-server']\n"
    ),
    ".continue/config.yaml": "name: my-config\nversion: 0.0.1\nschema: v1\n",
    CLINE: json.dumps({"mcpServers": {"other": {**FOREIGN, "disabled": False}}}, indent=2),
    ROO: json.dumps({"mcpServers": {"other": {**FOREIGN, "alwaysAllow": []}}}, indent=2),
    KILO: json.dumps({"mcpServers": {}}, indent=2),
    ".config/opencode/opencode.json": json.dumps(
        {
            "$schema": "https://opencode.ai/config.json",
            "mcp": {"other": {"type": "local", "command": ["npx", "-y", "other"]}},
            "theme": "opencode",
        },
        indent=2,
    )
    + "\n",
    ".config/goose/config.yaml": (
        "GOOSE_PROVIDER: anthropic\n"
        "extensions:\n"
        "  developer:\n"
        "    bundled: true\n"
        "    enabled: true\n"
        "    name: developer\n"
        "    timeout: 300\n"
        "    type: builtin\n"
        "GOOSE_MODE: smart_approve\n"
    ),
    # Claude Code's own settings (hooks go there) and Codex's, Cursor's hook files: absent.
    ".claude/settings.json": json.dumps({"model": "opus"}, indent=2) + "\n",
}
# Qwen Code is the agent with nothing here: not detected, nothing written for it.


def make_home(home: Path) -> None:
    for rel, text in USER_FILES.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def snapshot(*roots: Path) -> dict[str, bytes]:
    found = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "agent-library" not in path.parts:
                found[str(path)] = path.read_bytes()
    return found


@pytest.fixture
def home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    programs = tmp_path / "bin"
    programs.mkdir()
    git = shutil.which("git")
    assert git is not None
    (programs / "git").symlink_to(git)
    monkeypatch.setenv("PATH", str(programs))  # git, and no agent's program: files decide
    make_home(isolated_home)
    return isolated_home


def run(*args: str) -> int:
    return main(["setup", *args])


def expected_command(library: Path) -> list[str]:
    # Run in-process by pytest: this interpreter, by its absolute path, as `-m bourdon`.
    return [str(Path(sys.executable).absolute()), "-m", "bourdon", "--library", str(library),
            "serve"]  # fmt: skip


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def written_commands(home: Path) -> dict[str, list[str]]:
    """Each agent's bourdon entry, checked against its documented shape; its command line."""
    found: dict[str, list[str]] = {}
    claude = load_json(home / ".claude.json")["mcpServers"]["bourdon"]
    # `claude mcp add -s user` writes {type: stdio, command, args, env} to ~/.claude.json.
    assert set(claude) == {"type", "command", "args", "env"} and claude["type"] == "stdio"
    found["claude-code"] = [claude["command"], *claude["args"]]
    codex = tomllib.loads((home / ".codex/config.toml").read_text())["mcp_servers"]["bourdon"]
    assert set(codex) == {"command", "args"}  # [mcp_servers.<name>] command, args
    found["codex"] = [codex["command"], *codex["args"]]
    for agent, rel in (
        ("cursor", ".cursor/mcp.json"),
        ("gemini-cli", ".gemini/settings.json"),
        ("claude-desktop", ".config/Claude/claude_desktop_config.json"),
        ("cascade", ".codeium/windsurf/mcp_config.json"),
    ):
        entry = load_json(home / rel)["mcpServers"]["bourdon"]  # {command, args}
        assert set(entry) == {"command", "args"}, agent
        found[agent] = [entry["command"], *entry["args"]]
    vscode = load_json(home / VSCODE_USER / "mcp.json")["servers"]["bourdon"]
    assert vscode["type"] == "stdio" and set(vscode) == {"type", "command", "args"}
    found["copilot"] = [vscode["command"], *vscode["args"]]
    cli = load_json(home / ".copilot/mcp-config.json")["mcpServers"]["bourdon"]
    assert cli["type"] == "local" and cli["tools"] == ["*"]  # Copilot CLI: local, tools
    found["copilot-cli"] = [cli["command"], *cli["args"]]
    for agent, rel in (("cline", CLINE), ("roo-code", ROO), ("kilo-code", KILO)):
        entry = load_json(home / rel)["mcpServers"]["bourdon"]
        assert entry["disabled"] is False and set(entry) == {"command", "args", "disabled"}
        found[agent] = [entry["command"], *entry["args"]]
    opencode = load_json(home / ".config/opencode/opencode.json")["mcp"]["bourdon"]
    # OpenCode: {type: local, command: [program, ...args], enabled}
    assert opencode["type"] == "local" and opencode["enabled"] is True
    assert isinstance(opencode["command"], list)
    found["opencode"] = opencode["command"]
    goose = yaml.safe_load((home / ".config/goose/config.yaml").read_text())["extensions"]
    entry = goose["bourdon"]  # goose: extensions.<key> {enabled, type: stdio, name, cmd, args}
    assert entry["enabled"] is True and entry["type"] == "stdio" and entry["name"] == "bourdon"
    found["goose"] = [entry["cmd"], *entry["args"]]
    block = yaml.safe_load((home / ".continue/mcpServers/bourdon.yaml").read_text())
    # Continue block file: name, version, schema v1, mcpServers: [{name, command, args}]
    assert block["schema"] == "v1" and block["name"] and block["version"]
    (server,) = block["mcpServers"]
    assert server["name"] == "bourdon"
    found["continue-dev"] = [server["command"], *server["args"]]
    return found


def test_setup_writes_each_agents_documented_entry_and_keeps_the_users(home: Path) -> None:
    library = Path(os.environ["BOURDON_LIBRARY"])
    assert run("--yes") == 0
    commands = written_commands(home)
    assert set(commands) == {
        "claude-code", "codex", "cursor", "gemini-cli", "copilot", "copilot-cli",
        "claude-desktop", "cascade", "continue-dev", "cline", "roo-code", "kilo-code",
        "opencode", "goose",
    }  # fmt: skip
    for agent, command in commands.items():
        assert command == expected_command(library), agent
    assert not (home / ".qwen").exists()  # the agent with nothing here is left alone
    # The user's own servers and keys are all still there.
    claude = load_json(home / ".claude.json")
    assert claude["numStartups"] == 42 and claude["oauthAccount"]
    assert claude["mcpServers"]["other"]["command"] == "npx"
    codex_text = (home / ".codex/config.toml").read_text()
    assert codex_text.startswith(USER_FILES[".codex/config.toml"])  # byte for byte, then ours
    assert tomllib.loads(codex_text)["projects"]["/src/app"]["trust_level"] == "trusted"
    assert load_json(home / ".cursor/mcp.json")["mcpServers"]["other"] == FOREIGN
    assert load_json(home / VSCODE_USER / "mcp.json")["inputs"] == []
    assert (home / VSCODE_USER / "mcp.json").read_text().splitlines()[1].startswith("\t")
    goose = yaml.safe_load((home / ".config/goose/config.yaml").read_text())
    assert goose["extensions"]["developer"]["type"] == "builtin"
    assert goose["GOOSE_MODE"] == "smart_approve"
    opencode = load_json(home / ".config/opencode/opencode.json")
    assert opencode["mcp"]["other"]["command"] == ["npx", "-y", "other"]
    assert (home / ".continue/mcpServers/other.yaml").read_text() == USER_FILES[
        ".continue/mcpServers/other.yaml"
    ]
    # The library exists and the export hooks are installed where bourdon has hooks.
    assert (library / ".git").exists()
    settings = load_json(home / ".claude/settings.json")
    assert settings["model"] == "opus"
    assert any(
        "hook export claude-code" in h["command"]
        for group in settings["hooks"]["SessionEnd"]
        for h in group["hooks"]
    )


def test_a_second_run_changes_no_byte_and_undo_restores_every_file(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bourdon_home = Path(os.environ["BOURDON_HOME"])
    before = snapshot(home)
    assert run("--yes") == 0
    once = snapshot(home)
    assert once != before
    capsys.readouterr()
    assert run("--yes", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert snapshot(home) == once
    assert report["changed"] == 0
    assert {f["state"] for f in report["files"]} == {"unchanged"}
    assert run("--undo", "--yes") == 0
    assert snapshot(home) == before  # every file as it was, and no file left behind
    assert not (bourdon_home / "setup-state.json").exists()


def test_undo_after_the_user_edited_a_file_removes_only_bourdons_entry(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("--yes", "--agent", "cursor") == 0
    path = home / ".cursor/mcp.json"
    data = load_json(path)
    data["mcpServers"]["added-later"] = {"command": "later"}
    path.write_text(json.dumps(data, indent=2) + "\n")
    capsys.readouterr()
    assert run("--undo", "--yes") == 0
    out = capsys.readouterr().out
    assert "changed since" in out
    servers = load_json(path)["mcpServers"]
    assert servers == {"other": FOREIGN, "added-later": {"command": "later"}}


def test_dry_run_writes_nothing_and_shows_the_diff(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(home, Path(os.environ["BOURDON_HOME"]).parent)
    assert run("--dry-run") == 0  # no --yes needed: nothing is written
    out = capsys.readouterr().out
    assert snapshot(home, Path(os.environ["BOURDON_HOME"]).parent) == before
    assert '+    "bourdon": {' in out
    assert "[mcp_servers.bourdon]" in out
    assert not Path(os.environ["BOURDON_LIBRARY"]).exists()


def test_without_a_terminal_or_yes_it_refuses(home: Path) -> None:
    before = snapshot(home)
    assert run() == 2
    assert snapshot(home) == before


def test_a_file_it_cannot_parse_is_reported_and_left_alone(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = '{"mcpServers": {"other": {"command": "npx",},},}\n'  # trailing commas
    (home / ".cursor/mcp.json").write_text(broken)
    assert run("--yes", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert (home / ".cursor/mcp.json").read_text() == broken
    cursor = next(f for f in report["files"] if f["path"].endswith(".cursor/mcp.json"))
    assert cursor["state"] == "unreadable" and "JSON" in cursor["error"]
    assert "bourdon" in load_json(home / ".gemini/settings.json")["mcpServers"]  # the rest went on


def test_agent_limits_it_and_aider_is_said_to_have_no_mcp(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("--yes", "--agent", "gemini-cli", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert {f["agent"] for f in report["files"]} == {"gemini-cli"}
    assert "bourdon" not in load_json(home / ".cursor/mcp.json")["mcpServers"]
    assert run("--yes", "--agent", "aider") == 2
    assert "no MCP" in capsys.readouterr().err


def test_each_registered_command_starts_a_server_that_answers_initialize(home: Path) -> None:
    assert run("--yes") == 0
    commands = {tuple(c) for c in written_commands(home).values()}
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}

    async def initialize(command: tuple[str, ...]) -> str:
        params = StdioServerParameters(command=command[0], args=list(command[1:]), env=env)
        with anyio.fail_after(60):
            async with Client(params) as client:
                return str(client.server_info.name)

    for command in commands:
        assert anyio.run(initialize, command) == "bourdon"


def test_doctor_flags_a_registration_whose_bourdon_is_gone(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bourdon.ingest import agents, setup
    from bourdon.status.registrations import registration_problems

    program = tmp_path / "installed" / "bourdon"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    library = Path(os.environ["BOURDON_LIBRARY"])
    library.mkdir()
    machine = agents.Machine(home=home)
    found = [a for a in agents.installed(machine) if a.id == "cursor"]
    state_dir = Path(os.environ["BOURDON_HOME"])
    session = setup.Session(state_dir)
    changes = setup.plan(found, [str(program), "--library", str(library), "serve"])
    setup.apply(changes, session)
    session.save()
    assert registration_problems(state_dir) == []
    program.unlink()
    (problem,) = registration_problems(state_dir)
    assert problem["subject"] == "cursor" and problem["severity"] == "error"
    assert problem["fix"].endswith("setup --agent cursor")
    assert str(program) in problem["message"]
    capsys.readouterr()
    main(["doctor", "--no-peers", "--json"])
    found = json.loads(capsys.readouterr().out)["problems"]
    broken = [p for p in found if p["code"] == "registration_broken"]
    assert [p["subject"] for p in broken] == ["cursor"]


def test_undo_of_a_file_holding_server_and_hooks_edited_since_keeps_the_users_edit(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / ".gemini/settings.json"
    assert run("--yes", "--agent", "gemini-cli") == 0
    data = load_json(path)
    assert "bourdon" in data["mcpServers"] and data["hooks"]
    data["theme"] = "Dracula"  # the user's own change, after setup
    path.write_text(json.dumps(data, indent=2) + "\n")
    capsys.readouterr()
    assert run("--undo", "--yes", "--json") == 0
    steps = json.loads(capsys.readouterr().out)["undone"]
    assert {s["action"] for s in steps if s["path"] == str(path)} == {"entries removed"}
    after = load_json(path)
    assert after["theme"] == "Dracula"
    assert after["mcpServers"] == {"other": FOREIGN}
    assert "bourdon" not in json.dumps(after.get("hooks", {}))


def test_agents_whose_folder_the_user_moved_are_set_up_where_they_look(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # CLAUDE_CONFIG_DIR, CODEX_HOME and COPILOT_HOME move each agent's whole folder: Claude
    # Code then keeps its user MCP servers in <dir>/.claude.json, its hooks in
    # <dir>/settings.json; Codex its config.toml and hooks.json; Copilot CLI its
    # mcp-config.json and hooks/ (written by hand from each agent's documentation).
    moved = tmp_path / "elsewhere"
    claude, codex, copilot = moved / "claude-work", moved / "codex", moved / "copilot"
    for folder in (claude, codex, copilot):
        folder.mkdir(parents=True)
    (claude / ".claude.json").write_text(json.dumps({"numStartups": 3}) + "\n")
    (codex / "config.toml").write_text('model = "gpt-5-codex"\n')
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    monkeypatch.setenv("COPILOT_HOME", str(copilot))
    programs = tmp_path / "bin"
    programs.mkdir()
    (programs / "git").symlink_to(shutil.which("git") or "git")
    monkeypatch.setenv("PATH", str(programs))  # git, and no agent's program: folders decide
    library = Path(os.environ["BOURDON_LIBRARY"])
    before = snapshot(isolated_home)
    assert run("--yes") == 0
    servers = load_json(claude / ".claude.json")["mcpServers"]
    assert [servers["bourdon"]["command"], *servers["bourdon"]["args"]] == expected_command(
        library
    )
    assert load_json(claude / ".claude.json")["numStartups"] == 3
    hooks = load_json(claude / "settings.json")["hooks"]
    assert any("hook export claude-code" in h["command"] for g in hooks["SessionEnd"]
               for h in g["hooks"])  # fmt: skip
    toml = tomllib.loads((codex / "config.toml").read_text())
    assert toml["model"] == "gpt-5-codex" and toml["mcp_servers"]["bourdon"]["command"]
    assert "hook export codex" in (codex / "hooks.json").read_text()
    cli = load_json(copilot / "mcp-config.json")["mcpServers"]["bourdon"]
    assert cli["type"] == "local"
    assert list((copilot / "hooks").glob("*.json"))
    # Nothing of these agents went to the folders they were moved from.
    after = snapshot(isolated_home)
    for name in (".claude.json", ".claude", ".codex", ".copilot"):
        assert not (isolated_home / name).exists(), name
    assert {p for p in after if p not in before} <= {
        p for p in after if "/.bourdon" in p or "setup-state" in p or str(library) in p
    }
    assert run("--undo", "--yes") == 0
    assert load_json(claude / ".claude.json") == {"numStartups": 3}
    assert (codex / "config.toml").read_text() == 'model = "gpt-5-codex"\n'
    assert not (copilot / "mcp-config.json").exists()
