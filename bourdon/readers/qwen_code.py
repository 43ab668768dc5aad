"""Qwen Code: JSONL chat records per project under ``~/.qwen/projects``, QWEN.md and memory.

Ground truth relied on (QwenLM/qwen-code ``packages/core/src/config/storage.ts``,
``packages/core/src/services/chatRecordingService.ts``, ``packages/core/src/tools/tool-names.ts``,
``packages/core/src/memory/const.ts``; [docs docs/users/features/memory.md]). Qwen Code forked
Gemini CLI but records chats its own way; what the two still write alike (content parts, edit
tools, the added-memories section) is shared through ``readers.common.geminichats``:

- The root is ``~/.qwen`` (``QWEN_HOME`` moves it; ``~`` and ``~/…`` are expanded).
  Sessions and auto-memory are runtime output under ``QWEN_RUNTIME_DIR`` when that is set,
  else under the root. ``BOURDON_QWEN_CODE_STORE`` names the root to read instead (its
  ``projects/`` then holds the sessions too). A runtime folder moved by the
  ``runtimeOutputDir`` setting is not found: point ``BOURDON_QWEN_CODE_STORE`` at it.
- ``projects/<sanitized project root>/chats/<sessionId>.jsonl`` is one session (archived ones
  under ``chats/archive/``); ``<sessionId>.runtime.json`` beside it is live status, not read.
  The folder name is not trusted for the working directory: ``cwd`` comes from the records.
- Each line is a ``ChatRecord`` ``{uuid, parentUuid, sessionId, timestamp (ISO), type:
  user|assistant|tool_result|system, subtype?, cwd, version, gitBranch?, message? (Content
  {role, parts}), toolCallResult? {callId, status}, systemPayload?, isSidechain?, agentId?}``.
  The records form a tree through ``parentUuid``; the conversation is the branch that ends at
  the last main-chain record, so a rewound turn (a branch left behind) is not read. Prompts are
  ``user`` records without a ``subtype`` and of no other ``provenance`` than ``real_user``
  (not notifications, slash commands or ``@`` commands), slash commands excepted; the title is
  the last ``system``/``custom_title`` ``systemPayload.customTitle``. Edits are
  ``functionCall`` parts of ``assistant`` records named ``write_file``, ``edit`` (legacy
  ``replace``) with ``args.file_path``, unless the ``tool_result`` with that ``callId`` says
  ``error`` or ``cancelled``. Subagent records (``isSidechain``) add their edits, after the
  session's own; their prompts were written by a model and are not read.
- Memory: ``<root>/QWEN.md`` (its ``## Qwen Added Memories`` bullets are notes, the rest one
  more) and a project's ``QWEN.md`` for project folders present here; ``<root>/memory.md``
  (one note per bullet); auto-memory topic files ``projects/<dir>/memory/**/*.md`` and
  ``<root>/memories/**/*.md`` (front matter ``name``/``description``; the ``MEMORY.md`` index
  is not read). Dated by the file's modification time. ``.qwen/QWEN.local.md`` is the user's
  personal override and is not read.

What it extracts, without any model call: one session per session id (date of the first
timestamp in the user's time zone, ``""`` if none; working directory; the title and the
user's own prompts as key actions; files edited); project entities and files touched in
several sessions; notes from the memory files.

Visibility (the same rule in every reader): ``readers.common.privacy``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    clean_text,
    default_health,
    iter_jsonl,
    normalize_path,
    parse_time,
    project_name,
    store_path,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import children, described, listing, memory_notes
from bourdon.readers.common.frontmatter import Meta
from bourdon.readers.common.geminichats import EDIT_TOOLS, FAILED, context_notes, parts_text
from bourdon.readers.common.paths import is_windows_path, safe_text
from bourdon.readers.common.tools import path_argument

NAME: Final = "qwen-code"
MEMORY_HEADING: Final = "## Qwen Added Memories"
TAGS: Final = ("qwen-memory", "qwen-context")
Place = tuple[Path, str | None]  # a project folder and the working directory its records name


class QwenCodeReader:
    """Qwen Code chat records, QWEN.md files and auto-memory."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_QWEN_CODE_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """``$QWEN_HOME`` when set, else ``~/.qwen``."""
        return [_expand(ctx.env.get("QWEN_HOME"), ctx) or ctx.home / ".qwen"]

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a Qwen Code store is found and readable."""
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Chat records of every project, then QWEN.md files and memory, as one view."""
        stats = ReadStats()
        drafts: list[Draft] = []
        notes: list[NoteDraft] = []
        root = store_path(self, ctx)
        if root is not None and root.is_dir():
            moved = ctx.store is None and not ctx.env.get(self.store_env)
            runtime = (_expand(ctx.env.get("QWEN_RUNTIME_DIR"), ctx) if moved else None) or root
            drafts, places = _projects(runtime / "projects", stats)
            notes = context_notes(
                root / "QWEN.md", None, ctx, stats, heading=MEMORY_HEADING, tags=TAGS
            )
            notes += memory_notes(root / "memory.md", None, TAGS[0], ctx.tz, stats, per_bullet=True)
            notes += _memory_folder(root / "memories", None, ctx, stats)
            for folder, cwd in places:
                notes += _memory_folder(folder / "memory", cwd, ctx, stats)
            for cwd in sorted({d.cwd for d in drafts if d.cwd}):
                if not is_windows_path(cwd) or sys.platform == "win32":
                    path = Path(cwd) / "QWEN.md"
                    notes += context_notes(path, cwd, ctx, stats, heading=MEMORY_HEADING, tags=TAGS)
        return ReadResult(assemble(self.name, drafts, notes, ctx, stats), stats)


def _expand(value: str | None, ctx: ReaderContext) -> Path | None:
    if not value:
        return None
    if value == "~" or value.startswith(("~/", "~\\")):
        return ctx.home / value[2:] if len(value) > 1 else ctx.home
    return Path(value)


# -- sessions ----------------------------------------------------------------------------------


def _projects(
    projects: Path, stats: ReadStats
) -> tuple[list[Draft], list[tuple[Path, str | None]]]:
    """Every session, and each project folder with the working directory its records name."""
    drafts: dict[str, Draft] = {}
    places: list[Place] = []
    for folder in children(projects):
        if not folder.is_dir():
            continue
        cwd = None
        chats = folder / "chats"
        for path in [*listing(chats, "*.jsonl"), *listing(chats / "archive", "*.jsonl")]:
            draft = _session(path, stats)
            if draft is None:
                continue
            cwd = cwd or draft.cwd
            known = drafts.setdefault(draft.session_id, draft)
            if known is not draft:  # one session in two files (archived and live): one row
                known.seen(draft.start)
                known.prompts += draft.prompts
                known.files += draft.files
        places.append((folder, cwd))
    return list(drafts.values()), places


def _session(path: Path, stats: ReadStats) -> Draft | None:
    records = list(iter_jsonl(path, stats))
    if not records:
        return None
    ids = [r["sessionId"] for r in records if isinstance(r.get("sessionId"), str)]
    draft = Draft(session_id=ids[0] if ids else path.stem)
    main = [r for r in records if r.get("isSidechain") is not True]
    side = [r for r in records if r.get("isSidechain") is True]
    branch = _branch(main)
    status: dict[str, object] = {
        r["toolCallResult"]["callId"]: r["toolCallResult"].get("status")
        for r in records
        if isinstance(r.get("toolCallResult"), dict)
        and isinstance(r["toolCallResult"].get("callId"), str)
    }
    for record in branch + side:
        draft.seen(parse_time(record.get("timestamp")))
        if not draft.cwd and isinstance(record.get("cwd"), str):
            draft.cwd = safe_text(normalize_path(record["cwd"]))
    for record in branch:
        payload = record.get("systemPayload")
        if record.get("subtype") == "custom_title" and isinstance(payload, dict):
            draft.title = clean_text(payload.get("customTitle")) or draft.title
        elif _typed_by_user(record):
            message = record.get("message")
            text = parts_text(message.get("parts")) if isinstance(message, dict) else ""
            if text.strip() and not text.lstrip().startswith("/"):
                draft.prompts.append(clean_text(text))
    for record in branch + side:
        draft.files += _edits(record, status)
    return draft


def _branch(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records on the path from the root to the last record, in file order."""
    by_id = {r["uuid"]: r for r in records if isinstance(r.get("uuid"), str)}
    if not by_id:
        return records
    tip = next(r for r in reversed(records) if isinstance(r.get("uuid"), str))
    chain: list[dict[str, Any]] = []
    seen: set[str] = set()
    node: dict[str, Any] | None = tip
    while node is not None and node["uuid"] not in seen:
        seen.add(node["uuid"])
        chain.append(node)
        parent = node.get("parentUuid")
        node = by_id.get(parent) if isinstance(parent, str) else None
    return [r for r in records if isinstance(r.get("uuid"), str) and r["uuid"] in seen]


