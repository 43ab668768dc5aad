"""Roo Code: its task folders in every editor and in the Roo CLI's store, and its rules files.

Ground truth relied on (native-stores.md section 5; RooCodeInc/Roo-Code
``src/shared/globalFileNames.ts``, ``src/core/task-persistence/TaskHistoryStore.ts``,
``src/utils/storage.ts``, ``src/core/task/Task.ts``, ``packages/types/src/history.ts``,
``packages/types/src/tool.ts``, ``packages/types/src/vscode-extension-host.ts``,
``src/core/context-tracking/FileContextTrackerTypes.ts``,
``src/core/environment/getEnvironmentDetails.ts``,
``src/core/prompts/sections/custom-instructions.ts``, ``src/services/roo-config/index.ts``,
``packages/vscode-shim/src/context/ExtensionContext.ts``); the layout it shares with Cline is
parsed by ``readers.common.clinetasks``:

- Task roots: ``<editor User>/globalStorage/rooveterinaryinc.roo-cline/`` in the user folders
  of VS Code, Insiders, VSCodium, Cursor and Windsurf and ``~/.vscode-server/data/User``; and
  ``~/.vscode-mock/global-storage`` (the Roo CLI runs the extension in a VS Code shim that
  keeps its global storage there). Every root present is read; Cline's and Kilo Code's folders
  beside them are not Roo's. The ``roo-cline.customStoragePath`` setting (an absolute path in
  an editor's ``User/settings.json``, JSON with comments) moves the tasks: that folder is read
  first. ``BOURDON_ROO_CODE_STORE`` names the root(s) to read instead (several separated by
  the path separator; a folder holding ``rooveterinaryinc.roo-cline`` works too).
- History: ``tasks/<id>/history_item.json`` (the source of truth) and the ``tasks/_index.json``
  cache ``{version, updatedAt, entries: [HistoryItem]}``; HistoryItem ``{id, number, ts, task,
  workspace?, mode?, parentTaskId?, rootTaskId?, childIds?, status?}``. An index entry whose
  folder is gone is no session (Roo's reconcile drops it); a cut ``history_item.json`` falls
  back to the index entry.
- Roo's dialect: the task is the first ``say: text`` (later ones are the model's words),
  ``say: user_feedback`` the user's later words; file tools are ``say: tool`` or, awaiting
  approval, ``ask: tool`` ``{tool: editedExistingFile|appliedDiff|newFileCreated (older
  insertContent|searchAndReplace), path}``. The API history wraps the user's words in
  ``<user_message>`` (older releases: ``<task>``); the working directory is ``# Current
  Workspace Directory (<path>) Files`` (older: ``Working``). Edit tools: ``write_to_file``,
  ``apply_diff``, ``insert_content``, ``search_and_replace`` (``path``), ``edit``,
  ``search_replace``, ``edit_file`` (``file_path``), ``apply_patch`` (``patch``, its
  ``*** Update File:`` lines). ``task_metadata.json`` marks the agent's edits ``roo_edited``
  (``cline_edited`` in releases from before the rename [inf]).
- Subtasks (``new_task``, the orchestrator mode): a task with ``parentTaskId``/``rootTaskId``
  has its own folder; its prompt was written by the model, so it is no session of its own: its
  edits count for the root task.
- Rules: ``~/.roo/rules/`` (global), ``<workspace>/.roo/rules/`` and ``.roo/rules-<mode>/``
  (every file, nested ones too), falling back to ``<workspace>/.roorules`` when the project
  has no rules folder; one note each, dated by the file's modification time, for workspaces
  present on this machine.

What it extracts, without any model call: one session per task (date of the first timestamp in
the user's time zone, ``""`` if none; working directory; the user's own prompts as key
actions; files edited); project entities and files touched in several sessions; notes from the
rules files. Roo Code has no lifecycle hooks to export from.

Visibility (the same rule in every reader): ``readers.common.privacy``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from bourdon.readers.base import Health, ReaderContext, ReadResult, default_health
from bourdon.readers.common.clinetasks import (
    Dialect,
    RuleFile,
    fork_locations,
    fork_rules,
    read_fork,
)

NAME: Final = "roo-code"
EXTENSION: Final = "rooveterinaryinc.roo-cline"
SETTING: Final = "roo-cline.customStoragePath"  # moves the tasks anywhere (src/utils/storage.ts)
DIALECT: Final = Dialect(
    tag=NAME,
    edit_tools=frozenset(
        {
            "write_to_file",
            "apply_diff",
            "insert_content",
            "search_and_replace",
            "edit",
            "search_replace",
            "edit_file",
            "apply_patch",
        }
    ),
    ui_edits=frozenset(
        {"editedExistingFile", "appliedDiff", "newFileCreated", "insertContent", "searchAndReplace"}
    ),
    edited_sources=frozenset({"roo_edited", "cline_edited"}),
    prompt_tags=("user_message", "task"),
    first_text_is_task=True,
    ask_tool_edits=True,
    subtasks=True,
)


class RooCodeReader:
    """Roo Code's task folders, wherever its hosts keep them, and its rules files."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_ROO_CODE_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """The editors' ``customStoragePath`` folders, every editor's Roo Code folder, then the
        Roo CLI's ``~/.vscode-mock/global-storage``."""
        mock = ctx.home / ".vscode-mock" / "global-storage"
        return fork_locations(ctx, EXTENSION, mock, moved_by=SETTING)

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a Roo Code store is found and readable."""
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Every task root present, then the rules of the tasks' workspaces, as one view."""

        def rules(folders: list[str]) -> list[RuleFile]:
            return fork_rules(ctx.home / ".roo", ".roo", ".roorules", folders)

        return read_fork(self, ctx, EXTENSION, DIALECT, rules, "Roo")
