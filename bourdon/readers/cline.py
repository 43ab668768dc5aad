"""Cline, Roo Code and Kilo Code: the task folders of all three forks, as one reader.

Ground truth relied on (native-stores.md section 5; cline/cline ``core/storage/disk.ts``,
``shared/ExtensionMessage.ts``, ``shared/HistoryItem.ts``, ``ContextTrackerTypes.ts``):

- Task roots: ``<editor User>/globalStorage/<extension>/`` for the extensions
  ``saoudrizwan.claude-dev`` (Cline), ``rooveterinaryinc.roo-cline`` (Roo Code) and
  ``kilocode.kilo-code`` (Kilo Code), in the user folders of VS Code, Insiders, VSCodium,
  Cursor and Windsurf (Linux ``~/.config``, macOS ``~/Library/Application Support``, Windows
  ``%APPDATA%``) and ``~/.vscode-server/data/User``; and ``~/.cline/data`` (Cline CLI and
  4.x, moved by ``CLINE_DIR``). Every root present is read. ``BOURDON_CLINE_STORE`` names
  the root(s) to read instead (several separated by the path separator); a folder holding the
  extension folders works too. Each session is tagged with its fork.
- ``tasks/<taskId>/`` is one task (the id is usually the creation time in epoch ms):
  ``ui_messages.json`` (legacy ``claude_messages.json``), a JSON array of
  ``{ts (ms), type: say|ask, say?, ask?, text?, partial?}``: ``say: task`` and
  ``say: user_feedback`` carry the user's words; ``say: tool`` and ``say: api_req_started``
  carry JSON encoded in ``text`` (``{tool: editedExistingFile|newFileCreated|fileDeleted|…,
  path}``, ``{request}``); ``partial: true`` entries are streaming fragments and are ignored;
  ``ask: resume_task`` marks a resumption.
- ``api_conversation_history.json``: Anthropic messages. Edits are native ``tool_use`` blocks
  (``write_to_file``, ``replace_in_file``, ``apply_diff``, ``insert_content``,
  ``search_and_replace``, ``edit_file``, ``apply_patch``; ``input.path``) or, in the older
  XML era, ``<write_to_file><path>…</path>`` inside assistant text. The first user message
  wraps the user's prompt in ``<task>…</task>`` (read, in case ``ui_messages.json`` is lost)
  and its ``<environment_details>`` holds ``# Current Working Directory (<path>) Files``, the
  only working directory of old tasks.
- ``task_metadata.json``: ``files_in_context[{path, record_source}]``; ``cline_edited``
  entries are files the agent edited (paths relative to the workspace).
- ``state/taskHistory.json`` (Cline) and Roo's ``tasks/<id>/history_item.json``: HistoryItem
  ``{id, ts, task (first prompt), cwdOnTaskInitialization? | workspace?}``. A history entry
  without a task folder is still a session. (Older Cline kept this list in VS Code's
  ``state.vscdb``; that is not read.)
- Whole-file JSON is rewritten on every turn and may be caught mid-write: such a file is
  skipped (counted) and the task's other files are still read.
- Memory files: ``.clinerules`` (a file, or a folder of ``.md`` files) in a task's working
  directory present on this machine, and the global ``~/Documents/Cline/Rules/*.md``: one
  note each, dated by the file's modification time.

What it extracts, without any model call: one session per task (date of the first timestamp in
the user's time zone, ``""`` if none; working directory; the user's own prompts as key
actions; files edited); project entities and files touched in several sessions; notes from the
rules files.

Visibility (the same rule in every reader): ``readers.common.privacy``.
"""

from __future__ import annotations

import json
import os
import re
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
    load_json,
    normalize_path,
    parse_time,
    project_name,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import children, described, editor_user_dirs, memory_notes
from bourdon.readers.common.frontmatter import Meta
from bourdon.readers.common.paths import is_windows_path, safe_text
from bourdon.readers.common.text import unique
from bourdon.readers.common.tools import path_argument

