"""Doctor's check of the MCP registrations ``bourdon setup`` wrote: does each still start a
working bourdon?

For each agent's configuration file setup registered bourdon in (remembered in
``$BOURDON_HOME/setup-state.json``), the entry must still be there, its program must exist and
be executable, and the library it names with ``--library`` must exist. Each failure is a
problem whose fix is ``bourdon setup --agent A``, which writes the entry again.
"""

from __future__ import annotations

import os
from pathlib import Path

from bourdon.errors import BourdonError
from bourdon.ingest import mcpconfig, setup
from bourdon.status.verdicts import ERROR, WARNING, Problem, problem


def registration_problems(state_dir: Path) -> list[Problem]:
    """One problem per registration that would not start bourdon."""
    found: list[Problem] = []
    for spec in setup.registrations(state_dir):
        agent_id, path = spec.id, spec.config
        fix = f"bourdon setup --agent {agent_id}"
        try:
            raw = setup.read_text(path)
            command = mcpconfig.registered(spec, raw or "")
        except BourdonError as exc:
            found.append(problem("registration_unreadable", WARNING, agent_id,
                                 f"{agent_id}'s registration cannot be checked: {exc.message}",
                                 fix))  # fmt: skip
            continue
        if raw is None or command is None:
            where = "is gone" if raw is None else "no longer holds bourdon's server"
            found.append(problem("registration_missing", WARNING, agent_id,
                                 f"{path}, where setup registered bourdon for {agent_id}, "
                                 f"{where}", fix))  # fmt: skip
            continue
        library = _library(command)
        if library is not None:
            fix = f"bourdon --library {library} setup --agent {agent_id}"
        why = _broken(command, library)
        if why:
            found.append(problem("registration_broken", ERROR, agent_id,
                                 f"{agent_id} starts bourdon as {command[0]!r} ({path}), but "
                                 f"{why}: its MCP server will not start", fix))  # fmt: skip
    return found


def _library(command: list[str]) -> str | None:
    for i, word in enumerate(command[:-1]):
        if word == "--library":
            return command[i + 1]
    return None


def _broken(command: list[str], library: str | None) -> str | None:
    program = Path(command[0])
    if not program.is_file():
        return f"{program} does not exist"
    if not os.access(program, os.X_OK):
        return f"{program} is not executable"
    if library is not None and not Path(library).expanduser().is_dir():
        return f"its library {library} does not exist"
    return None
