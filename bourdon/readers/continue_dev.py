"""Continue: the chat sessions under ``~/.continue/sessions`` and Continue's rules files.

Ground truth relied on (native-stores.md section 8.2; [src continuedev/continue:
core/util/paths.ts, core/util/history.ts, core/index.d.ts, core/tools/builtIn.ts,
core/tools/definitions/*.ts, core/config/markdown/loadMarkdownRules.ts,
core/config/getWorkspaceContinueRuleDotFiles.ts]):

- The root is ``~/.continue``, or ``$CONTINUE_GLOBAL_DIR`` when that is set (Continue's own
  override); ``BOURDON_CONTINUE_DEV_STORE`` relocates it for bourdon.
- ``sessions/<sessionId>.json`` is one ``Session {sessionId, title, workspaceDirectory,
  history: ChatHistoryItem[], mode?, chatModelTitle?, usage?}``; Continue takes the id from
  the file name. ``ChatHistoryItem {message {role: user|assistant|thinking|system|tool,
  content: string | [{type: text, text} | {type: imageUrl, …}], toolCalls?}, contextItems,
  toolCallStates? [{toolCallId, toolCall {function {name, arguments (JSON text)}}, status:
  generating|generated|calling|errored|done|canceled, parsedArgs?}]}``. A session file has
  no date of its own.
- ``sessions/sessions.json`` is the index: ``[{sessionId, title, dateCreated (epoch ms as a
  string), workspaceDirectory, messageCount?}]``; entries of the old format (``session_id``)
  are ignored, as Continue ignores them. ``workspaceDirectory`` is a path or a ``file://``
  URI. A session in the index whose file is gone is still a session.
- Both files are rewritten with a plain ``fs.writeFileSync``: a file caught mid-write is
  skipped, counted, and its index entry still stands.
- Edits are the tool calls ``edit_existing_file``, ``create_new_file``,
  ``single_find_and_replace`` and ``multi_edit`` (``builtin_``-prefixed in older releases),
  whose argument ``filepath`` is relative to the workspace or a URI, and the Continue CLI's
  ``Edit``, ``MultiEdit`` (``file_path``) and ``Write`` (``filepath``) [src
  continuedev/continue:extensions/cli/src/tools/*.ts, which writes the same session files];
  a call that errored, was cancelled or is still being generated edited nothing. Unnamed
  sessions are titled ``New Session`` (the IDE) or ``Untitled Session`` (the CLI).
- Rules: ``.continue/rules/*.md`` in the global folder and in each workspace (front matter
  ``name``, ``description``, ``globs``, ``alwaysApply``), and the legacy ``.continuerules``
  file at a workspace's root. Read for the workspaces present on this machine; dated by the
  file's modification time. ``config.yaml``/``config.json`` hold API keys and are never read.

What it extracts, without any model call: one session per session id (the index's
``dateCreated`` in the user's zone, ``""`` when the index does not list it; the workspace as
cwd; the title and the user's own messages as key actions; files edited by tool calls);
project entities and files touched in several sessions; notes from the rules files.

Visibility (the same rule in every reader): ``readers.common.privacy``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    clean_text,
    default_health,
    load_json,
    parse_time,
    project_name,
    store_path,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import described, listing, memory_notes
from bourdon.readers.common.frontmatter import Meta
from bourdon.readers.common.paths import is_windows_path, uri_path
from bourdon.readers.common.text import unique
from bourdon.readers.common.tools import path_argument

NAME: Final = "continue-dev"
EDIT_TOOLS: Final = frozenset(
    {
        "edit_existing_file",
        "create_new_file",
        "single_find_and_replace",
        "multi_edit",
        "builtin_edit_existing_file",
        "builtin_create_new_file",
        "Edit",  # the Continue CLI (cn)
        "MultiEdit",
        "Write",
    }
)
NOT_RUN: Final = frozenset({"errored", "canceled", "generating"})
# The titles Continue gives a session not yet named: the IDE's, then the CLI's.
UNNAMED: Final = frozenset({"New Session", "Untitled Session"})
INDEX: Final = "sessions.json"


class ContinueDevReader:
    """Continue's chat sessions and rules files."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_CONTINUE_DEV_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """``$CONTINUE_GLOBAL_DIR`` when set, then ``~/.continue``."""
        native = ctx.env.get("CONTINUE_GLOBAL_DIR")
        return unique([*([Path(native).expanduser()] if native else []), ctx.home / ".continue"])

    def watch_paths(self, ctx: ReaderContext) -> list[Path]:
        """The workspaces' rules, which live outside the store (from the index alone)."""
        root = store_path(self, ctx)
        if root is None:
            return []
        index = _index(root / "sessions", ReadStats())
        folders = [_workspace(item) for item in index.values()]
        return [p for folder in _present(folders) for p in _rule_places(folder)]

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a Continue folder is found and readable."""
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Every session, then the global rules and those of the sessions' workspaces."""
        stats = ReadStats()
        drafts: list[Draft] = []
        notes: list[NoteDraft] = []
        root = store_path(self, ctx)
        if root is not None and root.is_dir():
            drafts = sessions(root / "sessions", stats)
            notes = _rules(root, [d.cwd for d in drafts], ctx, stats)
        return ReadResult(assemble(self.name, drafts, notes, ctx, stats), stats)