NAME: Final = "cline"
EXTENSIONS: Final = {
    "saoudrizwan.claude-dev": "cline",
    "rooveterinaryinc.roo-cline": "roo-code",
    "kilocode.kilo-code": "kilo-code",
}
EDITORS: Final = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
EDIT_TOOLS: Final = frozenset(
    {
        "write_to_file",
        "replace_in_file",
        "apply_diff",
        "insert_content",
        "search_and_replace",
        "edit_file",
        "apply_patch",
        "new_rule",
    }
)
UI_EDITS: Final = frozenset({"editedExistingFile", "newFileCreated", "fileDeleted"})
_XML_EDIT: Final = re.compile(
    r"<(write_to_file|replace_in_file|apply_diff|insert_content|search_and_replace)>\s*"
    r"<path>\s*(.*?)\s*</path>",
    re.DOTALL,
)
_TASK: Final = re.compile(r"<task>\s*(.*?)\s*</task>", re.DOTALL)
_CWD: Final = re.compile(r"# Current Working Directory \((.+)\) Files\s*$", re.MULTILINE)


class ClineReader:
    """Task folders of Cline, Roo Code and Kilo Code, wherever their hosts keep them."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_CLINE_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """Every editor's extension folder for the three forks, then ``~/.cline/data``."""
        users = [d for editor in EDITORS for d in editor_user_dirs(ctx, editor)]
        users.append(ctx.home / ".vscode-server" / "data" / "User")
        roots = [user / "globalStorage" / ext for user in users for ext in EXTENSIONS]
        native = ctx.env.get("CLINE_DIR")
        roots.append(Path(native) if native else ctx.home / ".cline" / "data")
        return unique(roots)

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a Cline, Roo Code or Kilo Code store is found and readable."""
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Every task root present, then the rules files of the tasks' folders, as one view."""
        stats = ReadStats()
        drafts: list[Draft] = []
        for root in self._roots(ctx):
            drafts += _read_root(root, EXTENSIONS.get(root.name, "cline"), stats)
        folders = sorted({d.cwd for d in drafts if d.cwd})
        notes = _rules(folders, ctx, stats)
        return ReadResult(assemble(self.name, drafts, notes, ctx, stats), stats)

    def _roots(self, ctx: ReaderContext) -> list[Path]:
        if ctx.store is not None:
            given = [ctx.store]
        elif ctx.env.get(self.store_env):
            given = [Path(p).expanduser() for p in ctx.env[self.store_env].split(os.pathsep) if p]
        else:
            return [p for p in self.locations(ctx) if p.is_dir()]
        roots: list[Path] = []
        for path in given:
            forks = [path / ext for ext in EXTENSIONS if (path / ext).is_dir()]
            roots += forks if forks and not (path / "tasks").is_dir() else [path]
        return roots


# -- tasks -------------------------------------------------------------------------------------


def _read_root(root: Path, fork: str, stats: ReadStats) -> list[Draft]:
    history: dict[str, dict[str, Any]] = {}
    listed = (
        load_json(root / "state" / "taskHistory.json", stats)
        if (root / "state" / "taskHistory.json").is_file()
        else None
    )
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, dict) and isinstance(item.get("id"), (str, int)):
            history[str(item["id"])] = item
    drafts: dict[str, Draft] = {}
    for folder in children(root / "tasks"):
        if folder.is_dir():
            drafts[folder.name] = task_draft(folder, history.get(folder.name), fork, stats)
    for task_id, item in history.items():
        if task_id not in drafts:  # listed, its folder gone: what the list says is still true
            draft = Draft(session_id=task_id, tags=[fork])
            _history_item(draft, item)
            drafts[task_id] = draft
    return list(drafts.values())


