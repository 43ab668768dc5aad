"""``bourdon readers``, ``export``, ``export-all``, ``hooks install|uninstall|status`` and ``hook``.

``bourdon hook ...`` is what the agents' hooks run. It never breaks an agent's turn: it always
exits 0, prints nothing on stdout, and records what went wrong in the library's
``.bourdon/hook-failures.jsonl`` (``$BOURDON_HOME/hook-failures.jsonl`` when there is no
library), where ``bourdon readers`` shows it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bourdon.cli import output
from bourdon.cli.shared import home_path, library_path, open_library
from bourdon.digest import digest8
from bourdon.errors import BourdonError, ConflictError, NotFoundError

if TYPE_CHECKING:
    from bourdon.ingest.pipeline import ExportResult
    from bourdon.readers import Broken
    from bourdon.readers.base import Reader, ReaderContext

_STDIN_LIMIT = 4 * 1024 * 1024


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json

    p = sub.add_parser(
        "readers", help="the agent readers: store found, last export, health, hook failures"
    )
    add_json(p)
    p.set_defaults(func=cmd_readers)

    p = sub.add_parser("export", help="regenerate an agent's rows from its native store")
    p.add_argument("agent", metavar="AGENT", help="the reader (agent id), see 'bourdon readers'")
    p.add_argument(
        "--dry-run", action="store_true", help="show what would change; write nothing at all"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="export even if the store looks unchanged, and past the erosion guard",
    )
    p.add_argument("--store", metavar="PATH", help="read the store at PATH instead of the default")
    add_json(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("export-all", help="export every reader whose store is on this machine")
    p.add_argument("--force", action="store_true", help="as for 'export': skip the guards")
    add_json(p)
    p.set_defaults(func=cmd_export_all)

    p = sub.add_parser("hooks", help="install bourdon's hooks into an agent's settings")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    for name, func, text in (
        ("install", cmd_hooks_install, "merge bourdon's hooks into the agent's settings file"),
        ("uninstall", cmd_hooks_uninstall, "take bourdon's hooks out again, and nothing else"),
    ):
        v = verbs.add_parser(name, help=text)
        v.add_argument("agent", metavar="AGENT", help="claude-code, codex, cursor or gemini-cli")
        v.add_argument("--dry-run", action="store_true", help="show the change; write nothing")
        v.add_argument("--settings", metavar="PATH", help="edit this file instead of the default")
        add_json(v)
        v.set_defaults(func=func)
    v = verbs.add_parser("status", help="installed, not installed or partial, per agent")
    v.add_argument("agent", metavar="AGENT", nargs="?", help="one agent (default: all four)")
    v.add_argument("--settings", metavar="PATH", help="look at this file instead of the default")
    add_json(v)
    v.set_defaults(func=cmd_hooks_status)

    p = sub.add_parser("hook", help="what the agents' hooks run (always exits 0)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    v = verbs.add_parser(
        "export", help="export AGENT's store; silent, exits 0, records failures for 'readers'"
    )
    v.add_argument("agent", metavar="AGENT", nargs="?")
    v.set_defaults(func=cmd_hook_export)
    v = verbs.add_parser(
        "user-prompt",
        help="print turn-start context for the agent (reads the agent's hook JSON on stdin)",
    )
    v.add_argument("--agent", metavar="AGENT", help="the agent whose hook runs this")
    v.set_defaults(func=cmd_hook_user_prompt)


# -- the readers ----------------------------------------------------------------------------


def available_readers(only: str | None = None) -> tuple[dict[str, Reader], list[Broken]]:
    """Every registered reader (or only the one named ``only``), and the plugins that failed."""
    from bourdon.readers import load_readers

    return load_readers(only)


def reader_context(store: str | None = None) -> ReaderContext:
    """Where readers look: this user's home and environment, this machine."""
    from bourdon.serve.config import reader_context as context

    return context(Path(store).expanduser() if store else None)


def _is_library(root: Path) -> bool:
    return (root / "agents").is_dir() and (root / ".git").exists()


