"""`bourdon setup` judged from outside: each agent's config file, after setup, holds an entry that
the agent's own documentation would accept, the user's entries are kept, a second run changes no
byte, `--undo` gives every file back byte for byte, and every command written starts a server.

The expected shapes are written from each agent's documentation, not from bourdon's code:
- Claude Code, user scope: ``~/.claude.json`` top-level ``mcpServers.<name>`` with ``command`` and
  ``args`` (docs.anthropic.com/en/docs/claude-code/mcp, "user scope").
- Codex: ``~/.codex/config.toml`` table ``[mcp_servers.<name>]`` with ``command`` and ``args``
  (developers.openai.com/codex/mcp).
- Cursor: ``~/.cursor/mcp.json`` ``mcpServers`` (cursor.com/docs/context/mcp).
- Gemini CLI: ``~/.gemini/settings.json`` ``mcpServers`` (gemini-cli docs/tools/mcp-server.md).
- Qwen Code: ``~/.qwen/settings.json`` ``mcpServers`` (qwen-code docs, Gemini CLI's format).
- VS Code: the user profile's ``mcp.json``, top-level ``servers``, ``type: "stdio"``
  (code.visualstudio.com/docs/agents/reference/mcp-configuration).
- Copilot CLI: ``~/.copilot/mcp-config.json`` ``mcpServers`` (the same page, portable format).
- Claude Desktop: ``claude_desktop_config.json`` ``mcpServers`` (modelcontextprotocol.io quickstart).
- Windsurf: ``~/.codeium/windsurf/mcp_config.json`` ``mcpServers`` (docs.windsurf.com, MCP).
- OpenCode: ``~/.config/opencode/opencode.json`` ``mcp.<name>`` (v1) or ``mcp.servers.<name>``
  (v2) with ``type: "local"`` and ``command`` a list (opencode.ai/docs/mcp-servers).
- Goose: ``~/.config/goose/config.yaml`` ``extensions.<name>`` with ``enabled``, ``type: stdio``,
  ``cmd`` and ``args`` (block.github.io/goose/docs/guides/config-files).
- Cline: ``globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json`` ``mcpServers``;
  Roo Code and Kilo Code: ``settings/mcp_settings.json`` in their own globalStorage folders.
Aider has no MCP client, so it is the agent with no config file: nothing may be created for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

GLOBAL = Path(".config/Code/User/globalStorage")
FOREIGN_JSON = {"mcpServers": {"theirs": {"command": "/opt/theirs/bin/server", "args": ["--x"]}}}


def seed(home: Path) -> dict[str, Path]:
    """Each agent's config file as a user has it, with an entry of their own."""

    def write(rel: str | Path, text: str) -> Path:
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    dumped = json.dumps(FOREIGN_JSON, indent=2) + "\n"
    (home / ".claude").mkdir(parents=True)
    files = {
        "claude-code": write(
            ".claude.json",
            json.dumps({"numStartups": 7, "projects": {"/src/a": {"x": 1}}, **FOREIGN_JSON}),
        ),
        "codex": write(
            ".codex/config.toml",
            'model = "gpt-5"\n\n[mcp_servers.theirs]\ncommand = "/opt/theirs/bin/server"\n'
            'args = ["--x"]\n',
        ),
        "cursor": write(".cursor/mcp.json", dumped),
        "gemini-cli": write(".gemini/settings.json", json.dumps({"theme": "dark", **FOREIGN_JSON})),
        "qwen-code": write(".qwen/settings.json", dumped),
        "vscode": write(
            ".config/Code/User/mcp.json",
            json.dumps({"servers": {"theirs": {"type": "stdio", "command": "/opt/t"}}}, indent=4),
        ),
        "copilot-cli": write(".copilot/mcp-config.json", dumped),
        "claude-desktop": write(".config/Claude/claude_desktop_config.json", dumped),
        "windsurf": write(".codeium/windsurf/mcp_config.json", dumped),
        "opencode": write(
            ".config/opencode/opencode.json",
            json.dumps(
                {
                    "$schema": "https://opencode.ai/config.json",
                    "mcp": {"theirs": {"type": "local", "command": ["/opt/t"], "enabled": True}},
                },
                indent=2,
            ),
        ),
        "goose": write(
            ".config/goose/config.yaml",
            "GOOSE_PROVIDER: anthropic\nextensions:\n  developer:\n    enabled: true\n"
            "    type: builtin\n    name: developer\n",
        ),
        "cline": write(GLOBAL / "saoudrizwan.claude-dev/settings/cline_mcp_settings.json", dumped),
        "roo-code": write(GLOBAL / "rooveterinaryinc.roo-cline/settings/mcp_settings.json", dumped),
        "kilo-code": write(GLOBAL / "kilocode.kilo-code/settings/mcp_settings.json", dumped),
    }
    return files


def entry_json(path: Path, *keys: str) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    for key in keys:
        data = data[key]
    assert isinstance(data, dict)
    return data


def opencode_servers(path: Path) -> dict[str, Any]:
    mcp = entry_json(path, "mcp")
    return mcp["servers"] if "servers" in mcp and "bourdon" not in mcp else mcp


