"""Where bourdon's hooks come from and where they go: each agent's settings file, and the hook
file bourdon ships for it (the repository's ``hooks/`` folder, or the copy inside the package).

Format facts, per agent (checked against each agent's documentation and public source):

- Claude Code: ``~/.claude/settings.json`` [docs code.claude.com/docs/en/hooks].
- Codex: ``~/.codex/hooks.json``, Claude's shape; hooks that are not managed run only once the
  user trusts them in ``/hooks``, and again after any change [docs
  developers.openai.com/codex/hooks; src openai/codex:codex-rs/hooks].
- Cursor: ``~/.cursor/hooks.json``, ``"version": 1`` and flat entries; ``beforeSubmitPrompt``
  cannot add context and ``sessionStart`` is refused as unknown by some builds, where an unknown
  event may void the whole file [docs cursor.com/docs/agent/hooks; obs forum.cursor.com/t/149566].
- Gemini CLI: ``~/.gemini/settings.json``, timeouts in ms; hooks run synchronously (the turn
  waits), SessionEnd is not waited for [src google-gemini/gemini-cli:docs/hooks/reference.md].
- Windsurf's Cascade: ``~/.codeium/windsurf/hooks.json``, flat entries without a version,
  ``show_output`` [docs docs.windsurf.com/windsurf/cascade/hooks].
- Qwen Code: ``~/.qwen/settings.json``, Claude's shape, timeouts in ms, ``async`` handlers
  [src QwenLM/qwen-code:docs/users/features/hooks.md].
- goose: ``hooks/hooks.json`` in a plugin folder of bourdon's own,
  ``~/.agents/plugins/bourdon/`` (with its ``plugin.json``), Claude's shape, timeouts in
  seconds; export at ``SessionEnd`` only, since ``Stop`` runs (and may block) at every turn
  [src block/goose:documentation/docs/guides/context-engineering/hooks.md].
- Copilot CLI: ``*.json`` files in ``~/.copilot/hooks/``, ``"version": 1``, flat entries whose
  command is ``bash`` and timeout ``timeoutSec`` [docs
  docs.github.com/en/copilot/reference/hooks-reference].

``~/.claude``, ``~/.codex`` and ``~/.copilot`` are where ``CLAUDE_CONFIG_DIR``, ``CODEX_HOME`` and
``COPILOT_HOME`` put them, when set (``agentdirs``).
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bourdon.errors import InputError, NotFoundError
from bourdon.ingest.agentdirs import agent_folder, under_agent_folder

_CODEX_TRUST: Final = (
    "Codex runs these hooks only once you trust them, and asks again whenever they change: "
    "start Codex, type /hooks, review bourdon's hooks and trust them. (They do not run at all "
    "if ~/.codex/config.toml sets hooks = false under [features].)"
)


@dataclass(frozen=True)
class Target:
    """Where one agent keeps its hooks, and which of bourdon's hook files goes there."""

    agent: str
    fragment: str  # under hooks/
    settings: str  # under the home folder
    flat: bool  # {"event": [{"command": ...}]} (Cursor, Cascade, Copilot CLI); else groups
    home: str  # the agent's own folder under the home folder: where it is, it is installed
    versioned: bool = False  # the file carries a "version" (Cursor, Copilot CLI)
    command_key: str = "command"  # the key of a handler's shell command ("bash": Copilot CLI)
    # (event, hook call) that an older bourdon installed and this one no longer does: install
    # takes them out, so an upgraded file holds only what the hook file here says.
    retired: tuple[tuple[str, tuple[str, ...]], ...] = ()
    notice: str = ""  # what the user still has to do in the agent after an install changed it
    title: str = ""  # the agent's name, for people
    manifest: str = ""  # under hooks/: the manifest of a plugin folder the hooks live in (goose)