def failure_logs(args: argparse.Namespace) -> list[Path]:
    """Where hook failures are recorded: the library's log, and the fallback in BOURDON_HOME."""
    from bourdon.status.readers import failure_logs as logs

    return logs(library_path(args), home_path())


def cmd_readers(args: argparse.Namespace) -> int:
    from bourdon.status.readers import reader_report

    readers, broken = available_readers()
    root = library_path(args)
    report = reader_report(readers, broken, reader_context(), root, failure_logs(args))
    entries, plugins, other = report["readers"], report["broken"], report["other_hook_failures"]
    if args.json:
        output.print_json(
            {
                "library": str(root) if _is_library(root) else None,
                "readers": entries,
                "broken": plugins,
                "other_hook_failures": other,
            }
        )
        return 0
    if not entries:
        print("No reader is registered." if not plugins else "No reader could be loaded.")
    else:
        output.table(
            ["READER", "STORE", "ROWS", "LAST EXPORT", "OUTCOME", "HEALTH"],
            [
                [
                    e["reader"],
                    e["store"] if e["present"] else _nowhere(e),
                    e["rows"],
                    e["last_export"],
                    e["outcome"],
                    "ok" if e["health"]["ok"] else "PROBLEM" if e["present"] else "-",
                ]
                for e in entries
            ],
        )
    absent = [e["reader"] for e in entries if e["present"] is False]
    if absent:
        print(
            f"  no store on this machine for {', '.join(absent)} ('bourdon readers --json' says "
            "where each was looked for, and which variable points at another place)"
        )
    for e in entries:
        if not e["registered"]:
            print(f"  {e['reader']}: {e['health']['message']}; its last export is shown")
        if e["present"] and not e["health"]["ok"]:
            fix = f"; fix: {e['health']['fix']}" if e["health"]["fix"] else ""
            print(f"  {e['reader']}: {e['health']['message']}{fix}")
        if e["drifting"]:
            drift = e["drift"]
            print(f"  {e['reader']}: DRIFTING since {drift['checked_at']}: {drift['reason']}")
        if e["outcome"] == "refused":
            print(f"  {e['reader']}: last export refused: {e['reason']}")
        fail = e["last_hook_failure"]
        if fail and not e["hook_failure_resolved"]:
            print(f"  {e['reader']}: hook failed at {fail.get('when')}: {fail.get('error')}")
    for fail in other:
        print(f"  hook '{fail.get('what')}' failed at {fail.get('when')}: {fail.get('error')}")
    if plugins:
        print("Reader plugins that failed to load:")
        for b in plugins:
            print(f"  {b['name']} ({b['target']}): {b['error']}")
    return 0


def _nowhere(entry: dict[str, Any]) -> str:
    return "(none here)" if entry["registered"] else "(not registered)"


def _reader(name: str) -> Reader:
    readers, broken = available_readers(only=name)
    if name in readers:
        return readers[name]
    for b in broken:
        if b.name == name:
            raise BourdonError(f"the {name} reader could not be loaded: {b.error}")
    raise NotFoundError(f"no reader named {name!r}; see 'bourdon readers'")


# -- export ---------------------------------------------------------------------------------


def cmd_export(args: argparse.Namespace) -> int:
    from bourdon.ingest.pipeline import MISSING, REFUSED, export_reader

    reader = _reader(args.agent)
    ctx = reader_context(args.store)
    library = open_library(args)
    result = export_reader(library, reader, ctx, dry_run=args.dry_run, force=args.force)
    if result.outcome == MISSING:
        fix = reader.health(ctx).fix
        raise NotFoundError(f"{result.reason}{'; ' + fix if fix else ''}")
    if args.json:
        output.print_json(result.to_dict())
    else:
        _print_result(result)
    if result.outcome == REFUSED:
        output.error(f"export of {result.reader} refused: {result.reason}")
        return ConflictError.exit_code
    return 0


