"""Cline: its task folders in every editor and in ``~/.cline/data``, and its rules files.

Ground truth relied on (native-stores.md section 5; cline/cline ``core/storage/disk.ts``,
``shared/ExtensionMessage.ts``, ``shared/HistoryItem.ts``, ``ContextTrackerTypes.ts``); the
layout Cline, Roo Code and Kilo Code share is parsed by ``readers.common.clinetasks``:

- Task roots: ``<editor User>/globalStorage/saoudrizwan.claude-dev/`` in the user folders of
  VS Code, Insiders, VSCodium, Cursor and Windsurf (Linux ``~/.config``, macOS
  ``~/Library/Application Support``, Windows ``%APPDATA%``) and
  ``~/.vscode-server/data/User``; and ``~/.cline/data`` (Cline CLI and 4.x, moved by
  ``CLINE_DIR``). Every root present is read. ``BOURDON_CLINE_STORE`` names the root(s) to
  read instead (several separated by the path separator); a folder holding
  ``saoudrizwan.claude-dev`` works too. Roo Code's and Kilo Code's folders are their own
  readers' (``roo-code``, ``kilo-code``); before, this reader read them too and tagged each
  session with its fork.
- Cline's dialect: the first prompt is ``say: task``, ``say: user_feedback`` carries the
  user's later words, edits are ``say: tool`` ``{tool: editedExistingFile|newFileCreated|
  fileDeleted, path}``; ``ask: resume_task`` marks a resumption. Edit tools in the API history:
  ``write_to_file``, ``replace_in_file``, ``apply_diff``, ``insert_content``,
  ``search_and_replace``, ``edit_file``, ``apply_patch``, ``new_rule`` (``input.path``), or in
  the older XML era ``<write_to_file><path>…</path>`` in assistant text. The first user
  message wraps the prompt in ``<task>…</task>``; ``# Current Working Directory (<path>)
  Files`` is the only working directory of old tasks. ``task_metadata.json`` marks the agent's
  edits ``cline_edited``.
- ``state/taskHistory.json``: HistoryItem ``{id, ts, task, cwdOnTaskInitialization?}``. A
  history entry without a task folder is still a session. (Older Cline kept this list in VS
  Code's ``state.vscdb``; that is not read.)
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

import sys
from pathlib import Path
from typing import Final

from bourdon.readers.base import Health, ReaderContext, ReadResult, default_health
from bourdon.readers.common.clinetasks import Dialect, RuleFile, fork_locations, read_fork
from bourdon.readers.common.paths import is_windows_path

NAME: Final = "cline"
EXTENSION: Final = "saoudrizwan.claude-dev"
DIALECT: Final = Dialect(
    tag=NAME,
    edit_tools=frozenset(
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
    ),
    ui_edits=frozenset({"editedExistingFile", "newFileCreated", "fileDeleted"}),
    edited_sources=frozenset({"cline_edited"}),
    prompt_tags=("task",),
)


class ClineReader:
    """Cline's task folders, wherever its hosts keep them, and its rules files."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_CLINE_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """Every editor's Cline folder, then ``~/.cline/data`` (``CLINE_DIR``)."""
        native = ctx.env.get("CLINE_DIR")
        cli = Path(native) if native else ctx.home / ".cline" / "data"
        return fork_locations(ctx, EXTENSION, cli)

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a Cline store is found and readable."""
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Every task root present, then the rules files of the tasks' folders, as one view."""
        return read_fork(
            self, ctx, EXTENSION, DIALECT, lambda folders: _rules(folders, ctx), "Cline"
        )


def _rules(folders: list[str], ctx: ReaderContext) -> list[RuleFile]:
    rules = [
        RuleFile(p, None, p.stem)
        for p in sorted((ctx.home / "Documents" / "Cline" / "Rules").glob("*.md"))
    ]
    for cwd in folders:
        if is_windows_path(cwd) and sys.platform != "win32":
            continue
        path = Path(cwd) / ".clinerules"
        if path.is_dir():
            rules += [RuleFile(p, cwd, p.stem) for p in sorted(path.glob("*.md"))]
        else:
            rules.append(RuleFile(path, cwd, ".clinerules"))
    return rules
