"""Cline-family task folders (Cline, Roo Code, Kilo Code): one parser, one dialect per fork.

The three extensions keep the same layout, written by code Roo and Kilo forked from Cline; each
reader names its own extension folders and its ``Dialect`` (the tool names, the words that wrap
the user's prompt, what marks a file the agent edited) and its rules files, and reads them all
the same way (``fork_locations``, ``read_fork``). Format facts and their sources are in
each reader's docstring; what every fork shares (native-stores.md section 5, cline/cline
``src/core/storage/disk.ts``, ``src/shared/ExtensionMessage.ts``, ``ContextTrackerTypes.ts``):

- ``<root>/tasks/<taskId>/`` is one task: ``ui_messages.json`` (legacy
  ``claude_messages.json``), an array of ``{ts (ms), type: say|ask, say?, ask?, text?,
  partial?}``; ``say: tool`` (and ``ask: tool``) carry JSON in ``text`` (``{tool, path}``);
  ``partial: true`` entries are streaming fragments and are ignored.
- ``api_conversation_history.json``: Anthropic messages; edits are ``tool_use`` blocks or, in
  the XML era, ``<write_to_file><path>…</path>`` in assistant text; the user's words are
  wrapped in a tag (``<task>``, Roo's ``<user_message>``) and ``<environment_details>`` names
  the working directory.
- ``task_metadata.json``: ``files_in_context[{path, record_source}]``; the agent's own edits
  carry the fork's ``*_edited`` source.
- History items ``{id, ts, task, cwdOnTaskInitialization? | workspace?, parentTaskId?,
  rootTaskId?}`` in ``state/taskHistory.json`` (Cline), ``tasks/<id>/history_item.json`` and
  the ``tasks/_index.json`` cache (Roo). A ``taskHistory.json`` entry without a folder is still
  a session; an ``_index.json`` entry without one is not (Roo drops it on its next reconcile).
- Whole-file JSON is rewritten on every turn and may be caught mid-write: such a file is
  skipped (counted) and the task's other files are still read.

Pure like every reader: reads files, never writes, no git, no network.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    Reader,
    ReaderContext,
    ReadResult,
    ReadStats,
    clean_text,
    load_json,
    normalize_path,
    parse_time,
    project_name,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import children, described, editor_user_dirs, memory_notes
from bourdon.readers.common.frontmatter import Meta
from bourdon.readers.common.jsonc import load_jsonc
from bourdon.readers.common.paths import is_windows_path, safe_text
from bourdon.readers.common.text import unique
from bourdon.readers.common.tools import patch_files, path_argument

EDITORS: Final = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
_XML_EDIT: Final = re.compile(
    r"<(write_to_file|replace_in_file|apply_diff|insert_content|search_and_replace)>\s*"
    r"<path>\s*(.*?)\s*</path>",
    re.DOTALL,
)
_CWD: Final = re.compile(
    r"# Current (?:Working|Workspace) Directory \((.+)\) Files\s*$", re.MULTILINE
)


@dataclass(frozen=True)
class Dialect:
    """What one fork writes differently in the shared layout."""

    tag: str  # the agent id each session is tagged with
    edit_tools: frozenset[str]  # tool_use names that edit the file in ``input``
    ui_edits: frozenset[str]  # ``{tool: …}`` values of a ui message that edit ``path``
    edited_sources: frozenset[str]  # task_metadata ``record_source`` of the agent's edits
    prompt_tags: tuple[str, ...]  # the tags around the user's words in the API history
    first_text_is_task: bool = False  # Roo and Kilo: the task is the first ``say: text``
    ask_tool_edits: bool = False  # Roo and Kilo: edits awaiting approval are ``ask: tool``
    subtasks: bool = False  # Roo: a subtask's edits belong to the task that started it


def extension_roots(ctx: ReaderContext, extension: str) -> list[Path]:
    """``globalStorage/<extension>`` in every editor's user folder and VS Code Server's."""
    users = [d for editor in EDITORS for d in editor_user_dirs(ctx, editor)]
    users.append(ctx.home / ".vscode-server" / "data" / "User")
    return unique(user / "globalStorage" / extension for user in users)


def fork_locations(
    ctx: ReaderContext, extension: str, *own: Path, moved_by: str | None = None
) -> list[Path]:
    """Where a fork keeps its tasks, each folder once: the folders the editors' ``moved_by``
    setting names, every editor's ``globalStorage/<extension>``, then the fork's ``own``."""
    defaults = extension_roots(ctx, extension)
    moved = _moved_roots(defaults, moved_by) if moved_by else []
    return unique([*moved, *defaults, *own])


def _moved_roots(roots: list[Path], setting: str) -> list[Path]:
    """The absolute folders ``setting`` names in the ``settings.json`` beside each root."""
    found = []
    for root in roots:  # <User>/globalStorage/<extension>: the settings are in <User>
        settings = root.parent.parent / "settings.json"
        data = load_jsonc(settings, ReadStats()) if settings.is_file() else None
        value = data.get(setting) if isinstance(data, dict) else None
        if isinstance(value, str) and Path(value).is_absolute():
            found.append(Path(value))
    return found


def given_roots(
    ctx: ReaderContext, store_env: str, extension: str, defaults: list[Path]
) -> list[Path]:
    """The roots to read: the explicit store, the env list (a folder holding the extension's
    folder works too), or every default that exists."""
    if ctx.store is not None:
        given = [ctx.store]
    elif ctx.env.get(store_env):
        given = [Path(p).expanduser() for p in ctx.env[store_env].split(os.pathsep) if p]
    else:
        return [p for p in defaults if p.is_dir()]
    roots = []
    for path in given:
        inner = path / extension
        roots.append(inner if inner.is_dir() and not (path / "tasks").is_dir() else path)
    return roots


def read_root(root: Path, dialect: Dialect, stats: ReadStats) -> list[Draft]:
    """Every task of one root as a session draft (subtasks folded in when the fork has them)."""
    listed: dict[str, dict[str, Any]] = {}
    history_file = root / "state" / "taskHistory.json"
    for item in _items(load_json(history_file, stats) if history_file.is_file() else None):
        listed[str(item["id"])] = item
    index_file = root / "tasks" / "_index.json"
    index = load_json(index_file, stats) if index_file.is_file() else None
    entries = index.get("entries") if isinstance(index, dict) else None
    cached = {str(item["id"]): item for item in _items(entries)}
    drafts: dict[str, Draft] = {}
    parents: dict[str, str] = {}
    for folder in children(root / "tasks"):
        if not folder.is_dir():
            continue
        found = listed.get(folder.name) or _history_file(folder, stats) or cached.get(folder.name)
        drafts[folder.name] = task_draft(folder, found, dialect, stats)
        parent = (found.get("rootTaskId") or found.get("parentTaskId")) if found else None
        if dialect.subtasks and isinstance(parent, str) and parent != folder.name:
            parents[folder.name] = parent
    for task_id, item in listed.items():
        if task_id not in drafts:  # listed, its folder gone: what the list says is still true
            draft = Draft(session_id=task_id, tags=[dialect.tag])
            _history_item(draft, item)
            drafts[task_id] = draft
    for child, parent in parents.items():
        if parent in drafts:  # the subtask's prompt is the model's; its edits are the task's
            drafts[parent].files += drafts.pop(child).files
    return list(drafts.values())


def read_fork(
    reader: Reader,
    ctx: ReaderContext,
    extension: str,
    dialect: Dialect,
    rules: Callable[[list[str]], list[RuleFile]],
    rules_of: str,
) -> ReadResult:
    """Every task root present, then the rules of the tasks' folders (``rules``, headed
    ``<rules_of> rule …``, tagged ``<rules_of in lower case>-rule``), as one view."""
    stats = ReadStats()
    drafts: list[Draft] = []
    for root in given_roots(ctx, reader.store_env, extension, reader.locations(ctx)):
        drafts += read_root(root, dialect, stats)
    folders = sorted({d.cwd for d in drafts if d.cwd})
    notes = rule_notes(rules(folders), rules_of, f"{rules_of.lower()}-rule", ctx, stats)
    return ReadResult(assemble(reader.name, drafts, notes, ctx, stats), stats)


def _items(value: object) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else []
    return [i for i in items if isinstance(i, dict) and isinstance(i.get("id"), (str, int))]


def _history_file(folder: Path, stats: ReadStats) -> dict[str, Any] | None:
    path = folder / "history_item.json"
    found = load_json(path, stats) if path.exists() else None
    return found if isinstance(found, dict) else None


def task_draft(
    folder: Path, item: dict[str, Any] | None, dialect: Dialect, stats: ReadStats
) -> Draft:
    """One task folder as a session draft."""
    draft = Draft(session_id=folder.name, tags=[dialect.tag])
    if item is not None:
        _history_item(draft, item)
    ui_file = folder / "ui_messages.json"
    if not ui_file.exists() and (folder / "claude_messages.json").is_file():
        ui_file = folder / "claude_messages.json"
    first = True
    for message in _array(ui_file, stats):
        first = _ui_message(draft, message, dialect, stats, first)
    for message in _array(folder / "api_conversation_history.json", stats):
        _api_message(draft, message, dialect)
    meta_file = folder / "task_metadata.json"
    meta = load_json(meta_file, stats) if meta_file.exists() else None
    files = meta.get("files_in_context") if isinstance(meta, dict) else None
    for entry in files if isinstance(files, list) else []:
        edited = isinstance(entry, dict) and entry.get("record_source") in dialect.edited_sources
        if edited and isinstance(entry.get("path"), str):
            draft.files.append(entry["path"])
    return draft


def _array(path: Path, stats: ReadStats) -> list[dict[str, Any]]:
    """The objects of a whole-file JSON array; other entries are skipped and counted."""
    if not path.exists() and not path.is_symlink():
        return []
    data = load_json(path, stats)
    if not isinstance(data, list):
        return []
    kept = [m for m in data if isinstance(m, dict)]
    stats.skipped += len(data) - len(kept)
    return kept


def _history_item(draft: Draft, item: dict[str, Any]) -> None:
    draft.seen(parse_time(item.get("ts")))
    cwd = item.get("cwdOnTaskInitialization") or item.get("workspace")
    if not draft.cwd and isinstance(cwd, str):
        draft.cwd = safe_text(normalize_path(cwd))
    if isinstance(item.get("task"), str):
        draft.prompts.append(clean_text(item["task"]))


def _ui_message(
    draft: Draft, message: dict[str, Any], dialect: Dialect, stats: ReadStats, first: bool
) -> bool:
    """Read one ui message; whether the task's first ``say`` is still to come."""
    draft.seen(parse_time(message.get("ts")))
    if message.get("partial") is True:
        return first  # streaming fragments
    kind, say, text = message.get("type"), message.get("say"), message.get("text")
    task = kind == "say" and say == "text" and first and dialect.first_text_is_task
    tool = kind == "say" and say == "tool"
    tool = tool or (dialect.ask_tool_edits and kind == "ask" and message.get("ask") == "tool")
    if task or (kind == "say" and say in ("task", "user_feedback")):
        draft.prompts.append(clean_text(text))
    elif tool or (kind == "say" and say == "api_req_started"):
        _json_message(draft, text, tool, dialect, stats)
    return first and kind != "say"


