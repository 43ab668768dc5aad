"""Which agents are installed on this machine, and where each keeps its user-level MCP servers.

An agent counts as installed when its configuration or data folder exists in the home folder,
or its program is on the ``PATH`` the caller passes (no environment is read here: the caller
passes what it needs in ``Machine``). The file and its syntax are each agent's documented user
scope; the entry's shape is in ``mcpconfig``.

Where each file is, from each agent's documentation or source:

- Claude Code: ``~/.claude.json``, top-level ``mcpServers`` (what ``claude mcp add -s user``
  writes, an entry ``{type: stdio, command, args, env}``)
  [docs https://docs.anthropic.com/en/docs/claude-code/mcp] [issue anthropics/claude-code#4193]
- Codex: ``~/.codex/config.toml``, ``[mcp_servers.<name>]`` (``codex mcp add`` writes the
  global file) [src openai/codex:docs/config.md]
- Cursor: ``~/.cursor/mcp.json``, ``mcpServers`` [docs https://docs.cursor.com/context/mcp]
- Gemini CLI: ``~/.gemini/settings.json``, ``mcpServers``
  [src google-gemini/gemini-cli:docs/tools/mcp-server.md]; Qwen Code, its fork:
  ``~/.qwen/settings.json`` [src QwenLM/qwen-code:docs/tools/mcp-server.md]
- VS Code (Copilot): the user profile's ``mcp.json`` (``~/.config/Code/User``, macOS
  ``~/Library/Application Support/Code/User``, Windows ``%APPDATA%\\Code\\User``), ``servers``
  [docs https://code.visualstudio.com/docs/copilot/reference/mcp-configuration]
- Copilot CLI: ``~/.copilot/mcp-config.json``, ``mcpServers``
  [src github/docs:content/copilot/how-tos/use-copilot-agents/use-copilot-cli.md]
- Claude Desktop: ``claude_desktop_config.json`` in ``~/Library/Application Support/Claude``,
  ``%APPDATA%\\Claude`` or ``~/.config/Claude`` [docs https://modelcontextprotocol.io/quickstart/user]
- Windsurf (Cascade): ``~/.codeium/windsurf/mcp_config.json``, ``mcpServers``
  [docs https://docs.windsurf.com/windsurf/cascade/mcp]
- Continue: a block file of bourdon's own in ``~/.continue/mcpServers/`` (Continue loads every
  YAML block there; the user's ``config.yaml`` is never edited)
  [src continuedev/continue:docs/customize/deep-dives/mcp.mdx]
- Cline, Roo Code, Kilo Code: ``<VS Code User>/globalStorage/<extension>/settings/``
  ``cline_mcp_settings.json`` / ``mcp_settings.json``, ``mcpServers``
  [docs https://docs.cline.bot/mcp/configuring-mcp-servers] [docs https://docs.roocode.com/features/mcp/using-mcp-in-roo]
- OpenCode: ``~/.config/opencode/opencode.json``, ``mcp`` [docs https://opencode.ai/docs/mcp-servers]
- Kilo Code, since its OpenCode-based releases: ``~/.config/kilo/kilo.json`` (or ``kilo.jsonc``),
  top-level ``mcp`` in OpenCode's form; the older extension's globalStorage file otherwise
  [src Kilo-Org/kilocode:packages/kilo-docs/pages/automate/mcp/using-in-kilo-code.md]
- Goose: ``~/.config/goose/config.yaml`` (Windows ``%APPDATA%\\Block\\goose\\config``),
  ``extensions`` [docs https://block.github.io/goose/docs/guides/config-files]
- Aider has no MCP client: it is detected, reported, and skipped.

Claude Code's, Codex's and Copilot CLI's folders are where their variables put them
(``agentdirs``: ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``COPILOT_HOME``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from bourdon.errors import InputError
from bourdon.ingest.agentdirs import agent_folder, is_moved

JSON: Final = "json"  # a JSON object; the servers under ``key``
TOML: Final = "toml"  # Codex's TOML tables
GOOSE: Final = "goose"  # goose's YAML ``extensions`` mapping
BLOCK: Final = "block"  # a YAML block file that is bourdon's alone (Continue)

NO_MCP: Final = {
    "aider": "Aider has no MCP client, so there is nothing to register; its chat history is "
    "read by 'bourdon export aider'",
}
ALIASES: Final = {
    "windsurf": "cascade",
    "continue": "continue-dev",
    "vscode": "copilot",
    "claude": "claude-code",
    "gemini": "gemini-cli",
    "qwen": "qwen-code",
    "roo": "roo-code",
    "kilo": "kilo-code",
}


@dataclass(frozen=True)
class Machine:
    """The home folder, the ``PATH`` to look for programs on, and the platform
    (``sys.platform``); ``appdata`` is Windows' ``%APPDATA%``; ``env``, the variables that move
    an agent's folder (``agentdirs``)."""

    home: Path
    path: str = ""
    platform: str = "linux"
    appdata: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    def app_dir(self, mac: str, windows: str, linux: str) -> Path:
        """An application's folder: under Application Support, %APPDATA% or ~/.config."""
        if self.platform == "darwin":
            return self.home / "Library" / "Application Support" / mac
        if self.platform.startswith("win"):
            return (self.appdata or self.home / "AppData" / "Roaming") / windows
        return self.home / ".config" / linux

    def on_path(self, program: str) -> bool:
        suffixes = (".exe", ".cmd", "") if self.platform.startswith("win") else ("",)
        for folder in self.path.split(os.pathsep) if self.path else ():
            for suffix in suffixes:
                candidate = Path(folder) / f"{program}{suffix}"
                if candidate.is_file() and os.access(candidate, os.X_OK):
                    return True
        return False