TARGETS: Final = {
    "claude-code": Target(
        "claude-code", "claude-code/settings.json", ".claude/settings.json", False, ".claude",
        title="Claude Code",
    ),
    "codex": Target(
        "codex", "codex/hooks.json", ".codex/hooks.json", False, ".codex",
        notice=_CODEX_TRUST, title="Codex",
    ),
    "cursor": Target(
        "cursor", "cursor/hooks.json", ".cursor/hooks.json", True, ".cursor", versioned=True,
        retired=(("beforeSubmitPrompt", ("hook", "user-prompt", "--agent", "cursor")),),
        title="Cursor",
    ),
    "gemini-cli": Target(
        "gemini-cli", "gemini-cli/settings.json", ".gemini/settings.json", False, ".gemini",
        retired=(("AfterAgent", ("hook", "export", "gemini-cli")),),
        title="Gemini CLI",
    ),
    "cascade": Target(
        "cascade", "cascade/hooks.json", ".codeium/windsurf/hooks.json", True,
        ".codeium/windsurf", title="Windsurf",
    ),
    "qwen-code": Target(
        "qwen-code", "qwen-code/settings.json", ".qwen/settings.json", False, ".qwen",
        title="Qwen Code",
    ),
    "goose": Target(
        "goose", "goose/hooks.json", ".agents/plugins/bourdon/hooks/hooks.json", False,
        ".config/goose", manifest="goose/plugin.json", title="goose",
    ),
    "copilot-cli": Target(
        "copilot-cli", "copilot-cli/bourdon.json", ".copilot/hooks/bourdon.json", True,
        ".copilot", versioned=True, command_key="bash", title="Copilot CLI",
    ),
}  # fmt: skip
AGENTS: Final = tuple(TARGETS)


def hooks_dir() -> Path:
    """bourdon's hook files: inside an installed package, else the checkout's ``hooks/``."""
    package = Path(__file__).resolve().parent.parent  # bourdon/, above ingest/hookfiles.py
    packaged = package / "hooks"
    return packaged if packaged.is_dir() else package.parent / "hooks"


def running_bourdon(argv0: str | None = None, executable: str | None = None) -> list[str]:
    """The command that runs this bourdon, with an absolute path: the console script it was
    started as, else ``<python> -m bourdon`` (started as ``python -m bourdon``, or embedded).

    Paths are made absolute, never resolved: a virtualenv's ``python`` is a symlink, and
    following it would leave the virtualenv.
    """
    argv0 = sys.argv[0] if argv0 is None else argv0
    executable = sys.executable if executable is None else executable
    script = Path(argv0)
    if script.name in ("bourdon", "bourdon.exe") and script.is_file():
        return [str(script.absolute())]
    return [str(Path(executable).absolute()), "-m", "bourdon"]


def hook_command(shipped: str, prefix: Sequence[str] | None) -> str:
    """A shipped hook command (``bourdon hook ...``) as installed: run by ``prefix`` (the
    program and its global options) instead of a bare ``bourdon``; unchanged without one."""
    if not prefix:
        return shipped
    return shlex.join([*prefix, *shlex.split(shipped)[1:]])


def target(agent: str) -> Target:
    try:
        return TARGETS[agent]
    except KeyError:
        raise NotFoundError(
            f"bourdon has no hooks for {agent!r}; it has hooks for {', '.join(AGENTS)}"
        ) from None


def agent_home(agent: str, home: Path, env: Mapping[str, str] | None = None) -> Path:
    """The agent's own folder (``~/.codex``, or where ``env`` moves it: ``agentdirs``): it
    exists where the agent does."""
    return agent_folder(target(agent).home, home, env or {})


def settings_path(
    agent: str, home: Path, override: Path | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """The settings file bourdon edits for ``agent``: ``override``, else the user's own (in
    the agent's folder, where ``env`` may have moved it)."""
    return (override or under_agent_folder(target(agent).settings, home, env or {})).expanduser()


def fragment(agent: str) -> dict[str, Any]:
    """bourdon's hook file for ``agent``, as shipped in ``hooks/``."""
    path = hooks_dir() / target(agent).fragment
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise NotFoundError(f"bourdon's hook file {path} is missing ({exc.strerror})") from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks"), dict):
        raise InputError(f"bourdon's hook file {path} has no 'hooks' object")
    return data
