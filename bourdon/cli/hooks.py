"""``bourdon hooks install|uninstall|status`` and ``bourdon hook export|user-prompt``.

``bourdon hook ...`` is what the agents' hooks run. It never breaks an agent's turn: it always
exits 0, prints nothing on stdout (but the context a prompt hook asks for), and records what
went wrong in the library's ``.bourdon/hook-failures.jsonl`` (``$BOURDON_HOME/hook-failures.jsonl``
when there is no library), where ``bourdon readers`` shows it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any, Final

from bourdon.cli import output
from bourdon.cli.shared import home_path, library_path, open_library, reader_context
from bourdon.errors import BourdonError
from bourdon.ingest import selection

_STDIN_LIMIT = 4 * 1024 * 1024


def register(sub: Any) -> None:
    from bourdon.cli.shared import add_json
    from bourdon.ingest.hookfiles import AGENTS

    agents = ", ".join(AGENTS)
    p = sub.add_parser("hooks", help="install bourdon's hooks into an agent's settings")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    for name, func, text in (
        ("install", cmd_hooks_install, "merge bourdon's hooks into the agent's settings file"),
        ("uninstall", cmd_hooks_uninstall, "take bourdon's hooks out again, and nothing else"),
    ):
        v = verbs.add_parser(name, help=text)
        v.add_argument("agent", metavar="AGENT", help=f"the agent: {agents}")
        v.add_argument("--dry-run", action="store_true", help="show the change; write nothing")
        v.add_argument("--settings", metavar="PATH", help="edit this file instead of the default")
        if name == "install":
            v.add_argument(
                "--force",
                action="store_true",
                help="write the hooks even where the agent's own folder (~/.codex...) is missing",
            )
        add_json(v)
        v.set_defaults(func=func)
    v = verbs.add_parser("status", help="installed, not installed or partial, per agent")
    v.add_argument("agent", metavar="AGENT", nargs="?", help="one agent (default: every one)")
    v.add_argument("--settings", metavar="PATH", help="look at this file instead of the default")
    add_json(v)
    v.set_defaults(func=cmd_hooks_status)

    p = sub.add_parser("hook", help="what the agents' hooks run (always exits 0)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    v = verbs.add_parser(
        "export", help="export AGENT's store; silent, exits 0, records failures for 'readers'"
    )
    v.add_argument("agent", metavar="AGENT", nargs="?", help="the agent whose store to export")
    v.set_defaults(func=cmd_hook_export)
    v = verbs.add_parser(
        "user-prompt",
        help="print turn-start context for the agent (reads the agent's hook JSON on stdin)",
    )
    v.add_argument("--agent", metavar="AGENT", help="the agent whose hook runs this")
    v.set_defaults(func=cmd_hook_user_prompt)


# -- hooks ----------------------------------------------------------------------------------


def _settings(args: argparse.Namespace, agent: str) -> Path:
    from bourdon.ingest.hookfiles import settings_path

    override = Path(args.settings) if args.settings else None
    return settings_path(agent, Path.home(), override, os.environ)


def _prefix(args: argparse.Namespace) -> list[str]:
    """How the installed hooks call bourdon: this very bourdon, by its absolute path, on the
    library chosen now (``--library``, ``$BOURDON_LIBRARY`` or the default), made absolute.
    An agent's PATH may not have ``bourdon`` on it, and its environment names no library."""
    from bourdon.ingest.hookfiles import running_bourdon

    return [*running_bourdon(), "--library", str(library_path(args).absolute())]