def _print_result(result: ExportResult) -> None:
    name = result.reader
    secrets = sum(result.redacted.values())
    redacted = f", {secrets} secret{'s' if secrets != 1 else ''} redacted" if secrets else ""
    if result.outcome == "unchanged":
        print(f"{name}: the store has not changed since the last export; nothing to do")
    elif result.outcome == "dry_run":
        changes = result.changes
        print(
            f"Dry run: exporting {name} would add {result.added}, change {result.updated} and "
            f"remove {result.removed} rows ({result.rows} rows from {result.store}{redacted})"
        )
        if changes is not None:
            for mark, part in (
                ("+", changes.added),
                ("~", changes.changed),
                ("-", changes.removed),
            ):
                for section, labels in part.items():
                    for label in labels:
                        print(f"  {mark} {section}: {label}")
        if result.reason:
            print(f"  the erosion guard would refuse it: {result.reason}")
        print("Nothing was written.")
    elif result.outcome == "refused":
        print(f"{name}: not exported ({result.rows} rows read from {result.store}{redacted})")
    elif result.outcome == "no_op":
        print(f"{name}: nothing new ({result.rows} rows from {result.store}{redacted})")
    else:
        print(
            f"Exported {name}: +{result.added} added, ~{result.updated} updated, "
            f"-{result.removed} removed ({result.rows} rows from {result.store}{redacted})"
        )
        print(f"  version {output.short(result.version)}  digest {digest8(result.digest or '')}")
        if result.reason:
            print(f"  {result.reason}")
    if result.drifting:
        print(f"  warning: {name} is drifting: {result.drifting['reason']}")


def cmd_export_all(args: argparse.Namespace) -> int:
    from bourdon.ingest.pipeline import GOOD_OUTCOMES, MISSING, export_reader

    readers, broken = available_readers()
    ctx = reader_context()
    library = open_library(args)
    progress = _Progress(sys.stderr)
    results: list[dict[str, Any]] = []
    names = sorted(readers)
    for i, name in enumerate(names, 1):
        step = f"[{i}/{len(names)}] {name}"
        progress.start(f"{step}: exporting...")
        try:
            result = export_reader(library, readers[name], ctx, force=args.force)
        except BourdonError as exc:
            results.append(
                {"reader": name, "agent_id": name, "outcome": "failed", "reason": exc.message}
            )
            progress.done(f"{step}: FAILED: {exc.message}")
            continue
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            results.append(
                {"reader": name, "agent_id": name, "outcome": "failed", "reason": message}
            )
            progress.done(f"{step}: FAILED: {message}")
            continue
        results.append(result.to_dict())
        progress.done(f"{step}: {_one_line(result)}")
    bad = [r for r in results if r["outcome"] not in GOOD_OUTCOMES | {MISSING}]
    plugins = [{"name": b.name, "target": b.target, "error": b.error} for b in broken]
    if args.json:
        output.print_json({"readers": results, "broken": plugins, "ok": not bad})
    else:
        output.table(
            ["READER", "OUTCOME", "ROWS", "+", "~", "-", "REDACTED", "NOTE"],
            [
                [
                    r["reader"],
                    "no store" if r["outcome"] == MISSING else r["outcome"],
                    *(
                        [None] * 5
                        if r["outcome"] in (MISSING, "failed")
                        else [
                            r.get("rows"),
                            r.get("added"),
                            r.get("updated"),
                            r.get("removed"),
                            sum((r.get("redacted") or {}).values()),
                        ]
                    ),
                    "" if r["outcome"] in (MISSING, "unchanged") else r.get("reason") or "",
                ]
                for r in results
            ],
        )
        exported = sum(1 for r in results if r["outcome"] in GOOD_OUTCOMES)
        absent = sum(1 for r in results if r["outcome"] == MISSING)
        parts = [f"{exported} exported or up to date", f"{absent} without a store here"]
        parts.append(f"{len(bad)} failed or refused")
        if plugins:
            parts.append(f"{len(plugins)} plugin{'s' if len(plugins) != 1 else ''} failed to load")
        print(", ".join(parts))
    return 1 if bad else 0


def _one_line(result: ExportResult) -> str:
    seconds = f"{result.seconds:.1f} s"
    if result.outcome == "missing":
        return "no store on this machine, skipped"
    if result.outcome == "unchanged":
        return f"unchanged ({result.rows} rows)"
    if result.outcome == "refused":
        return f"REFUSED: {result.reason}"
    return (
        f"{result.outcome.replace('_', '-')}: {result.rows} rows "
        f"(+{result.added} ~{result.updated} -{result.removed}) in {seconds}"
    )


