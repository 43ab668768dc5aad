"""The ``bourdon`` command: argument parsing and dispatch, nothing more.

Each command parses its arguments, calls one library function and prints the result, as a
readable table or, with ``--json``, as JSON on stdout. Errors are one line on stderr (and a JSON
``{"error": ...}`` on stdout with ``--json``); the exit code says what kind of error it was:

    0 ok · 1 internal error · 2 bad input or usage · 3 invalid manifest · 4 not found
    5 conflict (stale expected digest) · 6 library busy · 7 library or git problem
    8 not allowed · 130 interrupted

Configuration is read here (and by the server factory) and nowhere else: ``--library``, else
``$BOURDON_LIBRARY``, else ``~/agent-library``; ``$BOURDON_HOME``, else ``~/.bourdon``, for
members and the audit log.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bourdon import __version__, output
from bourdon.errors import BourdonError, InputError

DEFAULT_LIBRARY = "~/agent-library"

Handler = Callable[[argparse.Namespace], int]


def library_path(args: argparse.Namespace) -> Path:
    chosen = args.library or os.environ.get("BOURDON_LIBRARY") or DEFAULT_LIBRARY
    return Path(chosen).expanduser()


def home_path() -> Path:
    """``$BOURDON_HOME``, else ``~/.bourdon``: members, peers and the audit log."""
    from bourdon.server_config import bourdon_home

    return bourdon_home()


def open_library(args: argparse.Namespace) -> Any:
    """The library of ``--library``; tells the user on stderr what crash recovery did."""
    from bourdon.library import Library
    from bourdon.server_config import machine_name

    library = Library.open(library_path(args), machine=machine_name())
    report_recovery(library)
    return library


def report_recovery(library: Any) -> None:
    for action in library.recovered:
        output.error(f"recovered from an interrupted write: {action}")
    library.recovered.clear()


def read_input(name: str) -> bytes:
    """The bytes of a file argument; ``-`` is standard input."""
    if name == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(name).expanduser().read_bytes()
    except FileNotFoundError:
        raise InputError(f"no such file: {name}") from None
    except IsADirectoryError:
        raise InputError(f"{name} is a folder; pass a YAML file") from None
    except PermissionError:
        raise InputError(f"cannot read {name}: permission denied") from None


def build_parser() -> argparse.ArgumentParser:
    from bourdon import commands

    parser = argparse.ArgumentParser(
        prog="bourdon",
        description="One shared, auditable memory for every AI coding agent.",
        epilog="Exit codes: 0 ok, 1 internal error, 2 bad input, 3 invalid manifest, "
        "4 not found, 5 conflict, 6 busy, 7 library or git problem, 8 not allowed, "
        "130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"bourdon {__version__}")
    commands.add_global_options(parser, after_command=False)
    # Every command's parser (and its verbs', which inherit the class) takes the global
    # options after the command too: the reference CLI's form (`bourdon serve --library P`).
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=commands.CommandParser
    )
    sub.required = True
    commands.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from bourdon.commands import refused_json

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


def unified_diff(old: bytes, new: bytes, old_name: str, new_name: str) -> str:
    lines = difflib.unified_diff(
        old.decode("utf-8").splitlines(keepends=True),
        new.decode("utf-8").splitlines(keepends=True),
        fromfile=old_name,
        tofile=new_name,
    )
    return "".join(lines)