def cmd_hooks_install(args: argparse.Namespace) -> int:
    from bourdon.ingest.hooks import install, require_agent
    from bourdon.status.readers import is_library

    if not args.settings and not args.force:  # a file of the user's choosing is theirs to make
        require_agent(args.agent, Path.home(), os.environ)
    prefix = _prefix(args)
    change = install(
        args.agent,
        _settings(args, args.agent),
        state_dir=home_path(),
        dry_run=args.dry_run,
        prefix=prefix,
    )
    _report_change(change, args.json)
    if not is_library(Path(prefix[-1])):
        output.error(
            f"warning: no library at {prefix[-1]} yet; the hooks will record failures until "
            "'bourdon init' creates it (or install again with --library PATH)"
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
    if verb == "install" and change.removed:
        print("  taken out (events this bourdon no longer uses):")
        for item in change.removed:
            print(f"    {item}")
    if change.notice:
        print(change.notice)


def cmd_hooks_status(args: argparse.Namespace) -> int:
    from bourdon.ingest.hookfiles import AGENTS
    from bourdon.ingest.hooks import status, statuses

    if args.settings and not args.agent:
        raise BourdonError("--settings needs an AGENT: the file belongs to one agent")
    if args.agent:  # one agent: an unreadable file is an error
        found = [status(args.agent, _settings(args, args.agent), _prefix(args)).to_dict()]
    else:
        found = statuses({agent: _settings(args, agent) for agent in AGENTS}, _prefix(args))
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
        for outdated in s.get("outdated", []):
            print(f"  {s['agent']}: outdated {outdated} ('bourdon hooks install' takes it out)")
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
    from bourdon.ingest.hookrun import hook_export
    from bourdon.status.readers import is_library

    if not args.agent:
        raise BourdonError("the hook names no agent: run 'bourdon hooks install AGENT' again")
    event = _hook_input()
    reader = selection.pick_reader(args.agent)
    root = library_path(args)
    if not is_library(root):
        raise BourdonError(
            f"no library at {root}: create one with 'bourdon init', or set BOURDON_LIBRARY in "
            "the agent's environment"
        )
    hook_export(root, reader, reader_context(), event, lambda: open_library(args))


def _record(args: argparse.Namespace, what: str, agent: str | None, error: str) -> None:
    from bourdon.ingest.failures import HOOK_FAILURES, hook_failures_path, record_hook_failure
    from bourdon.status.readers import is_library

    with contextlib.suppress(Exception):
        root = library_path(args)
        log = hook_failures_path(root) if is_library(root) else home_path() / HOOK_FAILURES
        record_hook_failure(log, what, agent, error)


# Agents that read turn-start context from a hook's JSON answer (Claude Code's format, which
# Codex, Gemini CLI and Qwen Code follow), with the event their prompt hook runs on: the answer
# must name the event it answers. Cursor's prompt hook cannot add context: it gets nothing.
_CONTEXT_HOOKS: Final = {
    "claude-code": "UserPromptSubmit",
    "codex": "UserPromptSubmit",
    "gemini-cli": "BeforeAgent",
    "qwen-code": "UserPromptSubmit",
}


def cmd_hook_user_prompt(args: argparse.Namespace) -> int:
    """Print what bourdon recognises in the prompt, as the agent's hook expects; always exit 0.

    Reads the hook JSON on stdin (``prompt``, ``cwd``, ``hook_event_name``), recognises known
    entities in-process from the library (no server needed) and prints
    ``{"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": ...}}``, EVENT being
    the event the hook was called for (``BeforeAgent`` for Gemini CLI). Prints nothing when
    nothing is recognised, and records any failure for ``bourdon readers`` instead of breaking
    the agent's turn.
    """
    agent = args.agent or "claude-code"
    buffer = io.StringIO()
    event: dict[str, Any] = {}
    try:
        with contextlib.redirect_stdout(buffer):
            event = _hook_input()
            answer = _turn_context(args, event)
    except BaseException as exc:  # an agent's turn must never break because of bourdon
        if not (isinstance(exc, SystemExit) and not exc.code):
            message = (
                exc.message if isinstance(exc, BourdonError) else f"{type(exc).__name__}: {exc}"
            )
            _record(args, "user-prompt", agent, message)
        return 0
    if answer and agent in _CONTEXT_HOOKS:
        called_for = event.get("hook_event_name")
        name = called_for if isinstance(called_for, str) and called_for else _CONTEXT_HOOKS[agent]
        output = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": answer}}
        sys.stdout.write(json.dumps(output) + "\n")
    return 0


def _turn_context(args: argparse.Namespace, event: dict[str, Any]) -> str:
    from bourdon.ingest.hookrun import turn_context
    from bourdon.status.readers import is_library

    prompt = event.get("prompt") or event.get("user_prompt") or ""
    if not isinstance(prompt, str) or not prompt.strip():
        return ""
    root = library_path(args)
    if not is_library(root):
        raise BourdonError(f"no library at {root}: create one with 'bourdon init'")
    return turn_context(root, prompt, agent=args.agent or "claude-code")
