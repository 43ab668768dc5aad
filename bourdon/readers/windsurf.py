"""Windsurf's Cascade (agent id ``cascade``): its rules, and a count of what it keeps unreadable.

Ground truth relied on (native-stores.md section 8.1; [docs
docs.windsurf.com/windsurf/cascade/memories]; observed on real stores by third parties, e.g.
bbingz/engram ``docs/session-formats/windsurf.md`` and dayearleo/windsurf-local-user-data-
decryption):

- The root is ``~/.codeium/windsurf`` on every OS; ``BOURDON_CASCADE_STORE`` relocates it.
- ``cascade/<cascadeId>.pb`` are the Cascade conversations: protobuf, encrypted at rest,
  readable only through the running Windsurf language server. **They are counted, never
  parsed**: ``health()`` and the read's problems say how many there are. ``*.pb.archived``
  placeholders and ``implicit/*.pb`` side chats are not conversations the user had.
- ``memories/<uuid>.pb`` are Cascade's auto-generated memories, in the same opaque format:
  counted, never parsed. ``memories/global_rules.md`` (the global rules) is Markdown and read;
  any other ``memories/*.md`` is read the same way.
- Workspace rules: ``.windsurf/rules/*.md`` at a workspace's root, front matter ``trigger:
  always_on|manual|model_decision|glob``, ``globs``, ``description``; the legacy
  ``.windsurfrules`` file. Windsurf also finds rules in subfolders and up to the git root;
  only the workspace root is read here.
- Workspaces known on this machine: Windsurf is a VS Code fork, so each
  ``<User>/workspaceStorage/<hash>/workspace.json`` names one ``folder`` (a ``file://`` URI)
  under ``~/.config/Windsurf/User`` (Linux), ``~/Library/Application Support/Windsurf/User``
  (macOS) or ``%APPDATA%/Windsurf/User`` (Windows). Rules are read for those present here.
- ``mcp_config.json`` and ``user_settings.pb`` hold tokens and settings; never read.

What it extracts: no sessions (the transcripts cannot be read without Windsurf); one note per
rules file, dated by its modification time in the user's zone, related to its project.

Visibility (the same rule in every reader): ``readers.common.privacy``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    default_health,
    load_json,
    project_name,
    store_path,
)
from bourdon.readers.common.assembly import NoteDraft, assemble
from bourdon.readers.common.files import children, editor_user_dirs, listing, memory_notes
from bourdon.readers.common.frontmatter import Meta, listed
from bourdon.readers.common.paths import is_windows_path, uri_path

NAME: Final = "cascade"
TAG: Final = "cascade-rule"
GLOBAL_RULES: Final = "global_rules.md"
TRIGGERS: Final = {"always_on": "always on", "manual": "manual", "model_decision": "model decision"}


class WindsurfReader:
    """Windsurf's global and workspace rules; Cascade's opaque transcripts are only counted."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_CASCADE_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """``~/.codeium/windsurf``, the same on every OS."""
        return [ctx.home / ".codeium" / "windsurf"]

    def watch_paths(self, ctx: ReaderContext) -> list[Path]:
        """The workspace lists and the workspaces' rules, which live outside the store."""
        places = [user / "workspaceStorage" for user in editor_user_dirs(ctx, "Windsurf")]
        for folder in workspaces(ctx, ReadStats()):
            places += [Path(folder) / ".windsurf" / "rules", Path(folder) / ".windsurfrules"]
        return places

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when the store is found; says how much of it only Windsurf can read."""
        found = default_health(self, ctx)
        root = store_path(self, ctx)
        if not found.ok or root is None:
            return found
        opaque = opaque_note(root)
        return Health(True, f"store at {root}" + (f"; {opaque}" if opaque else ""))

    def read(self, ctx: ReaderContext) -> ReadResult:
        """The global rules and memories files, then each known workspace's rules."""
        stats = ReadStats()
        notes: list[NoteDraft] = []
        root = store_path(self, ctx)
        if root is not None and root.is_dir():
            opaque = opaque_note(root)
            if opaque:
                stats.problem(opaque)
            for path in listing(root / "memories", "*.md"):
                heading = (
                    "Windsurf global rules"
                    if path.name == GLOBAL_RULES
                    else f"Windsurf memory {path.stem}"
                )
                notes += memory_notes(path, None, TAG, ctx.tz, stats, heading=heading)
        for folder in workspaces(ctx, stats):
            notes += _workspace_rules(folder, ctx, stats)
        return ReadResult(assemble(self.name, [], notes, ctx, stats), stats)


def opaque_note(root: Path) -> str:
    """What the store holds that only the running Windsurf can read, in words; "" if nothing."""
    conversations = len(listing(root / "cascade", "*.pb"))
    memories = len(listing(root / "memories", "*.pb"))
    if not conversations and not memories:
        return ""
    parts = []
    if conversations:
        verb = "is" if conversations == 1 else "are"
        noun = "conversation" if conversations == 1 else "conversations"
        parts.append(
            f"{conversations} Cascade {noun} {verb} stored in a format only the running "
            "Windsurf can read; bourdon reads Windsurf's memories and rules"
        )
    if memories:
        noun = "memory is" if memories == 1 else "memories are"
        parts.append(f"{memories} auto-generated {noun} in that format too, and not read")
    return "; ".join(parts)


def workspaces(ctx: ReaderContext, stats: ReadStats) -> list[str]:
    """The folders Windsurf opened on this machine (from ``workspace.json``), present here."""
    folders: set[str] = set()
    for user in editor_user_dirs(ctx, "Windsurf"):
        for slot in children(user / "workspaceStorage"):
            marker = slot / "workspace.json"
            if not marker.is_file():
                continue
            data = load_json(marker, stats)
            folder = uri_path(data.get("folder")) if isinstance(data, dict) else None
            if folder and (not is_windows_path(folder) or sys.platform == "win32"):
                folders.add(folder)
    return sorted(f for f in folders if Path(f).is_dir())


def _activation(meta: Meta) -> str:
    """`` (<description>; <how the rule applies>)`` from a rule's front matter, or nothing."""
    parts = [", ".join(listed(meta, "description"))]
    trigger = meta.get("trigger")
    if trigger == "glob":
        globs = ", ".join(listed(meta, "globs"))
        parts.append(f"glob: {globs}" if globs else "glob")
    elif isinstance(trigger, str) and trigger:
        parts.append(TRIGGERS.get(trigger, trigger))
    text = "; ".join(p for p in parts if p)
    return f" ({text})" if text else ""


def _workspace_rules(folder: str, ctx: ReaderContext, stats: ReadStats) -> list[NoteDraft]:
    where = f" for {project_name(folder)}"
    notes: list[NoteDraft] = []
    for path in listing(Path(folder) / ".windsurf" / "rules", "*.md"):

        def heading(meta: Meta, stem: str = path.stem) -> str:
            return f"Windsurf rule {stem}{_activation(meta)}{where}"

        found = memory_notes(path, folder, TAG, ctx.tz, stats, heading=heading)
        notes += [n for n in found if not n.text.endswith(":\n")]  # front matter, no rule
    legacy = Path(folder) / ".windsurfrules"
    notes += memory_notes(
        legacy, folder, TAG, ctx.tz, stats, heading=f"Windsurf rules (.windsurfrules){where}"
    )
    return notes