def _json_message(
    draft: Draft, text: object, tool: bool, dialect: Dialect, stats: ReadStats
) -> None:
    """A ui message whose text is JSON: a tool's ``{tool, path}`` or a request's ``{request}``."""
    try:
        data = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        stats.skipped += 1
        return
    if not isinstance(data, dict):
        return
    if tool and data.get("tool") in dialect.ui_edits and isinstance(data.get("path"), str):
        draft.files.append(data["path"])
    elif not tool and not draft.cwd:
        draft.cwd = _environment_cwd(data.get("request"))


def _api_message(draft: Draft, message: dict[str, Any], dialect: Dialect) -> None:
    draft.seen(parse_time(message.get("ts")))
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            if message.get("role") == "user":
                for tag in dialect.prompt_tags:  # the user's words, as the model received them
                    draft.prompts += [clean_text(t) for t in _tagged(tag).findall(block["text"])]
                draft.cwd = draft.cwd or _environment_cwd(block["text"])
            elif message.get("role") == "assistant":
                draft.files += [path for _, path in _XML_EDIT.findall(block["text"])]
        elif block.get("type") == "tool_use" and block.get("name") in dialect.edit_tools:
            arguments = block.get("input")
            found = path_argument(arguments)
            patch = arguments.get("patch") if isinstance(arguments, dict) else None
            draft.files += [found] if found else patch_files(patch)


