"""Rows that hold what people typed or wrote for their agents, and what an audience receives.

Two kinds of row carry text copied verbatim from the user's machine:

- **verbatim prompt text**: a session row with ``key_actions`` (the readers put the user's own
  prompts there, with the session's title);
- **instruction-file notes**: a note tagged with the kind of file it came from, one of
  ``INSTRUCTION_TAGS`` (``CLAUDE.md``, ``AGENTS.md``, Cursor and Cline rules, Copilot
  instructions, Gemini's ``GEMINI.md``, the agents' memory files).

Both are ``team`` by default (``$BOURDON_PROMPT_VISIBILITY`` changes what readers give them).
A remote or member with ``keep_home`` never receives them, whatever their visibility: the mark
is the manifest's own fields, so it holds for rows written before the setting, by any writer.

``shares`` counts what an audience would receive, with the filter sync and the server apply,
for ``bourdon remote add`` and ``bourdon member add`` to say before anything leaves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from bourdon.model import ENTITIES, NOTES, ROW_SECTIONS, SESSIONS, WORKSTREAMS, Visibility

INSTRUCTION_TAGS: Final = frozenset(
    {
        "agents-md",
        "auto-memory",
        "claude-md",
        "cline-rule",
        "codex-memory",
        "copilot-instructions",
        "copilot-memory",
        "cursor-rule",
        "gemini-context",
        "gemini-memory",
        "goose-hints",
        "opencode-instructions",
    }
)
KINDS: Final = {
    ENTITIES: "entities",
    SESSIONS: "sessions",
    WORKSTREAMS: "workstreams",
    NOTES: "notes",
}


def is_prompt(section: str, row: Mapping[str, Any]) -> bool:
    """A session row carrying key actions: verbatim prompt text."""
    return section == SESSIONS and bool(row.get("key_actions"))


def is_instruction(section: str, row: Mapping[str, Any]) -> bool:
    """A note that came from an instruction or memory file (by its tag)."""
    tags = row.get("tags")
    items = tags if isinstance(tags, list) else [tags]
    return section == NOTES and any(isinstance(t, str) and t in INSTRUCTION_TAGS for t in items)


def stays_home(section: str, row: Mapping[str, Any]) -> bool:
    """Whether a ``keep_home`` audience is denied this row."""
    return is_prompt(section, row) or is_instruction(section, row)


def indexed_stays_home(row: object) -> bool:
    """The same rule on the index's rows (``query.rows``): sessions by their key actions,
    notes (the rows with a ``text``) by their tags."""
    if getattr(row, "key_actions", None):
        return True
    if hasattr(row, "text"):
        return any(t in INSTRUCTION_TAGS for t in getattr(row, "tags", ()))
    return False


def shares(
    manifests: Iterable[tuple[str, Mapping[str, Any]]],
    level: Visibility,
    *,
    agents: frozenset[str] | None = None,
    keep_home: bool = False,
) -> dict[str, Any]:
    """What an audience at ``level`` (and of ``agents``, None: all) receives, agent by agent:
    rows by kind, how many are verbatim prompt text or instruction-file notes, and how many of
    the rows at or below its level ``keep_home`` keeps here."""
    from bourdon.access.visibility import filter_manifest

    out: dict[str, dict[str, int]] = {}
    for agent_id, data in manifests:
        if agents is not None and agent_id not in agents:
            continue
        sent = filter_manifest(data, level, keep_home=keep_home)
        seen = filter_manifest(data, level)
        counts = {KINDS[s]: len(sent.get(s) or []) for s in ROW_SECTIONS}
        counts["prompt_sessions"] = sum(is_prompt(SESSIONS, r) for r in sent.get(SESSIONS) or [])
        counts["instruction_notes"] = sum(is_instruction(NOTES, r) for r in sent.get(NOTES) or [])
        counts["kept_home"] = sum(
            len(seen.get(s) or []) - len(sent.get(s) or []) for s in ROW_SECTIONS
        )
        out[agent_id] = counts
    total = {
        k: sum(c[k] for c in out.values())
        for k in (*KINDS.values(), "prompt_sessions", "instruction_notes", "kept_home")
    }
    return {
        "level": str(level),
        "keep_prompts_home": keep_home,
        "agents": out,
        "total": total,
    }


def describe(summary: Mapping[str, Any], who: str) -> list[str]:
    """The lines ``remote add`` and ``member add`` print about ``summary`` (from ``shares``)."""
    agents = summary["agents"]
    level = summary["level"]
    if not agents or not any(sum(c[k] for k in KINDS.values()) for c in agents.values()):
        return [f"{who[:1].upper()}{who[1:]} receives no rows at {level} today."]
    lines = [f"At {level}, {who} receives:"]
    for agent_id, c in sorted(agents.items()):
        rows = ", ".join(f"{c[k]} {k}" for k in KINDS.values())
        lines.append(f"  {agent_id}: {rows}")
    total = summary["total"]
    if total["prompt_sessions"] or total["instruction_notes"]:
        lines.append(
            f"Of these, {total['prompt_sessions']} sessions hold verbatim prompt text and "
            f"{total['instruction_notes']} notes come from instruction files (CLAUDE.md, "
            "AGENTS.md, rules, memory files)."
        )
        lines.append(
            "Keep them home with --keep-prompts-home, or export them as private with "
            "BOURDON_PROMPT_VISIBILITY=private."
        )
    elif summary["keep_prompts_home"]:
        lines.append(
            f"Verbatim prompts and instruction-file notes stay here ({total['kept_home']} rows)."
        )
    return lines
