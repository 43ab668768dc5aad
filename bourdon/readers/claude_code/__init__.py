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
what was gathered from it (a ``transcripts.Part`` as header and body, or the history's prompts).
An unchanged file is not opened and its part's body not parsed, a grown one is read from its
offset, a rewritten one whole; the unfinished last line is read every time and never saved.
The state's ``point`` is a checkpoint (``sessions.Checkpoint`` and ``Assembler.checkpoint``):
what the sessions older than about the ``sessions.TAIL`` newest came to. When it holds, only the
sessions after it are combined and added again; otherwise all are, as a whole read does. The
files of its sessions are ``quiet.Quiet``: while each is unchanged, what they add to the read's
tallies is taken from the checkpoint and their saved parts are not looked at; what was saved of
them is the state's ``cold`` part, which the pipeline keeps in a file of its own and loads only
when their seal does not hold (``quiet.sealed``). Both give the view a whole read gives. A
state of another ``RESUME_SCHEMA`` or reader is ignored (and the pipeline drops one a different
bourdon version saved); one found garbled is read whole.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    default_health,
    local_date,
)
from bourdon.readers.claude_code.files import (
    ColdParts,
    Kept,
    history_prompts,
    saved_part,
    transcript_parts,
)
from bourdon.readers.claude_code.quiet import Quiet, is_quiet, sealed
from bourdon.readers.claude_code.sessions import Checkpoint, Scan, Sessions
from bourdon.readers.claude_code.transcripts import GarbledPart, transcript_files
from bourdon.readers.common.facts import Assembler, SessionFacts
from bourdon.readers.common.files import listing, store_roots
from bourdon.readers.common.paths import remembered_path

NAME: Final = "claude-code"
AGENT_TYPE: Final = "code-assistant"
# The shape of the resume state (and of its saved parts); a state of another one is ignored.
RESUME_SCHEMA: Final = 7
_POINT: Final = "sessions"  # the one entry of the state's "point" section


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
        try:
            return self._read(ctx, _saved(resume))
        except GarbledPart:  # found only when the part was needed: read the store whole
            return self._read(ctx, _saved(None))

    def _read(self, ctx: ReaderContext, saved: dict[str, Any]) -> ReadResult:
        stats = ReadStats()
        kept = Kept(saved["files"], saved["bodies"])
        cold = ColdParts(saved["cold"])  # the quiet files' saved entries, loaded if needed
        files = Kept()
        history: dict[str, Any] = {}
        roots = store_roots(self, ctx)
        scan = Scan(stats)
        resuming = bool(saved["files"]) or bool(saved["point"])  # (a cold part has a point)
        hot: set[str] = set()  # the sessions of the files that changed since the last read
        kept_cold: Mapping[str, Any] = {}
        kept_point = saved["point"].get(_POINT)
        parsed = _parsed_point(kept_point)
        quiet = parsed["quiet"] if parsed is not None else None
        before = set(parsed["scan"].sessions) if parsed is not None else set()
        listed = [_listed(root, scan, ctx) for root in roots]
        quiet_keys = _quiet_keys(
            [key for paths, _ in listed for key, *_ in paths if key not in kept.marks],
            quiet,
            before,
            cold,
            ctx,
        )
        if cold.loaded:  # the seal did not hold: a file's saved entries may be in either part
            kept = cold.merged(kept)
        for paths, problems in listed:
            for problem in problems:
                stats.problem(problem)
            for key, sid, main, folder in paths:
                if key in quiet_keys:
                    stats.files += 1
                    scan.add_quiet(folder, key)
                    continue
                parts, moved = transcript_parts(key, sid, main, kept, stats, files, ctx.listing)
                for part in parts:
                    scan.add(folder, part, key, moved=moved)
                if moved and resuming:
                    hot.update(p.sid for p in parts if p.sid)
        scan.settle(quiet, before, lambda key: saved_part(cold.kept(), key))
        lines: list[list[Any]] = []
        for root in roots:
            path = root / "history.jsonl"
            if path.is_file():
                lines += history_prompts(path, saved["history"].get(str(path)), stats, history)
        nosid = sorted({text for text, _, sid, _ in lines if not sid})
        # A file gone (the 30-day sweep) may have held what older sessions claimed: no resume.
        gone = not (files.marks.keys() | quiet_keys) >= kept.marks.keys()
        point = None if gone else _holding(parsed, ctx, nosid)
        found = scan.sessions_after(point["scan"], hot) if point is not None else None
        rows = Assembler.resumed(ctx, point["assembler"]) if found and point else None
        if rows is None or found is None or point is None:  # the checkpoint does not hold
            found = scan.sessions(hot)
            rows = Assembler(ctx)
            for facts in found.facts[: found.prefix]:
                rows.add_session(facts)
            everything = cold.with_quiet(files, quiet_keys)
            kept_point, taken = _new_point(found, rows, ctx, nosid, scan, everything.marks)
            files, kept_cold = _split(everything, taken.keys if taken is not None else [])
            rest, known, typed = found.facts[found.prefix :], set(), set()
        else:
            rest, known, typed = found.facts, set(point["scan"].sessions), set(point["typed"])
            # The point holds, so its quiet files are all unchanged: their cold part stays.
            if quiet is not None and len(quiet_keys) == quiet.files:
                kept_cold = cold.cold
            else:  # never, by the above; all kept in the hot part just in case
                files, kept_cold = cold.with_quiet(files, quiet_keys), {}
        known.update(s.session_id for s in found.facts)
        typed.update(p for s in found.facts for p in s.prompts)
        for facts in rest + _history(lines, known, typed, ctx.tz):
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
        state = {
            "schema": RESUME_SCHEMA,
            "reader": NAME,
            "files": files.marks,
            "bodies": files.bodies,
            "history": history,
            "point": {_POINT: kept_point} if kept_point is not None else {},
            "cold": kept_cold,
        }
        return ReadResult(result, stats, resume=state)


