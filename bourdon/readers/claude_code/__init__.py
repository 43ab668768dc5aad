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

Resuming (``read_from``; docs/library.md, "Incremental export"): transcripts and
``history.jsonl`` are append-only, so the resume state holds, per file, a mark
(``common.resume``: offset after the last complete line, size, mtime, inode, head hash) and
what was gathered from it (a ``transcripts.Part``, or the history's prompts). An unchanged file
is not opened, a grown one is read from its offset, a rewritten one whole; the unfinished last
line is read every time and never saved. The view is then assembled from every file's facts, as
a whole read does, so both give the same view. A state of another ``RESUME_SCHEMA`` or reader
is ignored (and the pipeline drops one a different bourdon version saved).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    Health,
    JsonlLines,
    ReaderContext,
    ReadResult,
    ReadStats,
    clean_text,
    default_health,
    local_date,
    parse_time,
)
from bourdon.readers.claude_code.transcripts import Part, Scan, read_records, transcript_files
from bourdon.readers.common.facts import Assembler, SessionFacts
from bourdon.readers.common.files import listing, store_roots
from bourdon.readers.common.paths import remembered_path
from bourdon.readers.common.resume import REWRITTEN, UNCHANGED, compare, new_mark
from bourdon.readers.listing import StoreListing

NAME: Final = "claude-code"
AGENT_TYPE: Final = "code-assistant"
# The shape of the resume state (and of its saved parts); a state of another one is ignored.
RESUME_SCHEMA: Final = 1

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
        return self.read_from(ctx, None)

    def read_from(self, ctx: ReaderContext, resume: Mapping[str, Any] | None) -> ReadResult:
        """``read``, reading of each transcript and history file only what was appended since
        the read that returned ``resume`` (see the module docstring: "Resuming")."""
        stats = ReadStats()
        saved = _saved(resume)
        files: dict[str, Any] = {}
        history: dict[str, Any] = {}
        roots = store_roots(self, ctx)
        scan = Scan(stats)
        for root in roots:
            listed = transcript_files(root, stats, scan.folders, ctx.listing)
            for key, sid, main, folder in listed:
                old = saved["files"].get(key)
                for part in _transcript(key, sid, main, old, stats, files, ctx.listing):
                    scan.add(folder, part)
        sessions = scan.sessions()
        lines: list[list[Any]] = []
        for root in roots:
            path = root / "history.jsonl"
            if path.is_file():
                lines += _history_lines(path, saved["history"].get(str(path)), stats, history)
        rows = Assembler(ctx)
        for facts in sessions + _history(lines, sessions, ctx.tz):
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
        result = rows.manifest(NAME, AGENT_TYPE, stats)
        state = {"schema": RESUME_SCHEMA, "reader": NAME, "files": files, "history": history}
        return ReadResult(result, stats, resume=state)


