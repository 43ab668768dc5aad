"""What every command group shares: the library and home it works on, where readers look, input
files, diffs, how a write is reported, the peers check, and the parser class that takes the
global options (``--library``, ``--json``) after a command too, as the reference Bourdon CLI
takes them (``bourdon serve --library PATH``). Command modules import each other through here
only.

Configuration is read here and by the server factory, nowhere else: ``--library``, else
``$BOURDON_LIBRARY``, else ``~/agent-library``; ``$BOURDON_HOME``, else ``~/.bourdon``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bourdon.cli import output
from bourdon.digest import digest8
from bourdon.errors import InputError

if TYPE_CHECKING:
    from bourdon.query.index import Index
    from bourdon.readers.base import ReaderContext
    from bourdon.store.writes import WriteResult

DEFAULT_LIBRARY = "~/agent-library"

Handler = Callable[[argparse.Namespace], int]

JSON_HELP = "print JSON for scripts"


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


def add_access(parser: argparse.ArgumentParser) -> None:
    """``--access-level`` and ``--private``, as every read command takes them (``levels``)."""
    parser.add_argument(
        "--access-level",
        choices=("public", "team", "private"),
        default="team",
        help="the widest visibility to show (default: team)",
    )
    parser.add_argument(
        "--private",
        action="store_true",
        help="show private rows too (same as --access-level private)",
    )


def add_limit(
    parser: argparse.ArgumentParser,
    *,
    default: int | None,
    most: int | None,
    what: str,
    shown_default: int | None = None,
) -> None:
    """``--limit N``, the same on every command: a value outside 1..``most`` is clamped into it,
    and the command says so on stderr (bounds are clamped, never refused: DESIGN section 5)."""
    given = default if default is not None else shown_default
    bounds = f"1-{most:,}" if most else "at least 1"
    parser.add_argument(
        "--limit",
        type=bounded("--limit", most),
        default=default,
        metavar="N",
        help=f"{what} ({bounds}, default {given}; out of range is clamped, with a warning)",
    )


def bounded(option: str, most: int | None) -> Callable[[str], int]:
    """An argparse ``type``: a whole number, clamped to 1..``most`` with a warning on stderr."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        clamped = max(1, value if most is None else min(most, value))
        if clamped != value:
            side = "below 1" if value < 1 else f"above {most:,}"
            output.error(f"warning: {option} {value} is {side}; using {clamped:,}")
        return clamped

    return parse


def refused_json(args: argparse.Namespace) -> str | None:
    """Why ``--json`` cannot be honoured for the parsed command, or ``None`` if it can."""
    if getattr(args, "json", False) and not getattr(args, "prints_json", False):
        return f"'{args.command_prog}' prints no JSON; drop --json"
    return None


def library_path(args: argparse.Namespace) -> Path:
    chosen = args.library or os.environ.get("BOURDON_LIBRARY") or DEFAULT_LIBRARY
    return Path(chosen).expanduser()


def home_path() -> Path:
    """``$BOURDON_HOME``, else ``~/.bourdon``: members, peers and the audit log."""
    from bourdon.serve.config import bourdon_home

    return bourdon_home()


def reader_context(store: str | None = None) -> ReaderContext:
    """Where readers look: this user's home and environment, this machine."""
    from bourdon.serve.config import reader_context as context

    return context(Path(store).expanduser() if store else None)


def open_library(args: argparse.Namespace) -> Any:
    """The library of ``--library``; tells the user on stderr what crash recovery did."""
    from bourdon.serve.config import machine_name
    from bourdon.store.library import Library

    library = Library.open(library_path(args), machine=machine_name())
    report_recovery(library)
    return library


def report_recovery(library: Any) -> None:
    for action in library.recovered:
        output.error(f"recovered from an interrupted write: {action}")
    library.recovered.clear()


def load_index(args: argparse.Namespace) -> Index:
    """The index of ``--library``, opened (and reconciled) first so a bad path says so."""
    from bourdon.query.index import Index
    from bourdon.store.library import Library

    root = library_path(args)
    library = Library.open(root)  # says clearly when this is not a library, and reconciles
    report_recovery(library)
    library.close()
    index = Index(root.absolute())
    index.refresh()
    return index


def levels(args: argparse.Namespace) -> tuple[str, bool]:
    """``(access_level, include_private)`` from ``--access-level`` and ``--private``."""
    if args.private:
        return "private", True
    return args.access_level, args.access_level == "private"


def warn(answer: dict[str, Any]) -> None:
    """An answer's ``meta.warnings``, on standard error."""
    for warning in answer.get("meta", {}).get("warnings", []):
        output.error(f"warning: {warning}")


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


def unified_diff(old: bytes, new: bytes, old_name: str, new_name: str) -> str:
    lines = difflib.unified_diff(
        old.decode("utf-8").splitlines(keepends=True),
        new.decode("utf-8").splitlines(keepends=True),
        fromfile=old_name,
        tofile=new_name,
    )
    return "".join(lines)


def write_summary(result: WriteResult) -> dict[str, Any]:
    """The commit summary of the wire contract (``no_op`` only when nothing was written)."""
    summary: dict[str, Any] = {
        "agent_id": result.agent_id,
        "op": result.op,
        "added": result.stats.total_added,
        "updated": result.stats.total_updated,
        "removed": result.stats.total_removed,
        "total": result.totals.get("total", 0),
        "counts": {k: v for k, v in result.totals.items() if k != "total"},
        "path": result.path,
        "digest": result.digest,
        "digest8": digest8(result.digest),
        "previous_digest": result.previous_digest,
        "version_id": result.version,
        "last_updated": result.last_updated,
    }
    if result.no_op:
        summary["no_op"] = True
    if result.staged:
        summary["staged"] = True
    return summary


def report_write(result: WriteResult, as_json: bool) -> None:
    """A write's outcome: one summary line and its version, or the wire summary as JSON."""
    if as_json:
        output.print_json(write_summary(result))
        return
    if result.no_op:
        short = digest8(result.digest)
        print(f"No change: {result.agent_id} already holds these rows (digest {short})")
        return
    verb = {
        "merge": "Merged into",
        "replace": "Replaced",
        "rollback": "Rolled back",
        "promote": "Promoted into",
        "stage": "Staged for",
    }.get(result.op, result.op)
    s = result.stats
    print(
        f"{verb} {result.agent_id}: +{s.total_added} added, ~{s.total_updated} updated, "
        f"-{s.total_removed} removed ({output.plural(result.totals.get('total', 0), 'row')} in all)"
    )
    print(f"  version {output.short(result.version)}  digest {digest8(result.digest)}")


def check_peers(deadline: float) -> dict[str, dict[str, Any]] | None:
    """Ask every peer of peers.yaml ``list_agents`` once, all at once, under ``deadline`` s.

    Each peer's ``peer_outcome`` plus ``agents`` (how many it listed); ``None`` with no peer.
    """
    import anyio

    from bourdon.federation.client import peer_outcome
    from bourdon.serve.config import build_federation

    federation = build_federation(home_path(), [])
    if federation is None:
        return None

    async def check() -> list[Any]:
        try:
            return await federation.ask("list_agents", {"federation_hop": 1}, deadline)
        finally:
            await federation.aclose()

    return {
        a.peer: {
            **peer_outcome(a, "list_agents"),
            "agents": len((a.payload or {}).get("agents") or []) if a.payload else None,
        }
        for a in anyio.run(check)
    }
