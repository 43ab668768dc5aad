"""``bourdon setup [--agent A] [--dry-run] [--yes] [--undo]``: wire this machine's agents.

For each agent installed here (``bourdon.ingest.agents``): bourdon's MCP server in the agent's
own configuration file, run by this very bourdon (its absolute path) on the chosen library
(``--library``, made absolute); its export hooks where bourdon has hooks for it; then the
library is created (or a reference library adopted) and exported a first time. The plan, its
application and the undo are ``bourdon.ingest.setup``; this module asks, calls and prints.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bourdon.cli import output
from bourdon.cli.shared import home_path, library_path, open_library, reader_context
from bourdon.errors import BourdonError, InputError

if TYPE_CHECKING:
    from bourdon.ingest.agents import Agent, Machine
    from bourdon.ingest.outcome import ExportResult
    from bourdon.ingest.setup import FileChange, Session


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json

    p = sub.add_parser(
        "setup",
        help="wire every agent here to bourdon: MCP server, hooks, library, first export",
    )
    p.add_argument(
        "--agent",
        action="append",
        metavar="A",
        help="only this agent (repeatable; default: every agent installed here)",
    )
    p.add_argument("--dry-run", action="store_true", help="show the plan and diffs; write nothing")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation (scripts)")
    p.add_argument(
        "--undo", action="store_true", help="restore every file setup changed, and nothing else"
    )
    add_json(p)
    p.set_defaults(func=cmd_setup)


def _machine() -> Machine:
    from bourdon.ingest.agents import Machine

    appdata = os.environ.get("APPDATA")
    return Machine(
        home=Path.home(),
        path=os.environ.get("PATH", ""),
        platform=sys.platform,
        appdata=Path(appdata) if appdata else None,
        env=os.environ,
    )


def _confirmed(args: argparse.Namespace, question: str) -> bool:
    if args.yes or args.dry_run:
        return True
    if not sys.stdin.isatty():
        raise InputError(
            "setup changes the agents' configuration files and needs confirmation: run it in "
            "a terminal, or pass --yes (--dry-run shows the plan)"
        )
    print(f"{question} [y/N] ", end="", flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def cmd_setup(args: argparse.Namespace) -> int:
    from bourdon.ingest import agents as found
    from bourdon.ingest import setup

    machine = _machine()
    if args.undo:
        return _undo(args)
    chosen = found.installed(machine, args.agent)
    skipped = [] if args.agent else found.without_mcp(machine)
    root = library_path(args).absolute()
    command = [*_prefix(root), "serve"]
    changes = setup.plan(chosen, command)
    if args.dry_run:
        changes += _hooks(chosen, root, None)
        _report(args, root, changes, skipped, None, dry_run=True)
        return 0
    question = f"Register bourdon with {_count(len(chosen), 'agent')} and install hooks?"
    if not _confirmed(args, question):
        print("Nothing changed.")
        return 0
    session = setup.Session(home_path())
    setup.apply(changes, session)
    changes += _hooks(chosen, root, session)
    session.save()
    created = _library(root)
    exports = _export(args)
    _report(args, root, changes, skipped, exports, dry_run=False, created=created)
    return 0


def _prefix(root: Path) -> list[str]:
    from bourdon.ingest.hookfiles import running_bourdon

    return [*running_bourdon(), "--library", str(root)]


def _hooks(chosen: list[Agent], root: Path, session: Session | None) -> list[FileChange]:
    """Install the export hooks of each chosen agent bourdon has hooks for (``session`` None:
    a dry run)."""
    from bourdon.ingest import hooks
    from bourdon.ingest.hookfiles import TARGETS, settings_path
    from bourdon.ingest.setup import HOOKS, OTHER, FileChange

    state_dir = home_path()
    changes = []
    for agent in chosen:
        if agent.id not in TARGETS:
            continue
        path = settings_path(agent.id, Path.home(), env=os.environ)
        change = FileChange(agent.id, path, HOOKS, None, None)
        try:
            preview = hooks.install(
                agent.id, path, state_dir=state_dir, dry_run=True, prefix=_prefix(root)
            )
            change.before, change.after, change.entries = (
                preview.before,
                preview.after,
                preview.added,
            )
            if session is not None and preview.changed:
                session.touch(path, agent.id, HOOKS)
                session.touch(state_dir / hooks.STATE_FILE, agent.id, OTHER)
                done = hooks.install(agent.id, path, state_dir=state_dir, prefix=_prefix(root))
                for made in [done.backup, *done.created_files]:  # a backup, a plugin's manifest
                    if made is not None:
                        session.created(made, agent.id)
        except BourdonError as exc:
            change.error = exc.message
            change.after = change.before
        changes.append(change)
    return changes


def _library(root: Path) -> bool:
    """Create the library (or adopt a reference library there); True if it was made now."""
    from bourdon.serve.config import machine_name
    from bourdon.status.readers import is_library
    from bourdon.store import adopt
    from bourdon.store.library import Library

    if is_library(root):
        return False
    plan = adopt.plan(root, output.error) if adopt.is_reference_library(root) else None
    Library.init(root, machine=machine_name(), progress=output.error, adoption=plan).close()
    output.error(f"{'adopted the reference library' if plan else 'created a library'} at {root}")
    return True


def _export(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The first ``export-all``, one line of progress per reader on stderr."""
    from bourdon.ingest import selection
    from bourdon.ingest.exportall import export_all

    readers, _ = selection.available_readers()
    library = open_library(args)

    def finished(i: int, n: int, name: str, result: ExportResult | None, why: str | None) -> None:
        note = why if result is None else f"{result.outcome} ({result.rows} rows)"
        output.error(f"[{i}/{n}] export {name}: {note}")

    try:
        return export_all(library, readers, reader_context(), finished=finished)
    finally:
        library.close()