@dataclass(frozen=True)
class Agent:
    """One agent that reads MCP servers from a user-level file."""

    id: str
    name: str
    config: Path  # the file bourdon edits
    syntax: str  # JSON, TOML, GOOSE or BLOCK
    key: str = "mcpServers"  # JSON: the object that holds the servers
    marks: tuple[Path, ...] = ()  # folders or files whose presence says it is installed
    programs: tuple[str, ...] = ()  # programs on PATH that say so


def _vscode_user(machine: Machine) -> Path:
    return machine.app_dir("Code/User", "Code/User", "Code/User")


def _kilo(home: Path, storage: Path) -> Agent:
    """Kilo Code: its own config (``~/.config/kilo/kilo.json``, OpenCode's ``mcp`` form) since
    its OpenCode-based releases; the VS Code extension's ``mcp_settings.json`` before them."""
    config = home / ".config" / "kilo"
    marks = (config, storage)
    if config.is_dir():
        jsonc = config / "kilo.jsonc"
        path = (
            jsonc
            if jsonc.exists() and not (config / "kilo.json").exists()
            else config / "kilo.json"
        )
        return Agent("kilo-code", "Kilo Code", path, JSON, key="mcp", marks=marks)
    return Agent("kilo-code", "Kilo Code", storage / "settings" / "mcp_settings.json", JSON,
                 marks=marks)  # fmt: skip


