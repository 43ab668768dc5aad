"""The folders agents keep their own files in, where the user may have moved them.

Three agents let a variable move their folder out of the home folder, and each then looks for
its settings, MCP servers and hooks there and nowhere else:

- Claude Code: ``$CLAUDE_CONFIG_DIR`` instead of ``~/.claude`` (``settings.json``); with the
  variable set, the user-scope MCP servers are in ``$CLAUDE_CONFIG_DIR/.claude.json`` instead of
  ``~/.claude.json`` [docs code.claude.com/docs/en/settings; issue anthropics/claude-code#48448,
  where ``claude mcp add --scope user`` wrote ``~/.claude-alt/.claude.json``]. Of a list (the
  reader accepts several, comma- or path-separated), the first is the one setup writes to.
- Codex: ``$CODEX_HOME`` instead of ``~/.codex`` (``config.toml``, ``hooks.json``)
  [src openai/codex:docs/config.md].
- Copilot CLI: ``$COPILOT_HOME`` instead of ``~/.copilot`` (``mcp-config.json``, ``hooks/``)
  [docs docs.github.com/en/copilot/reference/copilot-cli-reference/cli-config-dir-reference].

The caller passes the environment; none is read here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

# The folder under the home folder -> the variable that moves it.
MOVABLE: Final = {
    ".claude": "CLAUDE_CONFIG_DIR",
    ".codex": "CODEX_HOME",
    ".copilot": "COPILOT_HOME",
}


def agent_folder(default: str, home: Path, env: Mapping[str, str]) -> Path:
    """``home / default`` (``.claude``), or the folder the agent's variable in ``env`` names."""
    variable = MOVABLE.get(default)
    value = env.get(variable, "") if variable else ""
    first = re.split(rf"[,{re.escape(os.pathsep)}]", value)[0].strip()
    return Path(first).expanduser() if first else home / default


def under_agent_folder(relative: str, home: Path, env: Mapping[str, str]) -> Path:
    """A path given under the home folder (``.codex/hooks.json``), in its agent's folder."""
    head, _, rest = relative.partition("/")
    folder = agent_folder(head, home, env)
    return folder / rest if rest else folder


def is_moved(default: str, home: Path, env: Mapping[str, str]) -> bool:
    """Whether the agent's variable in ``env`` moves ``home / default`` elsewhere."""
    return agent_folder(default, home, env) != home / default