def _report(
    args: argparse.Namespace,
    root: Path,
    changes: list[FileChange],
    skipped: list[str],
    exports: list[dict[str, Any]] | None,
    *,
    dry_run: bool,
    created: bool = False,
) -> None:
    from bourdon.ingest.agents import NO_MCP
    from bourdon.ingest.setup import CREATED, UNREADABLE, UPDATED

    changed = sum(1 for c in changes if c.state in (CREATED, UPDATED))
    if args.json:
        output.print_json(
            {
                "library": str(root),
                "library_created": created,
                "dry_run": dry_run,
                "changed": changed,
                "files": [c.to_dict() | ({"diff": c.diff()} if dry_run else {}) for c in changes],
                "skipped": [{"agent": a, "reason": NO_MCP[a]} for a in skipped],
                "exports": exports,
            }
        )
        return
    if not changes:
        print("No agent found here to set up (bourdon readers shows where each is looked for).")
    for c in changes:
        what = "MCP server" if c.kind == "server" else "hooks"
        print(f"{c.state:<10} {c.agent:<15} {what:<10} {c.path}")
        if c.state == UNREADABLE:
            print(f"           left untouched: {c.error}")
        elif c.state != "unchanged":
            for item in c.entries:
                print(f"           {'would add' if dry_run else '+'} {item}")
        if dry_run and c.state in (CREATED, UPDATED):
            sys.stdout.write(c.diff())
    for agent in skipped:
        print(f"skipped    {agent:<15} {NO_MCP[agent]}")
    if dry_run:
        from bourdon.status.readers import is_library

        then = "exported" if is_library(root) else "created (or adopted) and exported"
        print(f"Library {root}: would be {then} a first time.")
        print(f"Dry run: {_count(changed, 'file')} would change; nothing was written.")
    elif changed:
        print(f"{_count(changed, 'file')} changed; 'bourdon setup --undo' puts them back.")
    else:
        print("Nothing changed: every agent found was already set up.")
    if exports is not None:
        bad = [e for e in exports if e["outcome"] == "failed"]
        done = _count(len(exports) - len(bad), "reader")
        print(f"Library {root}: exported {done}, {len(bad)} failed.")
    if not dry_run and changed:
        print("Restart the agents that are running so they load bourdon's server.")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _undo(args: argparse.Namespace) -> int:
    from bourdon.ingest import hooks
    from bourdon.ingest.setup import STATE_FILE, undo

    state_dir = home_path()
    if not (state_dir / STATE_FILE).exists():
        print("setup has changed nothing here; nothing to undo.")
        return 0
    if args.dry_run:
        raise InputError("--undo has no dry run; 'bourdon setup --undo' asks before it acts")
    if not _confirmed(args, "Restore every file setup changed?"):
        print("Nothing changed.")
        return 0

    def uninstall(agent: str, path: Path) -> None:
        hooks.uninstall(agent, path, state_dir=state_dir)

    steps = undo(state_dir, uninstall)
    if args.json:
        output.print_json({"undone": [s.to_dict() for s in steps]})
        return 0
    for step in steps:
        note = f" ({step.note})" if step.note else ""
        print(f"{step.action:<16} {step.agent:<15} {step.path}{note}")
    print("The library was kept; remove it by hand if you want it gone.")
    return 0
