"""The CLI's commands, one module per group; ``register`` adds them all to the parser.

Every command's parser is a ``CommandParser``: the global options (``--library``, ``--json``)
are accepted after the command and its verbs too, with the same meaning as before it, as the
reference Bourdon CLI takes them (``bourdon serve --library PATH``, issue 11).
"""

from __future__ import annotations

import argparse
from typing import Any

from bourdon.commands import demo, export, history, members, peers, reads, serve, staging, writing
from bourdon.commands import status as status_commands
from bourdon.commands import sync as sync_commands

JSON_HELP = "print JSON for scripts"


def register(sub: Any) -> None:
    for group in (
        writing,
        history,
        staging,
        reads,
        export,
        serve,
        members,
        peers,
        sync_commands,
        status_commands,
        demo,
    ):
        group.register(sub)


def add_global_options(parser: argparse.ArgumentParser, *, after_command: bool) -> None:
    """``--library`` and ``--json``, on the top parser or (``after_command``) a command's.

    After the command they default to ``SUPPRESS``: a value given before the command is then
    not overwritten by the command parser's default, and one given after it wins.
    """
    title = "global options (also accepted before the command)" if after_command else None
    group = parser.add_argument_group(title) if title else parser
    unset = argparse.SUPPRESS if after_command else None
    group.add_argument(
        "--library",
        metavar="PATH",
        default=unset,
        help="the library folder (default: $BOURDON_LIBRARY, else ~/agent-library)",
    )
    group.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if after_command else False,
        help=JSON_HELP,
    )


class CommandParser(argparse.ArgumentParser):
    """The parser of one command or verb: it takes the global options too.

    A command that prints no JSON (``serve``, ``demo``, the ``hook`` verbs) never calls
    ``add_json``; its help says ``--json`` is refused, and ``cli.main`` refuses it (exit 2).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.prints_json = False
        self.has_verbs = False
        add_global_options(self, after_command=True)
        self.set_defaults(command_prog=self.prog)

    def add_subparsers(self, **kwargs: Any) -> Any:
        self.has_verbs = True
        return super().add_subparsers(**kwargs)

    def format_help(self) -> str:
        for action in self._actions:
            if "--json" in action.option_strings and not (self.prints_json or self.has_verbs):
                action.help = f"refused: '{self.prog}' prints no JSON"
        return super().format_help()


def add_json(parser: argparse.ArgumentParser) -> None:
    """Mark a command as printing JSON with ``--json`` (the option itself is global)."""
    if isinstance(parser, CommandParser):
        parser.prints_json = True
    parser.set_defaults(prints_json=True)


def refused_json(args: argparse.Namespace) -> str | None:
    """Why ``--json`` cannot be honoured for the parsed command, or ``None`` if it can."""
    if getattr(args, "json", False) and not getattr(args, "prints_json", False):
        return f"'{args.command_prog}' prints no JSON; drop --json"
    return None