def _saved(resume: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The per-file entries of a resume state this reader wrote, else none (a whole read)."""
    if (
        isinstance(resume, Mapping)
        and resume.get("schema") == RESUME_SCHEMA
        and resume.get("reader") == NAME
        and isinstance(resume.get("files"), dict)
        and isinstance(resume.get("history"), dict)
    ):
        return {"files": resume["files"], "history": resume["history"]}
    return {"files": {}, "history": {}}


def _transcript(
    key: str,
    sid: str | None,
    main: bool,
    saved: object,
    stats: ReadStats,
    out: dict[str, Any],
    seen: StoreListing | None = None,
) -> list[Part]:
    """The parts of one transcript: the saved one when the file is unchanged, else the saved
    one continued from its offset (or a new one when the file was rewritten), then the
    unterminated last line's, which is not saved: it is read again next time. ``seen``: the
    file's stat as the export's walk took it."""
    try:
        # A str path: no Path object is made for the thousands of files that did not change.
        info = seen.stat(key) if seen is not None else os.stat(key)  # noqa: PTH116
    except OSError as exc:
        stats.problem(f"{os.path.basename(key)}: {exc.strerror}")  # noqa: PTH119
        return []
    part: Part | None = None
    start = 0
    if isinstance(saved, list) and len(saved) == 2:
        how = compare(key, info, saved[0])
        if how != REWRITTEN:
            try:
                part = Part.from_json(saved[1])
            except (TypeError, ValueError):
                part = None
            if part is not None and (part.main != main or (sid and part.sid != sid)):
                part = None
            if part is not None and how == UNCHANGED:
                stats.files += 1
                out[key] = saved
                return [part]
            if part is not None:
                start = int(saved[0][0])
    if part is None:
        part = Part(sid, main)
    path = Path(key)
    read = ReadStats()
    lines = JsonlLines(path, start, read)
    read_records(part, lines)
    part.counts = [
        part.counts[0] + read.records,
        part.counts[1] + read.skipped,
        part.counts[2] + read.too_large,
    ]
    stats.files += read.files
    stats.bytes_read += read.bytes_read
    stats.problems.extend(read.problems)
    stats.partial_tail += lines.partial
    out[key] = [new_mark(path, info, lines.end), part.to_json()]
    if lines.tail is None:
        return [part]
    tail = Part(part.sid, main)
    read_records(tail, [lines.tail])
    tail.counts[0] += 1
    return [part, tail]


def _history_lines(
    path: Path, saved: object, stats: ReadStats, out: dict[str, Any]
) -> list[list[Any]]:
    """The prompts of a ``history.jsonl`` as ``[text, time, session, project]``: the saved
    ones, and those of the lines appended since (all of them when the file was rewritten)."""
    try:
        info = path.stat()
    except OSError as exc:
        stats.problem(f"{path.name}: {exc.strerror}")
        return []
    start, kept, counts = 0, [], [0, 0, 0]
    if isinstance(saved, list) and len(saved) == 3:
        how = compare(path, info, saved[0])
        if how != REWRITTEN and isinstance(saved[1], list) and isinstance(saved[2], list):
            kept, counts = list(saved[1]), list(saved[2])
            if how == UNCHANGED:
                stats.files += 1
                stats.records += counts[0]
                stats.skipped += counts[1]
                stats.too_large += counts[2]
                out[str(path)] = saved
                return kept
            start = int(saved[0][0])
    read = ReadStats()
    lines = JsonlLines(path, start, read)
    kept += [entry for entry in map(_history_line, lines) if entry is not None]
    counts = [counts[0] + read.records, counts[1] + read.skipped, counts[2] + read.too_large]
    out[str(path)] = [new_mark(path, info, lines.end), kept, counts]
    stats.files += read.files
    stats.bytes_read += read.bytes_read
    stats.records += counts[0]
    stats.skipped += counts[1]
    stats.too_large += counts[2]
    stats.problems.extend(read.problems)
    stats.partial_tail += lines.partial
    if lines.tail is None:
        return kept
    stats.records += 1
    tail = _history_line(lines.tail)
    return kept if tail is None else [*kept, tail]


def _history_line(line: dict[str, Any]) -> list[Any] | None:
    text = clean_text(line.get("display"))
    if not text or _SLASH_COMMAND.match(text):
        return None
    when = parse_time(line.get("timestamp"))
    given = line.get("sessionId")
    return [
        text,
        when.isoformat() if when is not None else None,
        given if isinstance(given, str) else "",
        line.get("project") if isinstance(line.get("project"), str) else None,
    ]


def _history(
    lines: list[list[Any]], sessions: list[SessionFacts], tz: tzinfo | None
) -> list[SessionFacts]:
    """Sessions known only from ``history.jsonl`` (their transcripts were swept)."""
    known = {s.session_id for s in sessions}
    typed = {p for s in sessions for p in s.prompts}
    found: dict[tuple[str, str], SessionFacts] = {}
    for text, stamp, sid, project in lines:
        if sid in known or (not sid and text in typed):
            continue
        when = datetime.fromisoformat(stamp) if stamp else None
        cwd = remembered_path(project)
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
