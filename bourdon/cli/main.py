"""The ``bourdon`` command: argument parsing and dispatch, nothing more.

Each command parses its arguments, calls one library function and prints the result, as a
readable table or, with ``--json``, as JSON on stdout. Errors are one line on stderr (and a JSON
``{"error": ...}`` on stdout with ``--json``); the exit code says what kind of error it was:

    0 ok · 1 internal error · 2 bad input or usage · 3 invalid manifest · 4 not found
    5 conflict (stale expected digest) · 6 library busy · 7 library or git problem
    8 not allowed · 9 port in use · 130 interrupted

Configuration is read here (and by the server factory) and nowhere else: ``--library``, else
``$BOURDON_LIBRARY``, else ``~/agent-library``; ``$BOURDON_HOME``, else ``~/.bourdon``, for
members and the audit log.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from bourdon import __version__
from bourdon.cli import (
    completion,
    demo,
    export,
    forgetting,
    history,
    hooks,
    members,
    output,
    peers,
    reads,
    search,
    serve,
    setup,
    staging,
    trace,
    walk,
    writing,
)
from bourdon.cli import status as status_commands
from bourdon.cli import sync as sync_commands
from bourdon.cli.overview import TopParser
from bourdon.cli.shared import CommandParser, Handler, add_global_options, refused_json
from bourdon.errors import BourdonError


def register(sub: Any) -> None:
    for group in (
        writing,
        forgetting,
        history,
        trace,
        staging,
        reads,
        walk,
        search,
        export,
        hooks,
        serve,
        members,
        peers,
        sync_commands,
        status_commands,
        demo,
        setup,
        completion,
    ):
        group.register(sub)


def build_parser() -> argparse.ArgumentParser:
    parser = TopParser(
        prog="bourdon",
        description="One shared, auditable memory for every AI coding agent.",
        epilog="Exit codes: 0 ok, 1 internal error, 2 bad input, 3 invalid manifest, "
        "4 not found, 5 conflict, 6 busy, 7 library or git problem, 8 not allowed, "
        "9 port in use, 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"bourdon {__version__}")
    add_global_options(parser, after_command=False)
    # Every command's parser (and its verbs', which inherit the class) takes the global
    # options after the command too: the reference CLI's form (`bourdon serve --library P`).
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    register(sub)  # no command at all: main() prints the grouped help (as `docker` does)
    # `bourdon completion` writes its script from the whole tree, which only main builds
    sub.choices["completion"].set_defaults(build_parser=build_parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    refusal = refused_json(args)
    if refusal is not None:
        output.error(refusal)
        return 2
    handler: Handler = args.func
    try:
        return handler(args)
    except BourdonError as exc:
        output.error(exc.message)
        if getattr(args, "json", False):
            output.print_json(exc.to_dict())
        return exc.exit_code
    except KeyboardInterrupt:
        output.error("interrupted")
        return 130
    except BrokenPipeError:
        return 0  # the reader of our output went away (``bourdon history x | head``)
    except Exception as exc:
        if os.environ.get("BOURDON_DEBUG"):
            raise
        output.error(
            f"internal error: {type(exc).__name__}: {exc} (set BOURDON_DEBUG=1 for details)"
        )
        return 1
