"""What ``bourdon`` alone (and ``bourdon --help``) prints: the commands in groups, one line each.

The groups name what a person comes to do. A command that no group names is still listed,
under "Other commands", so a new command is never hidden; ``tests/test_cli_help.py`` asks that
every command be placed in a group.
"""

from __future__ import annotations

import argparse
from typing import Final

GROUPS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("Start here", ("setup", "demo", "init")),
    ("Reading", ("agents", "find", "recent", "summary", "search", "neighbors", "slice")),
    ("Turn context", ("prepare-turn", "turn")),
    ("Writing", ("commit", "forget", "purge", "staging")),
    ("Library", ("show", "history", "diff", "explain", "rollback", "trace", "validate")),
    ("Agents & hooks", ("readers", "export", "export-all", "hooks", "hook")),
    ("Server", ("serve", "ui", "member", "audit")),
    ("Federation & peers", ("peers", "remote", "sync")),
    ("Maintenance", ("status", "doctor", "completion")),
)
OTHER: Final = "Other commands"


def commands(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Every command of ``parser`` with its one-line help, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {a.dest: a.help or "" for a in action._choices_actions}
    return {}


def grouped(parser: argparse.ArgumentParser) -> list[tuple[str, list[tuple[str, str]]]]:
    """``(group title, [(command, help), ...])`` for the groups that have a command."""
    known = commands(parser)
    groups = [
        (title, [(name, known[name]) for name in names if name in known]) for title, names in GROUPS
    ]
    placed = {name for _, names in GROUPS for name in names}
    groups.append((OTHER, [(n, h) for n, h in known.items() if n not in placed]))
    return [(title, rows) for title, rows in groups if rows]


def render(parser: argparse.ArgumentParser) -> str:
    """The grouped listing, aligned on the longest command name."""
    groups = grouped(parser)
    pad = max((len(name) for _, rows in groups for name, _ in rows), default=0) + 2
    lines: list[str] = []
    for title, rows in groups:
        lines.append(f"{title}:")
        lines.extend(f"    {name.ljust(pad)}{text}" for name, text in rows)
        lines.append("")
    return "\n".join(lines) + "\n"


class TopParser(argparse.ArgumentParser):
    """The ``bourdon`` parser: its help lists the commands by group instead of one long list."""

    def format_help(self) -> str:
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, self._mutually_exclusive_groups)
        formatter.add_text(self.description)
        head = formatter.format_help()
        formatter = self._get_formatter()
        for group in self._action_groups:
            shown = [
                a for a in group._group_actions if not isinstance(a, argparse._SubParsersAction)
            ]
            if shown:
                formatter.start_section(group.title)
                formatter.add_arguments(shown)
                formatter.end_section()
        formatter.add_text(
            "Run 'bourdon COMMAND --help' for a command's arguments, and "
            "'bourdon completion bash|zsh|fish' for tab completion."
        )
        formatter.add_text(self.epilog)
        return f"{head}\n{render(self)}{formatter.format_help()}"
