"""bourdon's MCP server entry in an agent's own configuration file: added, found, taken out.

Pure functions of a file's text: ``register`` returns the new text (the same text when the
entry is already there), ``unregister`` the text without bourdon's entry (``None``: the file
was bourdon's alone), ``registered`` the command of the entry found. Everything else in the
file is kept: other servers, unknown keys, the JSON file's indentation; TOML and YAML files
are edited as text, so every other byte stays where it was (``mcptext``). A file that cannot
be parsed raises an ``InputError`` that says so, and is left to the user.

The entry of each agent, as its documentation shows a local (stdio) server (sources in
``agents``): Claude Code ``{type: stdio, command, args, env}`` (what ``claude mcp add``
writes); VS Code ``{type: stdio, command, args}`` under ``servers``; Copilot CLI
``{type: local, command, args, tools: ["*"]}``; Cline, Roo Code and Kilo Code
``{command, args, disabled: false}`` (Kilo Code's own ``kilo.json``: OpenCode's form);
OpenCode ``{type: local, command: [program, ...args], enabled: true}`` under ``mcp`` (or
``mcp.servers``, where a file already uses OpenCode 2's form
[docs https://opencode.ai/docs/mcp-servers]); Goose ``extensions.bourdon`` with
``{enabled, type: stdio, name, cmd, args, envs, env_keys, timeout, description}``
[src block/goose:ui/desktop/openapi.json ExtensionConfig]; Continue a block file
``{name, version, schema: v1, mcpServers: [{name, command, args}]}``; the others
(Cursor, Gemini CLI, Qwen Code, Claude Desktop, Windsurf, Codex) ``{command, args}``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any, Final

import yaml

from bourdon.errors import InputError
from bourdon.ingest import mcptext
from bourdon.ingest.agents import BLOCK, GOOSE, TOML, Agent
from bourdon.ingest.settingsjson import dump_settings

NAME: Final = "bourdon"
DESCRIPTION: Final = "bourdon: the shared memory of this machine's coding agents"


def entry(agent: Agent, command: Sequence[str]) -> dict[str, Any]:
    """bourdon's server entry for ``agent``, running ``command`` (program, then arguments)."""
    program, args = command[0], list(command[1:])
    if agent.id == "claude-code":
        return {"type": "stdio", "command": program, "args": args, "env": {}}
    if agent.id == "copilot":
        return {"type": "stdio", "command": program, "args": args}
    if agent.id == "copilot-cli":
        return {"type": "local", "command": program, "args": args, "tools": ["*"]}
    if agent.key == "mcp":  # OpenCode's form (OpenCode, and Kilo Code's own config)
        return {"type": "local", "command": [program, *args], "enabled": True}
    if agent.id in ("cline", "roo-code", "kilo-code"):
        return {"command": program, "args": args, "disabled": False}
    if agent.id == "goose":
        return {
            "enabled": True,
            "type": "stdio",
            "name": NAME,
            "cmd": program,
            "args": args,
            "envs": {},
            "env_keys": [],
            "timeout": 300,
            "description": DESCRIPTION,
        }
    if agent.id == "continue-dev":
        return {"name": NAME, "command": program, "args": args}
    return {"command": program, "args": args}


def command_of(agent: Agent, found: object) -> list[str] | None:
    """The command line of an entry as ``entry`` writes it (None: not a stdio command)."""
    if not isinstance(found, dict):
        return None
    program = found.get("cmd" if agent.syntax == GOOSE else "command")
    if agent.key == "mcp":
        return [str(w) for w in program] if isinstance(program, list) and program else None
    args = found.get("args") or []
    if not isinstance(program, str) or not isinstance(args, list):
        return None
    return [program, *map(str, args)]