def known(machine: Machine) -> list[Agent]:
    """Every agent bourdon can register itself with, as it would be on ``machine``."""
    home = machine.home
    code = _vscode_user(machine)
    storage = code / "globalStorage"
    claude_desktop = machine.app_dir("Claude", "Claude", "Claude")
    goose_dir = (
        (machine.appdata or home / "AppData" / "Roaming") / "Block" / "goose" / "config"
        if machine.platform.startswith("win")
        else home / ".config" / "goose"
    )
    claude = agent_folder(".claude", home, machine.env)
    # Claude Code keeps its user MCP servers next to its folder, or in it once it is moved.
    claude_json = (
        claude / ".claude.json"
        if is_moved(".claude", home, machine.env)
        else (home / ".claude.json")
    )
    codex = agent_folder(".codex", home, machine.env)
    copilot = agent_folder(".copilot", home, machine.env)
    cline = storage / "saoudrizwan.claude-dev"
    roo = storage / "rooveterinaryinc.roo-cline"
    kilo = storage / "kilocode.kilo-code"
    return [
        Agent("claude-code", "Claude Code", claude_json, JSON,
              marks=(claude, claude_json), programs=("claude",)),
        Agent("codex", "Codex", codex / "config.toml", TOML,
              marks=(codex,), programs=("codex",)),
        Agent("cursor", "Cursor", home / ".cursor" / "mcp.json", JSON,
              marks=(home / ".cursor",), programs=("cursor", "cursor-agent")),
        Agent("gemini-cli", "Gemini CLI", home / ".gemini" / "settings.json", JSON,
              marks=(home / ".gemini",), programs=("gemini",)),
        Agent("copilot", "VS Code (Copilot)", code / "mcp.json", JSON, key="servers",
              marks=(code,), programs=("code",)),
        Agent("copilot-cli", "Copilot CLI", copilot / "mcp-config.json", JSON,
              marks=(copilot,), programs=("copilot",)),
        Agent("claude-desktop", "Claude Desktop", claude_desktop / "claude_desktop_config.json",
              JSON, marks=(claude_desktop,)),
        Agent("cascade", "Windsurf", home / ".codeium" / "windsurf" / "mcp_config.json", JSON,
              marks=(home / ".codeium" / "windsurf",), programs=("windsurf",)),
        Agent("continue-dev", "Continue", home / ".continue" / "mcpServers" / "bourdon.yaml",
              BLOCK, marks=(home / ".continue",), programs=("cn",)),
        Agent("cline", "Cline", cline / "settings" / "cline_mcp_settings.json", JSON,
              marks=(cline,)),
        Agent("roo-code", "Roo Code", roo / "settings" / "mcp_settings.json", JSON,
              marks=(roo,)),
        _kilo(home, kilo),
        Agent("opencode", "OpenCode", home / ".config" / "opencode" / "opencode.json", JSON,
              key="mcp", marks=(home / ".config" / "opencode",), programs=("opencode",)),
        Agent("goose", "Goose", goose_dir / "config.yaml", GOOSE, marks=(goose_dir,),
              programs=("goose",)),
        Agent("qwen-code", "Qwen Code", home / ".qwen" / "settings.json", JSON,
              marks=(home / ".qwen",), programs=("qwen",)),
    ]  # fmt: skip


AGENT_IDS: Final = tuple(a.id for a in known(Machine(Path("~"))))


def canonical(agent_id: str) -> str:
    """The agent id for a name the user typed (``windsurf`` is ``cascade``); refuses others."""
    name = ALIASES.get(agent_id.lower(), agent_id.lower())
    if name in NO_MCP:
        raise InputError(NO_MCP[name])
    if name not in AGENT_IDS:
        raise InputError(f"bourdon cannot set up {agent_id!r}; it knows {', '.join(AGENT_IDS)}")
    return name


def is_installed(agent: Agent, machine: Machine) -> bool:
    return any(mark.exists() for mark in agent.marks) or any(
        machine.on_path(program) for program in agent.programs
    )


def installed(machine: Machine, only: Iterable[str] | None = None) -> list[Agent]:
    """The agents installed on ``machine`` (``only``: these ids, installed or not)."""
    wanted = {canonical(a) for a in only} if only else None
    return [
        agent
        for agent in known(machine)
        if (agent.id in wanted if wanted is not None else is_installed(agent, machine))
    ]


def without_mcp(machine: Machine) -> list[str]:
    """Agents found here that have no MCP client (each said once, and skipped)."""
    aider = machine.on_path("aider") or (machine.home / ".aider.conf.yml").exists()
    return ["aider"] if aider else []