def task_draft(folder: Path, item: dict[str, Any] | None, fork: str, stats: ReadStats) -> Draft:
    """One task folder as a session draft."""
    draft = Draft(session_id=folder.name, tags=[fork])
    if item is None and (folder / "history_item.json").is_file():
        found = load_json(folder / "history_item.json", stats)
        item = found if isinstance(found, dict) else None
    if item is not None:
        _history_item(draft, item)
    ui_file = folder / "ui_messages.json"
    if not ui_file.is_file() and (folder / "claude_messages.json").is_file():
        ui_file = folder / "claude_messages.json"
    ui = load_json(ui_file, stats) if ui_file.is_file() else None
    for message in ui if isinstance(ui, list) else []:
        if isinstance(message, dict):
            _ui_message(draft, message, stats)
    api_file = folder / "api_conversation_history.json"
    api = load_json(api_file, stats) if api_file.is_file() else None
    for message in api if isinstance(api, list) else []:
        if isinstance(message, dict):
            _api_message(draft, message)
    meta_file = folder / "task_metadata.json"
    meta = load_json(meta_file, stats) if meta_file.is_file() else None
    files = meta.get("files_in_context") if isinstance(meta, dict) else None
    for entry in files if isinstance(files, list) else []:
        edited = isinstance(entry, dict) and entry.get("record_source") == "cline_edited"
        if edited and isinstance(entry.get("path"), str):
            draft.files.append(entry["path"])
    return draft


def _history_item(draft: Draft, item: dict[str, Any]) -> None:
    draft.seen(parse_time(item.get("ts")))
    cwd = item.get("cwdOnTaskInitialization") or item.get("workspace")
    if not draft.cwd and isinstance(cwd, str):
        draft.cwd = safe_text(normalize_path(cwd))
    if isinstance(item.get("task"), str):
        draft.prompts.append(clean_text(item["task"]))


def _ui_message(draft: Draft, message: dict[str, Any], stats: ReadStats) -> None:
    draft.seen(parse_time(message.get("ts")))
    if message.get("partial") is True or message.get("type") != "say":
        return  # streaming fragments; asks are the agent's questions
    say, text = message.get("say"), message.get("text")
    if say in ("task", "user_feedback"):
        draft.prompts.append(clean_text(text))
    elif say in ("tool", "api_req_started"):
        try:
            data = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            stats.skipped += 1
            return
        if not isinstance(data, dict):
            return
        if say == "tool" and data.get("tool") in UI_EDITS and isinstance(data.get("path"), str):
            draft.files.append(data["path"])
        elif say == "api_req_started" and not draft.cwd:
            draft.cwd = _environment_cwd(data.get("request"))


def _api_message(draft: Draft, message: dict[str, Any]) -> None:
    draft.seen(parse_time(message.get("ts")))
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            if message.get("role") == "user":
                task = _TASK.search(block["text"])
                if task:  # the first prompt, as the model received it
                    draft.prompts.append(clean_text(task.group(1)))
                draft.cwd = draft.cwd or _environment_cwd(block["text"])
            elif message.get("role") == "assistant":
                draft.files += [path for _, path in _XML_EDIT.findall(block["text"])]
        elif block.get("type") == "tool_use" and block.get("name") in EDIT_TOOLS:
            found = path_argument(block.get("input"))
            if found:
                draft.files.append(found)


def _environment_cwd(text: object) -> str | None:
    match = _CWD.search(text) if isinstance(text, str) else None
    return safe_text(normalize_path(match.group(1).strip())) if match else None


# -- rules files -------------------------------------------------------------------------------


def _rules(folders: list[str], ctx: ReaderContext, stats: ReadStats) -> list[NoteDraft]:
    places: list[tuple[Path, str | None]] = [
        (p, None) for p in sorted((ctx.home / "Documents" / "Cline" / "Rules").glob("*.md"))
    ]
    for cwd in folders:
        if is_windows_path(cwd) and sys.platform != "win32":
            continue
        rules = Path(cwd) / ".clinerules"
        if rules.is_dir():
            places += [(p, cwd) for p in sorted(rules.glob("*.md"))]
        else:
            places.append((rules, cwd))
    notes = []
    for path, folder in places:
        label = path.stem if path.suffix == ".md" else ".clinerules"
        where = f" for {project_name(folder)}" if folder else ""

        def heading(meta: Meta, label: str = label, where: str = where) -> str:
            return f"Cline rule {label}{described(meta)}{where}"

        notes += memory_notes(path, folder, "cline-rule", ctx.tz, stats, heading=heading)
    return notes