def register(agent: Agent, raw: str | None, command: Sequence[str]) -> str:
    """The file's text with bourdon's entry (``raw`` None: the file does not exist yet)."""
    wanted = entry(agent, command)
    if agent.syntax == TOML:
        return mcptext.toml_register(raw or "", NAME, wanted, str(agent.config))
    if agent.syntax == GOOSE:
        return mcptext.goose_register(raw or "", NAME, wanted, str(agent.config))
    if agent.syntax == BLOCK:
        if raw is not None:
            _block_servers(raw, agent)  # refuses a file that is not bourdon's
        return _block(wanted)
    data = _parse_json(raw, agent)
    servers = _servers(data, agent, create=True)
    assert servers is not None
    if servers.get(NAME) == wanted:
        return raw or ""
    result = copy.deepcopy(data)
    target = _servers(result, agent, create=True)
    assert target is not None
    target[NAME] = wanted
    return dump_settings(result, raw)


def unregister(agent: Agent, raw: str) -> str | None:
    """The file's text without bourdon's entry; None when nothing else was in it (a block)."""
    if agent.syntax == TOML:
        return mcptext.toml_unregister(raw, NAME, str(agent.config))
    if agent.syntax == GOOSE:
        return mcptext.goose_unregister(raw, NAME, str(agent.config))
    if agent.syntax == BLOCK:
        return None
    data = _parse_json(raw, agent)
    servers = _servers(data, agent, create=False)
    if servers is None or NAME not in servers:
        return raw
    del servers[NAME]
    return dump_settings(data, raw)


def registered(agent: Agent, raw: str) -> list[str] | None:
    """The command of bourdon's entry in the file, None when it has none."""
    if agent.syntax == TOML:
        found = mcptext.toml_table(raw, str(agent.config)).get("mcp_servers", {}).get(NAME)
    elif agent.syntax == GOOSE:
        found = (mcptext.yaml_mapping(raw, str(agent.config)).get("extensions") or {}).get(NAME)
    elif agent.syntax == BLOCK:
        found = next((s for s in _block_servers(raw, agent) if s.get("name") == NAME), None)
    else:
        servers = _servers(_parse_json(raw, agent), agent, create=False)
        found = servers.get(NAME) if servers else None
    return command_of(agent, found)


# -- JSON -----------------------------------------------------------------------------------


def _parse_json(raw: str | None, agent: Agent) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{agent.config} is not valid JSON (line {exc.lineno}, column {exc.colno}): "
            "comments and trailing commas are not JSON; bourdon changed nothing: fix the file, "
            "or add bourdon's server by hand"
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"{agent.config} does not hold a JSON object; bourdon changed nothing")
    return data


def _servers(data: dict[str, Any], agent: Agent, *, create: bool) -> dict[str, Any] | None:
    """The object that holds the servers (created when ``create``), None when absent."""
    holder = data.get(agent.key)
    if holder is None:
        if not create:
            return None
        holder = data[agent.key] = {}
    if not isinstance(holder, dict):
        raise InputError(
            f"'{agent.key}' in {agent.config} is not an object; bourdon changed nothing"
        )
    nested = holder.get("servers")
    if agent.key == "mcp" and isinstance(nested, dict) and "type" not in nested:
        return nested  # OpenCode 2's form: mcp.servers.<name>
    return holder


# -- Continue's block file ----------------------------------------------------------------


def _block(server: dict[str, Any]) -> str:
    text = yaml.safe_dump(
        {"name": NAME, "version": "0.0.1", "schema": "v1", "mcpServers": [server]},
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
    )
    return text


def _block_servers(raw: str, agent: Agent) -> list[dict[str, Any]]:
    """The servers of bourdon's block file; refuses a file of someone else's."""
    data = mcptext.yaml_mapping(raw, str(agent.config))
    servers = data.get("mcpServers")
    found = [s for s in servers if isinstance(s, dict)] if isinstance(servers, list) else []
    if data.get("name") != NAME or not any(s.get("name") == NAME for s in found):
        raise InputError(
            f"{agent.config} is not bourdon's block file; bourdon changed nothing: move it "
            "away, or add bourdon's server by hand"
        )
    return found