def command_of(agent: str, path: Path) -> list[str]:
    """The command the agent would start for bourdon, read as the agent's docs describe it."""
    if agent == "codex":
        table = tomllib.loads(path.read_text(encoding="utf-8"))["mcp_servers"]
        assert table["theirs"] == {"command": "/opt/theirs/bin/server", "args": ["--x"]}
        return [table["bourdon"]["command"], *table["bourdon"].get("args", [])]
    if agent == "opencode":
        servers = opencode_servers(path)
        assert "theirs" in servers
        assert servers["bourdon"]["type"] == "local"
        assert isinstance(servers["bourdon"]["command"], list)
        return list(servers["bourdon"]["command"])
    if agent == "goose":
        extensions = yaml.safe_load(path.read_text(encoding="utf-8"))["extensions"]
        assert extensions["developer"]["type"] == "builtin"
        ours = extensions["bourdon"]
        assert ours["enabled"] is True and ours["type"] == "stdio"
        return [ours["cmd"], *ours.get("args", [])]
    if agent == "vscode":
        servers = entry_json(path, "servers")
        assert servers["theirs"] == {"type": "stdio", "command": "/opt/t"}
        assert servers["bourdon"]["type"] == "stdio"
        return [servers["bourdon"]["command"], *servers["bourdon"].get("args", [])]
    servers = entry_json(path, "mcpServers")
    assert servers["theirs"] == FOREIGN_JSON["mcpServers"]["theirs"]
    return [servers["bourdon"]["command"], *servers["bourdon"].get("args", [])]


def snapshot(root: Path) -> dict[str, str]:
    """Every file under root (outside the library and bourdon's own state), by content hash."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("agent-library", ".bourdon")) or not path.is_file():
            continue
        found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


def run_setup(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HOME": str(home),
        "BOURDON_HOME": str(home / ".bourdon"),
        "BOURDON_LIBRARY": str(home / "agent-library"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "APPDATA": str(home / "AppData"),
    }
    env.pop("CODEX_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "bourdon", "setup", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_setup_writes_documented_entries_keeps_theirs_is_idempotent_and_undoes(home: Path) -> None:
    files = seed(home)
    before = snapshot(home)

    first = run_setup(home, "--yes")
    assert first.returncode == 0, first.stderr + first.stdout
    library = (home / "agent-library").resolve()
    assert (library / ".git").is_dir(), "setup inits the library"
    for agent, path in files.items():
        command = command_of(agent, path)
        assert Path(command[0]).is_absolute(), (agent, command)
        assert str(library) in command, (agent, command)
        assert "serve" in command, (agent, command)
        assert str(path) in first.stdout or path.name in first.stdout, (agent, first.stdout)
    assert not list(home.rglob(".aider*")), "nothing is created for an agent with no config"
    claude = json.loads(files["claude-code"].read_text(encoding="utf-8"))
    assert claude["numStartups"] == 7 and claude["projects"] == {"/src/a": {"x": 1}}
    assert json.loads(files["gemini-cli"].read_text(encoding="utf-8"))["theme"] == "dark"
    codex = tomllib.loads(files["codex"].read_text(encoding="utf-8"))
    assert codex["model"] == "gpt-5"

    after_first = snapshot(home)
    second = run_setup(home, "--yes")
    assert second.returncode == 0, second.stderr
    assert snapshot(home) == after_first, "a second run changes no byte"

    undo = run_setup(home, "--undo", "--yes")
    assert undo.returncode == 0, undo.stderr
    assert snapshot(home) == before, "undo gives back every file byte for byte"


def test_dry_run_writes_nothing(home: Path) -> None:
    seed(home)
    before = snapshot(home)
    dry = run_setup(home, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert snapshot(home) == before
    assert not (home / "agent-library").exists()


def test_without_a_terminal_and_without_yes_it_refuses_and_writes_nothing(home: Path) -> None:
    seed(home)
    before = snapshot(home)
    refused = run_setup(home)
    assert refused.returncode != 0
    assert "--yes" in refused.stderr + refused.stdout
    assert snapshot(home) == before


def initialize(command: list[str], home: Path) -> str:
    """Start the command as the agent would, and answer the server's name after initialize."""
    params = StdioServerParameters(
        command=command[0],
        args=command[1:],
        env={
            "HOME": str(home),
            "BOURDON_HOME": str(home / ".bourdon"),
            "PATH": os.environ.get("PATH", ""),
        },
    )

    async def go() -> str:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                result = await s.initialize()
                return str(result.server_info.name)

    return anyio.run(go)


def test_every_registered_command_starts_a_server_that_answers_initialize(home: Path) -> None:
    files = seed(home)
    done = run_setup(home, "--yes")
    assert done.returncode == 0, done.stderr
    commands: dict[tuple[str, ...], str] = {}
    for agent, path in files.items():
        commands.setdefault(tuple(command_of(agent, path)), agent)
    for command, agent in commands.items():
        assert initialize(list(command), home), agent
