"""Claude Code's native store (``~/.claude``) read into a manifest view. No model call, no writes.

Ground truth this reader relies on (native-stores.md section 1; field names from real stores):

- Roots: ``$CLAUDE_CONFIG_DIR`` (comma- or path-separator lists), else every one of
  ``~/.claude`` and ``$XDG_CONFIG_HOME/claude`` (default ``~/.config/claude``) that exists.
- ``projects/<encoded-cwd>/<session-id>.jsonl``: one append-only transcript per session; the file
  stem is the session id. The folder name encodes the cwd lossily and is never decoded: the
  ``cwd`` field of the records is the truth. Renamed leftovers (``*.jsonl.orphaned-N``) are
  ignored. Subagent transcripts, in the older flat ``agent-<id>.jsonl`` (parent = the records'
  ``sessionId``) and the newer ``<session-id>/subagents/**/*.jsonl`` layout, belong to their
  parent session: they add files touched, never sessions or prompts.
- Records are ``{"type", "uuid", "parentUuid", "sessionId", "timestamp", "cwd", ...}``:
  ``user`` (a prompt is ``message.content`` as a string or text blocks; ``tool_result`` blocks,
  ``isMeta``, ``isCompactSummary``, ``isSidechain`` and ``<command-...>``-style wrappers are not
  the user's words), ``assistant`` (``tool_use`` blocks: Write/Edit/MultiEdit ``file_path``,
  NotebookEdit ``notebook_path``), ``ai-title``/``custom-title`` (re-appended, the last wins,
  a custom title beats an AI one), legacy ``summary`` (``{summary, leafUuid}``: titles the
  session holding that leaf), and metadata records this reader does not need (``mode``,
  ``file-history-snapshot``, ``progress``...). Any other type is skipped and counted.
  Side records lack ``timestamp``/``cwd``: a session's date is its first timestamp in file
  order, its cwd the first ``cwd`` seen. A fork copies ~90% of its parent's records with the
  same ``uuid``: a prompt or edit belongs to the earliest session holding its record.
- ``history.jsonl``: ``{display, timestamp: epoch ms, project: cwd, sessionId?}``, kept after
  transcripts are swept (30 days). Prompts of sessions without a transcript become sessions
  (grouped by ``sessionId``, or by project and day for old lines without one).
- ``projects/*/memory/*.md`` (auto memory: ``MEMORY.md`` plus topic files with ``name`` /
  ``description`` / ``type`` frontmatter), ``<root>/CLAUDE.md`` and, for every cwd under the
  home folder, ``CLAUDE.md``, ``.claude/CLAUDE.md`` and ``CLAUDE.local.md`` from the cwd up to
  its repository: notes and entities, see ``common.memory.memory_rows``.

Visibility (every row gets one explicitly): ``private`` for a session whose cwd is under a
private folder (``~/personal`` or ``~/private`` of any home: the one rule of
``readers.common.privacy``), for entities and notes tied only to such projects, for a
memory file whose front matter says ``visibility: private``, ``private: true`` or carries a
``private`` tag, for ``CLAUDE.local.md`` (personal by design), and for a bullet marked
``#private``; ``team`` for everything else, except that sessions with prompts and the notes of
memory files get ``ReaderContext.prompt_visibility`` (``team`` by default, ``private`` with
``$BOURDON_PROMPT_VISIBILITY=private``). ``source`` is never set: the pipeline stamps it.

Project identity across worktrees and clones, the private-path rule, memory-file parsing and
row assembly live in ``readers.common`` (``facts``, ``privacy``, ``memory``), shared with Codex.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import tzinfo
from pathlib import Path
from typing import Final

from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    clean_text,
    default_health,
    iter_jsonl,
    local_date,
    parse_time,
)
from bourdon.readers.claude_code.transcripts import Scan
from bourdon.readers.common.facts import Assembler, SessionFacts
from bourdon.readers.common.files import listing, store_roots
from bourdon.readers.common.paths import remembered_path

NAME: Final = "claude-code"
AGENT_TYPE: Final = "code-assistant"

_SLASH_COMMAND = re.compile(r"^/[\w:-]+(\s|$)")  # "/clear", "/model opus"; not "/home/x"


class ClaudeCodeReader:
    """Claude Code transcripts, prompt history, auto memory and CLAUDE.md files."""

    name = NAME
    agent_type = AGENT_TYPE
    store_env = "CLAUDE_CONFIG_DIR"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """``~/.claude`` and ``$XDG_CONFIG_HOME/claude`` (default ``~/.config/claude``)."""
        xdg = ctx.env.get("XDG_CONFIG_HOME")
        config = Path(xdg).expanduser() if xdg else ctx.home / ".config"
        return [ctx.home / ".claude", config / "claude"]

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when a Claude Code store is found and readable."""
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Transcripts, history-only sessions, memory and CLAUDE.md files, as one view."""
        stats = ReadStats()
        roots = store_roots(self, ctx)
        scan = Scan(stats)
        for root in roots:
            scan.transcripts(root)
        sessions = scan.sessions()
        history = _history(roots, sessions, stats, ctx.tz)
        rows = Assembler(ctx)
        for facts in sessions + history:
            rows.add_session(facts)
        for root in roots:
            user_md = root / "CLAUDE.md"
            rows.add_memory(user_md, "claude-md", project=None, cwd=None)
            for folder, cwd in scan.memory_dirs(root):
                for md in listing(folder, "*.md"):
                    rows.add_memory(md, "auto-memory", project=rows.project_of(cwd), cwd=cwd)
        for cwd in rows.cwds():
            for md, private in _claude_md_files(cwd, ctx.home, rows.git(cwd).toplevel):
                rows.add_memory(md, "claude-md", rows.project_of(cwd), cwd, private=private)
        stats.problems.extend(rows.problems)
        result = rows.manifest(NAME, AGENT_TYPE)
        stats.sessions = len(result["recent_sessions"])
        return ReadResult(result, stats)


def _history(
    roots: list[Path], sessions: list[SessionFacts], stats: ReadStats, tz: tzinfo | None
) -> list[SessionFacts]:
    """Sessions known only from ``history.jsonl`` (their transcripts were swept)."""
    known = {s.session_id for s in sessions}
    typed = {p for s in sessions for p in s.prompts}
    found: dict[tuple[str, str], SessionFacts] = {}
    for root in roots:
        if not (root / "history.jsonl").is_file():
            continue
        for line in iter_jsonl(root / "history.jsonl", stats):
            text = clean_text(line.get("display"))
            when = parse_time(line.get("timestamp"))
            given = line.get("sessionId")
            sid = given if isinstance(given, str) else ""
            if not text or _SLASH_COMMAND.match(text) or sid in known:
                continue
            if not sid and text in typed:
                continue
            cwd = remembered_path(line.get("project"))
            key = (sid, "") if sid else ("", f"{cwd}|{local_date(when, tz)}")
            facts = found.get(key)
            if facts is None:
                facts = found[key] = SessionFacts(sid)
            facts.see_cwd(cwd)
            if when is not None and (facts.start is None or when < facts.start):
                facts.start = when
            if text not in facts.prompts:
                facts.prompts.append(text)
    return list(found.values())


def _claude_md_files(cwd: str, home: Path, top: Path | None) -> Iterator[tuple[Path, bool]]:
    """CLAUDE.md files of a local project, from its cwd up to its repository (home only)."""
    folder = Path(cwd)
    if not folder.is_absolute() or home not in folder.parents or not folder.is_dir():
        return
    chain = [folder]
    if top is not None:
        chain += [p for p in folder.parents if p == top or top in p.parents]
    for place in chain:
        for rel, private in (
            ("CLAUDE.md", False),
            (".claude/CLAUDE.md", False),
            ("CLAUDE.local.md", True),
        ):
            if (place / rel).is_file():
                yield place / rel, private