class _Progress:
    """One line per reader on stderr; on a terminal the running line is rewritten in place."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())

    def start(self, text: str) -> None:
        if self.tty:
            self.stream.write(f"\r\033[K{text}")
            self.stream.flush()

    def done(self, text: str) -> None:
        self.stream.write(f"\r\033[K{text}\n" if self.tty else f"{text}\n")
        self.stream.flush()


# -- hooks ----------------------------------------------------------------------------------


def _settings(args: argparse.Namespace, agent: str) -> Path:
    from bourdon.ingest.hooks import settings_path

    override = Path(args.settings) if args.settings else None
    return settings_path(agent, Path.home(), override)


def cmd_hooks_install(args: argparse.Namespace) -> int:
    from bourdon.ingest.hooks import install

    change = install(
        args.agent, _settings(args, args.agent), state_dir=home_path(), dry_run=args.dry_run
    )
    _report_change(change, args.json)
    if change.changed and not args.dry_run and shutil.which("bourdon") is None:
        output.error(
            "warning: 'bourdon' is not on PATH here; the agent's hooks need it on the PATH the "
            "agent runs with"
        )
    return 0


def cmd_hooks_uninstall(args: argparse.Namespace) -> int:
    from bourdon.ingest.hooks import uninstall

    change = uninstall(
        args.agent, _settings(args, args.agent), state_dir=home_path(), dry_run=args.dry_run
    )
    _report_change(change, args.json)
    return 0


def _report_change(change: Any, as_json: bool) -> None:
    if as_json:
        output.print_json({**change.to_dict(), "diff": change.diff()})
        return
    verb = "install" if change.action == "install" else "uninstall"
    if not change.changed:
        state = "already installed" if verb == "install" else "not installed"
        print(f"bourdon's hooks for {change.agent} are {state} in {change.path}; nothing changed")
        return
    if change.dry_run:
        print(f"Dry run: '{verb}' would change {change.path} (nothing was written):")
        sys.stdout.write(change.diff())
        return
    items = change.added if verb == "install" else change.removed
    done = "Installed" if verb == "install" else "Removed"
    where = "into" if verb == "install" else "from"
    print(f"{done} bourdon's hooks for {change.agent} {where} {change.path}:")
    for item in items:
        print(f"  {item}")
    if change.backup:
        print(f"  backup of the previous file: {change.backup}")
    if change.after is None:
        print(f"  {change.path} held nothing else and was removed (install had created it)")


def cmd_hooks_status(args: argparse.Namespace) -> int:
    from bourdon.ingest.hooks import AGENTS, status

    agents = [args.agent] if args.agent else list(AGENTS)
    if args.settings and len(agents) != 1:
        raise BourdonError("--settings needs an AGENT: the file belongs to one agent")
    found = []
    for agent in agents:
        try:
            found.append(status(agent, _settings(args, agent)).to_dict())
        except BourdonError as exc:
            if args.agent:
                raise
            found.append({"agent": agent, "state": "unreadable", "error": exc.message})
    if args.json:
        output.print_json({"hooks": found})
        return 0
    output.table(
        ["AGENT", "STATE", "SETTINGS"],
        [[s["agent"], s["state"], s.get("settings") or s.get("error")] for s in found],
    )
    for s in found:
        for missing in s.get("missing", []) if s["state"] == "partial" else []:
            print(f"  {s['agent']}: missing {missing}")
    return 0


# -- what the hooks run ---------------------------------------------------------------------


def _hook_input() -> dict[str, Any]:
    """The agent's hook JSON on stdin, if any (never waits on a terminal)."""
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return {}
        raw = sys.stdin.buffer.read(_STDIN_LIMIT)
        data = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
    except Exception:
        return {}
    return data if isinstance(data, dict) else {}


