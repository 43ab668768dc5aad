"""OpenAI Codex CLI's native store (``~/.codex``) read into a manifest view. No writes.

Ground truth this reader relies on (native-stores.md section 2; openai/codex ``codex-rs``):

- Root: ``$CODEX_HOME`` (comma- or path-separator lists), else ``~/.codex``.
- ``sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl`` and the flat
  ``archived_sessions/rollout-*.jsonl``. The folder and file names are **local** time while the
  records carry **UTC**, so dates come only from the records: a session's date is its first
  ``timestamp`` in the user's time zone. Each line is ``{"timestamp", "type", "payload"}``:

  - ``session_meta``: ``id``, ``cwd``, ``timestamp``, ``git.repository_url``, ``source``
    (a string, or ``{"subagent": {... "parent_thread_id" ...}}``), ``forked_from_id``. A resume
    appends another one: the first is canonical.
  - ``turn_context``: ``cwd`` -- the latest one is the session's cwd.
  - ``event_msg``: ``user_message`` (``message``; an old ``kind`` of ``environment_context`` /
    ``user_instructions`` is not the user's words) is the source of key actions;
    ``patch_apply_end.changes`` (absolute paths, ``move_path``) of files touched;
    ``thread_name_updated.thread_name`` a title.
  - ``response_item``: ``message`` with ``role: user`` (prompts for old rollouts without
    ``user_message`` events, injected ``<environment_context>``/``<user_instructions>``/
    ``# AGENTS.md`` blocks dropped); ``function_call`` / ``custom_tool_call`` /
    ``local_shell_call`` whose arguments or input hold an ``apply_patch`` body: its
    ``*** Add|Update|Delete File:`` and ``*** Move to:`` paths are relative to the turn's cwd.
  - ``compacted`` (``replacement_history`` repeats old items: never re-read), ``world_state``
    and ``inter_agent_*`` are ignored; unknown types are skipped and counted.

- ``session_index.jsonl``: ``{"id", "thread_name", "updated_at"}``; the last line per id wins.
- ``history.jsonl``: ``{"session_id" | "conversation_id", "ts": epoch s, "text"}``: prompts of
  threads whose rollout is gone become sessions.
- ``state_5.sqlite`` table ``threads`` (``id``, ``rollout_path``, ``created_at`` epoch s,
  ``created_at_ms``, ``cwd``, ``title``, ``first_user_message``, ``git_origin_url``,
  ``parent_thread_id``; whichever exist): an index. Rollouts are the truth; a thread whose
  rollout is missing (a stale ``rollout_path``) becomes a session from its row. Opened
  read-only without touching the store (see ``threads.open_sqlite``).
- ``memories/``: ``MEMORY.md``, ``memory_summary.md`` (bullets and paragraphs, see
  ``common.memory.memory_rows``), ``raw_memories.md`` (one note per ``## Thread `<id>``` section),
  ``rollout_summaries/*.md`` (one note each, linked by their ``thread_id:`` header), both at the
  top and in the per-cwd buckets ``memories/<sha256(cwd)[:16]>/memory/`` and
  ``memories/user/memory/``. Threads run inside ``memories/`` are the consolidation agent's own
  and are left out. ``AGENTS.md`` / ``AGENTS.override.md`` at the root are notes too.

A subagent thread (``source.subagent`` naming its parent) adds its files to the parent session.
A fork (``forked_from_id``) keeps only the prompts and edits its parent does not hold.

Visibility, as for Claude Code (``readers.common.privacy`` for the folders): private
for sessions under ``~/personal`` or ``~/private``, for notes and entities tied only to them, and
for memory files or bullets tagged private; team otherwise, except that sessions with prompts
and memory-file notes get ``ReaderContext.prompt_visibility`` (team by default). ``source`` is
never set.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    default_health,
)
from bourdon.readers.codex.memories import read_memories
from bourdon.readers.codex.rollouts import Rollout, read_rollout, text_or_none
from bourdon.readers.codex.threads import (
    db_title,
    from_thread,
    read_history,
    read_thread_names,
    read_threads,
)
from bourdon.readers.common.facts import Assembler, SessionFacts
from bourdon.readers.common.files import listing, store_roots

NAME: Final = "codex"
AGENT_TYPE: Final = "code-assistant"


class CodexReader:
    """Codex rollouts, thread names, prompt history, the thread database and memories."""

    name = NAME
    agent_type = AGENT_TYPE
    store_env = "CODEX_HOME"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """``~/.codex`` (``$CODEX_HOME`` overrides it)."""
        return [ctx.home / ".codex"]

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a Codex store is found and readable."""
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Rollouts, thread index, history and memories of every store root, as one view."""
        stats = ReadStats()
        rows = Assembler(ctx)
        for root in store_roots(self, ctx):
            _read_root(root, ctx, rows, stats)
        stats.problems.extend(rows.problems)
        result = rows.manifest(NAME, AGENT_TYPE, stats)
        return ReadResult(result, stats)


def _read_root(root: Path, ctx: ReaderContext, rows: Assembler, stats: ReadStats) -> None:
    rollouts: dict[str, Rollout] = {}
    paths = listing(root, "sessions/**/rollout-*.jsonl")
    paths += listing(root, "archived_sessions/**/rollout-*.jsonl")
    for path in paths:
        _add(rollouts, read_rollout(path, stats))
    names = read_thread_names(root / "session_index.jsonl", stats)
    threads = read_threads(root / "state_5.sqlite", stats)
    for thread_id, thread in sorted(threads.items()):
        given = str(thread.get("rollout_path") or "")
        if thread_id in rollouts or not re.search(r"(^|[\\/])rollout-[^\\/]*$", given):
            continue
        if Path(given).is_file():  # a rollout outside sessions/: read it too
            _add(rollouts, read_rollout(Path(given), stats))
    memories = str(root / "memories")
    sessions: dict[str, SessionFacts] = {}
    for sid, r in sorted(rollouts.items(), key=lambda item: item[1].path.as_posix()):
        facts = r.facts
        thread = threads.get(sid, {})
        if any(c == memories or c.startswith(memories + "/") for c in facts.cwds):
            continue  # the memory consolidation agent's own thread
        facts.prompts = r.prompts or r.fallback_prompts
        facts.edits = [p for _, p in r.edits]
        title = names.get(sid) or (r.names[-1] if r.names else None)
        title = title or db_title(thread, facts.prompts)
        facts.titles = [title] if title else []
        if facts.cwd is None:
            facts.see_cwd(thread.get("cwd"))
        origin = thread.get("git_origin_url")
        if facts.cwd and facts.cwd not in facts.remotes and isinstance(origin, str) and origin:
            facts.remotes[facts.cwd] = origin
        sessions[sid] = facts
    for sid, r in rollouts.items():  # forks keep what their parent does not hold
        parent = rollouts.get(r.forked_from or "")
        if sid in sessions and parent is not None and parent is not r:
            held = {key for key, _ in parent.edits}
            said = parent.prompts or parent.fallback_prompts
            sessions[sid].prompts = [p for p in sessions[sid].prompts if p not in said]
            sessions[sid].edits = [p for key, p in r.edits if key not in held]
    for sid, r in sorted(rollouts.items()):  # subagents add their files to the parent
        parent_id = r.parent or text_or_none(threads.get(sid, {}).get("parent_thread_id"))
        host = sessions.get(parent_id or "")
        if host is not None and sid in sessions and parent_id != sid:
            host.edits += [p for p in sessions.pop(sid).edits if p not in host.edits]
    for sid, thread in sorted(threads.items()):
        if sid not in rollouts and sid not in sessions:
            facts = from_thread(sid, thread, names.get(sid))
            if not any(c == memories or c.startswith(memories + "/") for c in facts.cwds):
                sessions[sid] = facts
    for sid, facts in read_history(root / "history.jsonl", stats).items():
        if sid not in sessions and sid not in rollouts:
            if sid in names:
                facts.titles = [names[sid]]
            sessions[sid] = facts
    for facts in sessions.values():
        rows.add_session(facts)
    read_memories(root, ctx, rows, rollouts, sessions)


def _add(rollouts: dict[str, Rollout], found: Rollout | None) -> None:
    if found is None:
        return
    sid = found.facts.session_id
    if sid not in rollouts:
        rollouts[sid] = found
        return
    # The same thread in two files (an archived copy): keep the one that saw more.
    kept = rollouts[sid]
    if len(found.prompts) + len(found.edits) > len(kept.prompts) + len(kept.edits):
        rollouts[sid] = found