def _typed_by_user(record: dict[str, Any]) -> bool:
    return (
        record.get("type") == "user"
        and record.get("subtype") is None
        and record.get("provenance") in (None, "real_user")
    )


def _edits(record: dict[str, Any], status: dict[str, object]) -> list[str]:
    message = record.get("message")
    if record.get("type") != "assistant" or not isinstance(message, dict):
        return []
    parts = message.get("parts")
    found = []
    for part in parts if isinstance(parts, list) else []:
        call = part.get("functionCall") if isinstance(part, dict) else None
        if not isinstance(call, dict) or call.get("name") not in EDIT_TOOLS:
            continue
        if status.get(str(call.get("id"))) in FAILED:
            continue
        path = path_argument(call.get("args"))
        if path:
            found.append(path)
    return found


# -- memory ------------------------------------------------------------------------------------


def _memory_folder(
    folder: Path, cwd: str | None, ctx: ReaderContext, stats: ReadStats
) -> list[NoteDraft]:
    """Auto-memory topic files (``MEMORY.md`` is their index), one note each."""
    notes = []
    where = f" for {project_name(cwd)}" if cwd else ""
    for path in listing(folder, "**/*.md"):
        if path.name == "MEMORY.md" or not path.is_file():
            continue

        def heading(meta: Meta, name: str = path.stem) -> str:
            return f"Qwen memory {name}{described(meta)}{where}"

        notes += memory_notes(path, cwd, TAGS[0], ctx.tz, stats, heading=heading, where=cwd)
    return notes