def cmd_hook_export(args: argparse.Namespace) -> int:
    """Export the store of the agent whose hook called; exit 0, print nothing, whatever happens."""
    what = f"export {args.agent or '(no agent)'}"
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            _hook_export(args)
    except BaseException as exc:  # an agent's turn must never break because of bourdon
        if isinstance(exc, SystemExit) and not exc.code:
            return 0
        message = exc.message if isinstance(exc, BourdonError) else f"{type(exc).__name__}: {exc}"
        _record(args, what, args.agent, message)
    return 0


def _hook_export(args: argparse.Namespace) -> None:
    from bourdon.ingest.pipeline import REFUSED, export_reader, unchanged

    if not args.agent:
        raise BourdonError("the hook names no agent: run 'bourdon hooks install AGENT' again")
    event = _hook_input()
    reader = _reader(args.agent)
    root = library_path(args)
    if not _is_library(root):
        raise BourdonError(
            f"no library at {root}: create one with 'bourdon init', or set BOURDON_LIBRARY in "
            "the agent's environment"
        )
    ctx = reader_context()
    if unchanged(root, reader, ctx) is not None:  # nothing new: no library, git or schema
        return
    from bourdon.store.provenance import Provenance

    session = event.get("session_id") or event.get("conversation_id")
    transcript = event.get("transcript_path")
    who = Provenance(
        caller=f"reader:{reader.name}",
        session=str(session)[:128] if isinstance(session, str) and session else None,
        transcript=str(transcript)[:512] if isinstance(transcript, str) and transcript else None,
        machine=ctx.machine,
    )
    library = open_library(args)
    try:
        result = export_reader(library, reader, ctx, provenance=who)
    finally:
        library.close()
    if result.outcome == REFUSED:
        raise BourdonError(f"export refused: {result.reason}")
    if result.outcome == "missing":
        raise BourdonError(f"{result.reason}; see 'bourdon readers'")


def _record(args: argparse.Namespace, what: str, agent: str | None, error: str) -> None:
    from bourdon.ingest.pipeline import HOOK_FAILURES, hook_failures_path, record_hook_failure

    with contextlib.suppress(Exception):
        root = library_path(args)
        log = hook_failures_path(root) if _is_library(root) else home_path() / HOOK_FAILURES
        record_hook_failure(log, what, agent, error)


# Agents that read turn-start context from a hook's JSON answer (Claude Code's format, which
# Codex and Gemini CLI follow). Cursor's prompt hook cannot add context: it gets nothing.
_CONTEXT_HOOKS: Final = {"claude-code", "codex", "gemini-cli"}


def cmd_hook_user_prompt(args: argparse.Namespace) -> int:
    """Print what bourdon recognises in the prompt, as the agent's hook expects; always exit 0.

    Reads the hook JSON on stdin (``prompt``, ``cwd``), recognises known entities in-process
    from the library (no server needed) and prints
    ``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": ...}}``.
    Prints nothing when nothing is recognised, and records any failure for
    ``bourdon readers`` instead of breaking the agent's turn.
    """
    agent = args.agent or "claude-code"
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            answer = _turn_context(args, _hook_input())
    except BaseException as exc:  # an agent's turn must never break because of bourdon
        if not (isinstance(exc, SystemExit) and not exc.code):
            message = (
                exc.message if isinstance(exc, BourdonError) else f"{type(exc).__name__}: {exc}"
            )
            _record(args, "user-prompt", agent, message)
        return 0
    if answer and agent in _CONTEXT_HOOKS:
        sys.stdout.write(
            json.dumps(
                {
                    "hookSpecificOutput": {
                        "hookEventName": "UserPromptSubmit",
                        "additionalContext": answer,
                    }
                }
            )
            + "\n"
        )
    return 0


def _turn_context(args: argparse.Namespace, event: dict[str, Any]) -> str:
    from bourdon.query.context import prepare_recognition_context
    from bourdon.query.index import Index

    prompt = event.get("prompt") or event.get("user_prompt") or ""
    if not isinstance(prompt, str) or not prompt.strip():
        return ""
    root = library_path(args)
    if not _is_library(root):
        raise BourdonError(f"no library at {root}: create one with 'bourdon init'")
    index = Index(root.absolute())
    index.refresh()
    answer = prepare_recognition_context(index, prompt, "team", False)
    return str(answer["prompt_context"])