def _tagged(tag: str) -> re.Pattern[str]:
    return re.compile(rf"<{tag}>\s*(.*?)\s*</{tag}>", re.DOTALL)


def _environment_cwd(text: object) -> str | None:
    match = _CWD.search(text) if isinstance(text, str) else None
    return safe_text(normalize_path(match.group(1).strip())) if match else None


# -- rules files -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleFile:
    """A rules file to read: where it is, the project folder it serves, how to name it."""

    path: Path
    folder: str | None  # the project folder; None for a global rule
    name: str
    mode: str | None = None  # Roo and Kilo: rules of one mode (``rules-<mode>/``)


def rule_folder(folder: Path, project: str | None, mode: str | None = None) -> list[RuleFile]:
    """Every file in a rules folder, nested ones too, sorted; hidden files left out."""
    try:
        paths = sorted(p for p in folder.rglob("*") if p.is_file())
    except OSError:
        return []
    hidden = [p for p in paths if any(n.startswith(".") for n in p.relative_to(folder).parts)]
    visible = [p for p in paths if p not in hidden]
    return [RuleFile(p, project, p.stem, mode) for p in visible]


def fork_rules(global_dir: Path, dot: str, legacy: str, folders: list[str]) -> list[RuleFile]:
    """Roo's and Kilo's rules: ``<global>/rules*/``, then each workspace's ``<dot>/rules*/``,
    or its ``<legacy>`` file when it has no rules folder (workspaces on this machine only)."""
    found = _rules_folders(global_dir, None)
    for cwd in folders:
        if is_windows_path(cwd) and sys.platform != "win32":
            continue
        mine = _rules_folders(Path(cwd) / dot, cwd)
        old = Path(cwd) / legacy
        found += mine or ([RuleFile(old, cwd, legacy)] if old.is_file() else [])
    return found


def _rules_folders(dot: Path, cwd: str | None) -> list[RuleFile]:
    found = rule_folder(dot / "rules", cwd)
    for folder in children(dot):
        if folder.is_dir() and folder.name.startswith("rules-"):
            found += rule_folder(folder, cwd, folder.name.removeprefix("rules-"))
    return found


def rule_notes(
    rules: list[RuleFile], agent: str, tag: str, ctx: ReaderContext, stats: ReadStats
) -> list[NoteDraft]:
    """``<agent> rule <name> (<description>) (<mode> mode) for <project>:`` and the file."""
    notes = []
    for rule in rules:
        mode = f" ({rule.mode} mode)" if rule.mode else ""
        where = f" for {project_name(rule.folder)}" if rule.folder else ""

        def heading(meta: Meta, name: str = rule.name, mode: str = mode, where: str = where) -> str:
            return f"{agent} rule {name}{described(meta)}{mode}{where}"

        notes += memory_notes(rule.path, rule.folder, tag, ctx.tz, stats, heading=heading)
    return notes