def _saved(resume: Mapping[str, Any] | None) -> dict[str, Any]:
    """The per-file entries of a resume state this reader wrote, else none (a whole read).
    Its cold part is any mapping (``ingest.resume.ColdState``: not read until looked into)."""
    if (
        isinstance(resume, Mapping)
        and resume.get("schema") == RESUME_SCHEMA
        and resume.get("reader") == NAME
        and isinstance(resume.get("files"), dict)
        and isinstance(resume.get("history"), dict)
        and isinstance(resume.get("bodies"), dict)
        and isinstance(resume.get("point"), dict)
        and isinstance(resume.get("cold", {}), Mapping)
    ):
        return {
            **{k: resume[k] for k in ("files", "bodies", "history", "point")},
            "cold": resume.get("cold", {}),
        }
    return {"files": {}, "bodies": {}, "history": {}, "point": {}, "cold": {}}


def _listed(root: Path, scan: Scan, ctx: ReaderContext) -> tuple[list[Any], list[str]]:
    """The transcripts under ``root`` (``transcript_files``), and the problems listing them
    met: told when the root's files are read, as a read of one root after another tells them."""
    found = ReadStats()
    return transcript_files(root, found, scan.folders, ctx.listing), found.problems


def _quiet_keys(
    candidates: list[str],
    quiet: Quiet | None,
    before: set[str],
    cold: ColdParts,
    ctx: ReaderContext,
) -> set[str]:
    """Which of ``candidates`` (the transcripts the state's hot part does not hold) are the
    checkpoint's quiet files still: all of them at one look when the seal holds; else each one
    looked up in the cold part."""
    if quiet is None or not before:
        return set()
    if sealed(candidates, quiet, ctx.listing):
        return set(candidates)
    saved = cold.kept()
    return {key for key in candidates if is_quiet(key, before, saved, ctx.listing)}


def _split(everything: Kept, quiet: list[str]) -> tuple[Kept, dict[str, Any]]:
    """A new checkpoint's state: the ``quiet`` files' entries as its cold part, the rest hot."""
    if not quiet:
        return everything, {}
    marks, bodies = dict(everything.marks), dict(everything.bodies)
    cold_marks = {key: marks.pop(key) for key in quiet}
    cold_bodies = {key: bodies.pop(key) for key in quiet}
    return Kept(marks, bodies), {"files": cold_marks, "bodies": cold_bodies}


def _signature(ctx: ReaderContext) -> list[Any]:
    """What a checkpoint's sessions depend on besides the store: home, time zone, settings."""
    return [
        str(ctx.home),
        str(ctx.tz),
        list(time.tzname),
        time.timezone,
        time.altzone,
        ctx.prompt_visibility,
    ]


def _parsed_point(kept: object) -> dict[str, Any] | None:
    """The saved checkpoint (a JSON string), parsed; ``None`` when there is none or it is
    garbled."""
    if not isinstance(kept, str):
        return None
    try:
        data = json.loads(kept)
        return {
            **data,
            "scan": Checkpoint.from_json(data["scan"]),
            "quiet": Quiet.from_json(data["quiet"]),
        }
    except (ValueError, TypeError, KeyError, RecursionError, AttributeError):
        return None


def _holding(
    point: dict[str, Any] | None, ctx: ReaderContext, nosid: list[str]
) -> dict[str, Any] | None:
    """``point`` when it was taken in this context and knew every history prompt without a
    session (they are matched against the sessions' prompts)."""
    try:
        if point is None or point["signature"] != _signature(ctx):
            return None
        return point if set(nosid) <= set(point["nosid"]) else None
    except (TypeError, KeyError):
        return None


def _new_point(
    found: Sessions,
    rows: Assembler,
    ctx: ReaderContext,
    nosid: list[str],
    scan: Scan,
    marks: dict[str, Any],
) -> tuple[str | None, Quiet | None]:
    """The checkpoint after the sessions ``rows`` has so far, as the next read is given it,
    and its quiet files (``marks``: each transcript's ``[mark, header]`` as this read leaves
    it); ``(None, None)`` when no checkpoint is taken."""
    if found.checkpoint is None:
        return None, None
    assembled = rows.checkpoint()
    if assembled is None:
        return None, None
    typed = {p for s in found.facts[: found.prefix] for p in s.prompts}
    quiet = scan.quiet(found.checkpoint.sessions, marks)
    point = json.dumps(
        {
            "signature": _signature(ctx),
            "scan": found.checkpoint.to_json(),
            "quiet": quiet.to_json(),
            "assembler": assembled,
            "nosid": nosid,
            "typed": [text for text in nosid if text in typed],
        },
        separators=(",", ":"),
    )
    return point, quiet


def _history(
    lines: list[list[Any]], known: set[str], typed: set[str], tz: tzinfo | None
) -> list[SessionFacts]:
    """Sessions known only from ``history.jsonl`` (their transcripts were swept): none of the
    ``known`` sessions, and no prompt without a session that one of them ``typed``."""
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