# -- sessions ----------------------------------------------------------------------------------


def _index(folder: Path, stats: ReadStats) -> dict[str, dict[str, Any]]:
    path = folder / INDEX
    listed = load_json(path, stats) if path.is_file() else None
    index: dict[str, dict[str, Any]] = {}
    for item in listed if isinstance(listed, list) else []:
        if not isinstance(item, dict):
            stats.skipped += 1
        elif isinstance(item.get("sessionId"), str) and item["sessionId"]:
            index[item["sessionId"]] = item  # old-format entries (session_id) are ignored
    return index


def sessions(folder: Path, stats: ReadStats) -> list[Draft]:
    """One draft per session file and per index entry, merged by session id."""
    index = _index(folder, stats)
    drafts: dict[str, Draft] = {}
    for path in listing(folder, "*.json"):
        if path.name == INDEX:
            continue
        draft = Draft(session_id=path.stem)
        if path.stem in index:
            _listed(draft, index[path.stem])
        data = load_json(path, stats)
        if isinstance(data, dict):
            _session(draft, data)
        drafts[path.stem] = draft
    for sid, item in index.items():
        if sid not in drafts:  # listed, its file gone: what the index says is still true
            draft = Draft(session_id=sid)
            _listed(draft, item)
            drafts[sid] = draft
    return list(drafts.values())


def _title(value: object) -> str:
    text = clean_text(value)
    return "" if text in UNNAMED else text


def _workspace(item: dict[str, Any]) -> str | None:
    return uri_path(item.get("workspaceDirectory"))


def _listed(draft: Draft, item: dict[str, Any]) -> None:
    draft.seen(parse_time(item.get("dateCreated")))
    draft.title = _title(item.get("title"))
    draft.cwd = _workspace(item)


def _session(draft: Draft, data: dict[str, Any]) -> None:
    draft.title = draft.title or _title(data.get("title"))
    draft.cwd = draft.cwd or _workspace(data)
    history = data.get("history")
    for item in history if isinstance(history, list) else []:
        if not isinstance(item, dict):
            continue
        message = item.get("message")
        message = message if isinstance(message, dict) else {}
        if message.get("role") == "user":
            text = _content(message.get("content"))
            if text:
                draft.prompts.append(text)
        states = item.get("toolCallStates")
        if isinstance(states, list) and states:
            for state in states:
                if isinstance(state, dict) and state.get("status") not in NOT_RUN:
                    _edit(draft, state.get("toolCall"), state.get("parsedArgs"))
        else:  # releases before toolCallStates: the assistant's calls as sent
            calls = message.get("toolCalls")
            for call in calls if isinstance(calls, list) else []:
                _edit(draft, call, None)


def _content(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def _edit(draft: Draft, call: object, parsed: object) -> None:
    function = call.get("function") if isinstance(call, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if name not in EDIT_TOOLS:
        return
    args = parsed if isinstance(parsed, dict) else None
    if args is None and isinstance(function, dict) and isinstance(function.get("arguments"), str):
        try:
            loaded = json.loads(function["arguments"])
        except ValueError:
            return
        args = loaded if isinstance(loaded, dict) else None
    if args is None:
        return
    named = args.get("filepath")
    found = named.strip() if isinstance(named, str) and named.strip() else path_argument(args)
    if found:
        draft.files.append(uri_path(found) or found)


# -- rules files -------------------------------------------------------------------------------


def _present(folders: list[str | None]) -> list[str]:
    """The workspace folders that exist on this machine."""
    out = []
    for folder in sorted({f for f in folders if f}):
        if is_windows_path(folder) and sys.platform != "win32":
            continue
        if Path(folder).is_dir():
            out.append(folder)
    return out


def _rule_places(folder: str) -> list[Path]:
    return [Path(folder) / ".continue" / "rules", Path(folder) / ".continuerules"]


def _rules(
    root: Path, folders: list[str | None], ctx: ReaderContext, stats: ReadStats
) -> list[NoteDraft]:
    places: list[tuple[Path, str | None]] = [(p, None) for p in listing(root / "rules", "*.md")]
    for folder in _present(folders):
        rules, legacy = _rule_places(folder)
        places += [(p, folder) for p in listing(rules, "*.md")]
        places.append((legacy, folder))
    notes: list[NoteDraft] = []
    for path, owner in places:
        where = f" for {project_name(owner)}" if owner else ""
        heading = (
            f"Continue rules (.continuerules){where}"
            if path.name == ".continuerules"
            else _rule_heading(path.stem, where)
        )
        found = memory_notes(path, owner, "continue-rule", ctx.tz, stats, heading=heading)
        notes += [n for n in found if not n.text.endswith(":\n")]  # front matter, no rule
    return notes


def _rule_heading(stem: str, where: str) -> Callable[[Meta], str]:
    """A rule's heading from its front matter: its ``name`` (else the file's), its description."""

    def heading(meta: Meta) -> str:
        named = meta.get("name")
        label = named if isinstance(named, str) and named else stem
        return f"Continue rule {label}{described(meta)}{where}"

    return heading
