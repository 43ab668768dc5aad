"""Kilo Code: its extension's task folders in every editor, the legacy CLI's, and its rules.

Ground truth relied on (native-stores.md section 5; Kilo-Org/kilocode
``cli/docs/DISK_SPACE_MANAGEMENT.md``, ``cli/src/config/persistence.ts``,
``src/core/context-tracking/FileContextTrackerTypes.ts``, ``src/shared/globalFileNames.ts``,
``src/core/prompts/sections/custom-instructions.ts``; the Kilo CLI's "File Locations" page).
Kilo Code forked Roo Code, which forked Cline; the layout they share is parsed by
``readers.common.clinetasks``:

- Task roots: ``<editor User>/globalStorage/kilocode.kilo-code/`` in the user folders of VS
  Code, Insiders, VSCodium, Cursor and Windsurf and ``~/.vscode-server/data/User``; and
  ``~/.kilocode/cli/global`` (the Kilo Code CLI before 1.0 ran the extension and kept its
  global storage there: ``tasks/<id>/``). Every root present is read; Cline's and Roo Code's
  folders beside them are not Kilo's. ``BOURDON_KILO_CODE_STORE`` names the root(s) to read
  instead (a folder holding ``kilocode.kilo-code`` works too).
- Kilo CLI 1.0 and later (``kilo``, built on OpenCode) and the extension releases built on it
  keep their sessions in the XDG data folder (``~/.local/share/kilo/``, macOS
  ``~/Library/Application Support/kilo/``) in OpenCode's format, not in task folders. This
  reader does not read that store and says so in ``health()`` when it is the only one here.
- Kilo's dialect is Roo's (the task is the first ``say: text``; ``ask: tool``/``say: tool``
  ``{tool: editedExistingFile|appliedDiff|newFileCreated|…, path}``), with Cline's and Roo's
  tool names both in the API history (``write_to_file``, ``replace_in_file``, ``apply_diff``,
  ``insert_content``, ``search_and_replace``, ``edit``, ``search_replace``, ``edit_file``,
  ``apply_patch``), the user's words in ``<task>`` or ``<user_message>``, and the working
  directory in ``# Current Workspace|Working Directory (<path>) Files``.
  ``task_metadata.json`` keeps Roo's ``roo_edited`` for the agent's edits (``cline_edited``
  in the oldest releases [inf]). The task list lived in VS Code's ``state.vscdb`` (not read);
  ``history_item.json`` and ``_index.json`` are read where present.
- Rules: ``~/.kilocode/rules/`` (global), ``<workspace>/.kilocode/rules/`` and
  ``.kilocode/rules-<mode>/`` (every file), falling back to ``<workspace>/.kilocoderules``;
  one note each, dated by the file's modification time.

What it extracts, without any model call: one session per task (date of the first timestamp in
the user's time zone, ``""`` if none; working directory; the user's own prompts as key
actions; files edited); project entities and files touched in several sessions; notes from the
rules files.

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

NAME: Final = "kilo-code"
EXTENSION: Final = "kilocode.kilo-code"
DIALECT: Final = Dialect(
    tag=NAME,
    edit_tools=frozenset(
        {
            "write_to_file",
            "replace_in_file",
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
        {
            "editedExistingFile",
            "appliedDiff",
            "newFileCreated",
            "fileDeleted",
            "insertContent",
            "searchAndReplace",
        }
    ),
    edited_sources=frozenset({"roo_edited", "cline_edited"}),
    prompt_tags=("task", "user_message"),
    first_text_is_task=True,
    ask_tool_edits=True,
)


class KiloCodeReader:
    """Kilo Code's task folders, wherever its hosts keep them, and its rules files."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_KILO_CODE_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """Every editor's Kilo Code folder, then the legacy CLI's ``~/.kilocode/cli/global``."""
        return fork_locations(ctx, EXTENSION, ctx.home / ".kilocode" / "cli" / "global")

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a Kilo Code task store is found; else whether Kilo 1.0+'s store is here."""
        found = default_health(self, ctx)
        newer = [p for p in _newer_stores(ctx) if p.is_dir()]
        if found.ok or not newer:
            return found
        return Health(
            False,
            f"no Kilo Code task folders found; Kilo CLI 1.0+ keeps its sessions in {newer[0]}, "
            "in OpenCode's format, which this reader does not read",
            f"set {self.store_env} if task folders live elsewhere",
        )

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Every task root present, then the rules of the tasks' workspaces, as one view."""

        def rules(folders: list[str]) -> list[RuleFile]:
            return fork_rules(ctx.home / ".kilocode", ".kilocode", ".kilocoderules", folders)

        return read_fork(self, ctx, EXTENSION, DIALECT, rules, "Kilo")


def _newer_stores(ctx: ReaderContext) -> list[Path]:
    xdg = ctx.env.get("XDG_DATA_HOME")
    linux = (Path(xdg) if xdg else ctx.home / ".local" / "share") / "kilo"
    return [linux, ctx.home / "Library" / "Application Support" / "kilo"]
