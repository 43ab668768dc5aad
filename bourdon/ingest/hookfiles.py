"""Where bourdon's hooks come from and where they go: each agent's settings file, and the hook
file bourdon ships for it (the repository's ``hooks/`` folder, or the copy inside the package).
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bourdon.errors import InputError, NotFoundError


@dataclass(frozen=True)
class Target:
    """Where one agent keeps its hooks, and which of bourdon's hook files goes there."""

    agent: str
    fragment: str  # under hooks/
    settings: str  # under the home folder
    flat: bool  # Cursor: {"event": [{"command": ...}]}; others: [{"hooks": [{...}]}]


TARGETS: Final = {
    "claude-code": Target(
        "claude-code", "claude-code/settings.json", ".claude/settings.json", False
    ),
    "codex": Target("codex", "codex/hooks.json", ".codex/hooks.json", False),
    "cursor": Target("cursor", "cursor/hooks.json", ".cursor/hooks.json", True),
    "gemini-cli": Target("gemini-cli", "gemini-cli/settings.json", ".gemini/settings.json", False),
}
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


def settings_path(agent: str, home: Path, override: Path | None = None) -> Path:
    """The settings file bourdon edits for ``agent``: ``override``, else the user's own."""
    return (override or home / target(agent).settings).expanduser()


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
