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
  read-only without touching the store (see ``open_sqlite``).
- ``memories/``: ``MEMORY.md``, ``memory_summary.md`` (bullets and paragraphs, see
  ``common.memory.memory_rows``), ``raw_memories.md`` (one note per ``## Thread `<id>``` section),
  ``rollout_summaries/*.md`` (one note each, linked by their ``thread_id:`` header), both at the
  top and in the per-cwd buckets ``memories/<sha256(cwd)[:16]>/memory/`` and
  ``memories/user/memory/``. Threads run inside ``memories/`` are the consolidation agent's own
  and are left out. ``AGENTS.md`` / ``AGENTS.override.md`` at the root are notes too.

A subagent thread (``source.subagent`` naming its parent) adds its files to the parent session.
A fork (``forked_from_id``) keeps only the prompts and edits its parent does not hold.

Visibility follows the Claude Code reader's rule (``claude_code`` module docstring): private
for sessions under ``~/personal`` or ``~/private``, for notes and entities tied only to them, and
for memory files or bullets tagged private; team otherwise. ``source`` is never set.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

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
from bourdon.readers.common.facts import Assembler, SessionFacts
from bourdon.readers.common.files import listing, store_roots
from bourdon.readers.common.paths import absolute_path, remembered_path
from bourdon.readers.common.privacy import is_private_path
from bourdon.readers.common.text import clean_block, user_prompt
from bourdon.readers.common.tools import patch_files

NAME: Final = "codex"
AGENT_TYPE: Final = "code-assistant"

KNOWN_TYPES: Final = frozenset(
    "session_meta turn_context response_item event_msg compacted world_state "
    "inter_agent_communication inter_agent_communication_metadata".split()
)
KNOWN_ITEMS: Final = frozenset(
    "message reasoning function_call function_call_output custom_tool_call "
    "custom_tool_call_output local_shell_call web_search_call image_generation_call "
    "tool_search_call tool_search_output compaction context_compaction ghost_snapshot other "
    "mcp_tool_call".split()
)
KNOWN_EVENTS: Final = frozenset(
    "user_message agent_message agent_reasoning agent_reasoning_raw_content "
    "agent_reasoning_section_break token_count task_started task_complete turn_started "
    "turn_complete turn_aborted patch_apply_begin patch_apply_end context_compacted "
    "thread_rolled_back mcp_tool_call_begin mcp_tool_call_end web_search_begin web_search_end "
    "item_started item_completed exec_command_begin exec_command_end exec_command_output_delta "
    "error warning stream_error thread_name_updated plan_update entered_review_mode "
    "exited_review_mode view_image_tool_call background_event session_configured "
    "turn_diff get_history_entry_response shutdown_complete".split()
)
_INJECTED = re.compile(
    r"^\s*(<environment_context>|<user_instructions>|# AGENTS\.md instructions|<turn_aborted>"
    r"|<user_shell_command>|<INSTRUCTIONS>)"
)
_ROLLOUT_ID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
_THREAD_COLUMNS: Final = (
    "id rollout_path created_at created_at_ms cwd title first_user_message git_origin_url "
    "parent_thread_id archived".split()
)


class CodexReader:
    """Codex rollouts, thread names, prompt history, the thread database and memories."""

    name = NAME
    agent_type = AGENT_TYPE
    store_env = "CODEX_HOME"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        return [ctx.home / ".codex"]

    def health(self, ctx: ReaderContext) -> Health:
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        stats = ReadStats()
        rows = Assembler(ctx)
        for root in store_roots(self, ctx):
            _read_root(root, ctx, rows, stats)
        stats.problems.extend(rows.problems)
        result = rows.manifest(NAME, AGENT_TYPE)
        stats.sessions = len(result["recent_sessions"])
        return ReadResult(result, stats)


@dataclass
class _Rollout:
    facts: SessionFacts
    path: Path
    prompts: list[str] = field(default_factory=list)
    fallback_prompts: list[str] = field(default_factory=list)  # response_item user messages
    edits: list[tuple[str, str]] = field(default_factory=list)  # (call id, absolute path)
    names: list[str] = field(default_factory=list)  # thread_name_updated
    parent: str | None = None  # a subagent's parent thread
    forked_from: str | None = None
    seen_meta: bool = False


def _read_root(root: Path, ctx: ReaderContext, rows: Assembler, stats: ReadStats) -> None:
    rollouts: dict[str, _Rollout] = {}
    paths = listing(root, "sessions/**/rollout-*.jsonl")
    paths += listing(root, "archived_sessions/**/rollout-*.jsonl")
    for path in paths:
        _add(rollouts, _rollout(path, stats))
    names = _thread_names(root / "session_index.jsonl", stats)
    threads = _threads(root / "state_5.sqlite", stats)
    for thread_id, thread in sorted(threads.items()):
        given = str(thread.get("rollout_path") or "")
        if thread_id in rollouts or not re.search(r"(^|[\\/])rollout-[^\\/]*$", given):
            continue
        if Path(given).is_file():  # a rollout outside sessions/: read it too
            _add(rollouts, _rollout(Path(given), stats))
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
        title = title or _db_title(thread, facts.prompts)
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
        parent_id = r.parent or _text_or_none(threads.get(sid, {}).get("parent_thread_id"))
        host = sessions.get(parent_id or "")
        if host is not None and sid in sessions and parent_id != sid:
            host.edits += [p for p in sessions.pop(sid).edits if p not in host.edits]
    for sid, thread in sorted(threads.items()):
        if sid not in rollouts and sid not in sessions:
            facts = _from_thread(sid, thread, names.get(sid))
            if not any(c == memories or c.startswith(memories + "/") for c in facts.cwds):
                sessions[sid] = facts
    for sid, facts in _history(root / "history.jsonl", stats).items():
        if sid not in sessions and sid not in rollouts:
            if sid in names:
                facts.titles = [names[sid]]
            sessions[sid] = facts
    for facts in sessions.values():
        rows.add_session(facts)
    _memories(root, ctx, rows, rollouts, sessions)


def _add(rollouts: dict[str, _Rollout], found: _Rollout | None) -> None:
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


def _rollout(path: Path, stats: ReadStats) -> _Rollout | None:
    match = _ROLLOUT_ID.search(path.stem)
    r = _Rollout(SessionFacts(match.group(1) if match else path.stem), path)
    facts = r.facts
    count = 0
    for record in iter_jsonl(path, stats):
        count += 1
        kind = _kind(record.get("type"))
        payload = record.get("payload")
        if kind not in KNOWN_TYPES or not isinstance(payload, dict):
            _unknown(stats, f"line type {kind!r}")
            continue
        when = record.get("timestamp")
        if facts.start is None and when is not None:
            facts.start = parse_time(when)
        if kind == "session_meta":
            _meta(r, payload)
        elif kind == "turn_context":
            cwd = remembered_path(payload.get("cwd"))
            if cwd:
                facts.see_cwd(cwd)
                facts.cwd = cwd  # the latest turn's cwd wins
        elif kind == "event_msg":
            _event(r, payload, stats)
        elif kind == "response_item":
            _item(r, payload, stats)
    if count == 0:
        return None
    return r


def _meta(r: _Rollout, payload: dict[str, Any]) -> None:
    if r.seen_meta:
        return  # a resume appends another session_meta; the first is canonical
    r.seen_meta = True
    facts = r.facts
    if isinstance(payload.get("id"), str) and payload["id"]:
        facts.session_id = payload["id"]
    if facts.start is None:
        facts.start = parse_time(payload.get("timestamp"))
    cwd = remembered_path(payload.get("cwd"))
    facts.see_cwd(cwd)
    git = payload.get("git")
    url = git.get("repository_url") if isinstance(git, dict) else None
    if cwd and isinstance(url, str) and url:
        facts.remotes[cwd] = url
    r.forked_from = _text_or_none(payload.get("forked_from_id"))
    source = payload.get("source")
    if isinstance(source, dict):
        r.parent = _find_key(source, "parent_thread_id")


def _event(r: _Rollout, payload: dict[str, Any], stats: ReadStats) -> None:
    kind = _kind(payload.get("type"))
    if kind == "user_message":
        if payload.get("kind") in ("environment_context", "user_instructions"):
            return
        text = _prompt(payload.get("message"))
        if text:
            r.prompts.append(text)
    elif kind == "thread_name_updated":
        name = clean_text(payload.get("thread_name"))
        if name:
            r.names.append(name)
    elif kind == "patch_apply_end":
        changes = payload.get("changes")
        if payload.get("success") is False or not isinstance(changes, dict):
            return
        call = str(payload.get("call_id") or "")
        for path, change in changes.items():
            targets = [path]
            if isinstance(change, dict) and isinstance(change.get("move_path"), str):
                targets.append(change["move_path"])
            for target in targets:
                absolute = _resolve(target, r.facts.cwd)
                if absolute:
                    r.edits.append((f"{call}:{absolute}", absolute))
    elif kind not in KNOWN_EVENTS:
        _unknown(stats, f"event {kind!r}")


def _item(r: _Rollout, payload: dict[str, Any], stats: ReadStats) -> None:
    kind = _kind(payload.get("type"))
    if kind == "message":
        if payload.get("role") != "user" or not isinstance(payload.get("content"), list):
            return
        texts = [
            b.get("text")
            for b in payload["content"]
            if isinstance(b, dict) and b.get("type") in ("input_text", "text")
        ]
        text = _prompt("\n".join(t for t in texts if isinstance(t, str)))
        if text:
            r.fallback_prompts.append(text)
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        call = str(payload.get("call_id") or payload.get("id") or "")
        for body in _strings(payload.get("arguments"), payload.get("input"), payload.get("action")):
            if "*** Begin Patch" not in body:
                continue
            for path in patch_files(body):
                absolute = _resolve(path, r.facts.cwd)
                if absolute:
                    r.edits.append((f"{call}:{absolute}", absolute))
    elif kind not in KNOWN_ITEMS:
        _unknown(stats, f"response item {kind!r}")


def _strings(*values: object) -> Iterator[str]:
    """Every string inside the values; a string holding JSON is opened too."""
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
            if value[:1] in ("[", "{"):
                with contextlib.suppress(ValueError, RecursionError):
                    stack.append(json.loads(value))
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def _prompt(value: object) -> str:
    if not isinstance(value, str) or _INJECTED.match(value):
        return ""
    return user_prompt(value)


def _resolve(path: str, cwd: str | None) -> str | None:
    text = remembered_path(path)
    return absolute_path(text, cwd) if text else None


def _find_key(value: object, key: str) -> str | None:
    """The first non-empty string under ``key`` anywhere inside ``value`` (no recursion)."""
    stack = [value]
    while stack:
        item = stack.pop(0)
        if isinstance(item, dict):
            found = item.get(key)
            if isinstance(found, str) and found:
                return found
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _kind(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _unknown(stats: ReadStats, what: str) -> None:
    stats.skipped += 1
    text = f"codex: skipped unknown {what}"
    if text not in stats.problems:
        stats.problem(text)


def _db_title(thread: dict[str, Any], prompts: list[str]) -> str | None:
    title = clean_text(thread.get("title"))
    first = clean_text(thread.get("first_user_message"))
    if not title or title == first or title in prompts:
        return None
    return title


def _from_thread(sid: str, thread: dict[str, Any], name: str | None) -> SessionFacts:
    facts = SessionFacts(sid)
    created = thread.get("created_at_ms") or thread.get("created_at")
    facts.start = parse_time(created) if created else None
    facts.see_cwd(thread.get("cwd"))
    origin = thread.get("git_origin_url")
    if facts.cwd and isinstance(origin, str) and origin:
        facts.remotes[facts.cwd] = origin
    first = _prompt(thread.get("first_user_message"))
    facts.prompts = [first] if first else []
    title = name or _db_title(thread, facts.prompts)
    facts.titles = [title] if title else []
    return facts


# -- side files --------------------------------------------------------------------------


def _thread_names(path: Path, stats: ReadStats) -> dict[str, str]:
    names: dict[str, str] = {}
    if path.is_file():
        for line in iter_jsonl(path, stats):
            name = clean_text(line.get("thread_name"))
            if isinstance(line.get("id"), str) and name:
                names[line["id"]] = name  # appended on every rename: the last wins
    return names


def _history(path: Path, stats: ReadStats) -> dict[str, SessionFacts]:
    found: dict[str, SessionFacts] = {}
    if not path.is_file():
        return found
    for line in iter_jsonl(path, stats):
        sid = line.get("session_id") or line.get("conversation_id")
        text = _prompt(line.get("text"))
        if not isinstance(sid, str) or not sid or not text:
            continue
        facts = found.setdefault(sid, SessionFacts(sid))
        when = parse_time(line.get("ts"))
        if when is not None and (facts.start is None or when < facts.start):
            facts.start = when
        if text not in facts.prompts:
            facts.prompts.append(text)
    return found


def _threads(path: Path, stats: ReadStats) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return out
    try:
        with open_sqlite(path) as db:
            if db is None:
                stats.problem(f"{path.name}: not an SQLite database")
                return out
            stats.files += 1
            columns = {row[1] for row in db.execute("PRAGMA table_info(threads)")}
            wanted = [c for c in _THREAD_COLUMNS if c in columns]
            if "id" not in wanted:
                return out
            cursor = db.execute(f"SELECT {', '.join(wanted)} FROM threads ORDER BY id")
            for values in cursor:
                row = dict(zip(wanted, values, strict=True))
                if isinstance(row.get("id"), str) and row["id"]:
                    out[row["id"]] = row
                    stats.records += 1
    except (sqlite3.Error, OSError) as exc:
        stats.problem(f"{path.name}: {exc}")
    return out


@contextlib.contextmanager
def open_sqlite(path: Path) -> Iterator[sqlite3.Connection | None]:
    """A read-only connection that changes nothing in the store, or ``None`` if not SQLite.

    A WAL database whose ``-wal`` and ``-shm`` both exist is opened in place with
    ``mode=ro&readonly_shm=1``: it sees committed, uncheckpointed frames and writes nothing, not
    even the read marks a plain ``mode=ro`` connection stores in ``-shm``. Otherwise (a WAL
    database missing either file, where SQLite would create them, or an open that fails) the
    db, ``-wal`` and ``-shm`` are copied together to a temporary folder and the copy is read.
    """
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError:
        yield None
        return
    if not header.startswith(b"SQLite format 3\x00"):
        yield None
        return
    wal_mode = len(header) > 19 and 2 in (header[18], header[19])
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    db: sqlite3.Connection | None = None
    if not wal_mode or (wal.exists() and shm.exists()):
        uri = f"file:{quote(str(path))}?mode=ro" + ("&readonly_shm=1" if wal_mode else "")
        try:
            db = sqlite3.connect(uri, uri=True, timeout=2.0)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error:
            if db is not None:
                db.close()
            db = None
    if db is not None:
        try:
            yield db
        finally:
            db.close()
        return
    with tempfile.TemporaryDirectory(prefix="bourdon-sqlite-") as tmp:
        copy = Path(tmp) / path.name
        _copy_together(path, copy)
        db = sqlite3.connect(str(copy), timeout=2.0)
        try:
            yield db
        finally:
            db.close()


def _copy_together(path: Path, copy: Path) -> None:
    """Copy a database with its -wal and -shm, again if a writer changed them meanwhile."""
    parts = ("", "-wal", "-shm")
    for _ in range(3):
        before = [_stat(Path(f"{path}{p}")) for p in parts]
        for part in parts:
            source, target = Path(f"{path}{part}"), Path(f"{copy}{part}")
            with contextlib.suppress(FileNotFoundError):
                shutil.copyfile(source, target)
        if before == [_stat(Path(f"{path}{p}")) for p in parts]:
            return


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns)


# -- memories ----------------------------------------------------------------------------


def _memories(
    root: Path,
    ctx: ReaderContext,
    rows: Assembler,
    rollouts: dict[str, _Rollout],
    sessions: dict[str, SessionFacts],
) -> None:
    for name in ("AGENTS.md", "AGENTS.override.md"):
        rows.add_memory(root / name, "agents-md", None, None)
    top = root / "memories"
    if not top.is_dir():
        return
    cwds = [c for r in rollouts.values() for c in r.facts.cwds]
    places: list[tuple[Path, str | None]] = [(top, None)]
    for bucket in [p for p in listing(top, "*") if p.is_dir()]:
        if (bucket / "memory").is_dir():
            places.append((bucket / "memory", memory_bucket(bucket.name, cwds)))
    for folder, cwd in places:
        project = rows.project_of(cwd) if cwd else None
        for name in ("MEMORY.md", "memory_summary.md"):
            rows.add_memory(folder / name, "codex-memory", project, cwd)
        _raw_memories(folder / "raw_memories.md", ctx, rows, sessions)
        for path in listing(folder, "rollout_summaries/*.md"):
            text, date = _read_text(path, ctx, rows)
            if text is None:
                continue
            thread = re.search(r"^thread_id:\s*(\S+)", text, re.M)
            body = re.sub(r"^(thread_id|updated_at|cwd|rollout_path):.*\n?", "", text, flags=re.M)
            _thread_note(body, date, thread.group(1) if thread else None, rows, sessions, cwd)


def _raw_memories(
    path: Path, ctx: ReaderContext, rows: Assembler, sessions: dict[str, SessionFacts]
) -> None:
    text, date = _read_text(path, ctx, rows)
    if text is None:
        return
    parts = re.split(r"^## Thread `([^`]+)`\s*$", text, flags=re.M)
    for thread, body in zip(parts[1::2], parts[2::2], strict=True):
        body = re.sub(r"^updated_at:.*\n?", "", body, flags=re.M)
        _thread_note(body, date, thread, rows, sessions, None)


def _thread_note(
    body: str,
    date: str,
    thread: str | None,
    rows: Assembler,
    sessions: dict[str, SessionFacts],
    cwd: str | None,
) -> None:
    text = clean_block(body)
    if not text:
        return
    facts = sessions.get(thread or "")
    where = facts.cwd if facts is not None else cwd
    project = rows.project_of(where) if where else None
    private = is_private_path(where, rows.ctx.home)
    note: dict[str, Any] = {"date": date, "text": text}
    if project:
        note["related_entities"] = [project]
    note["tags"] = ["codex-memory"]
    note["visibility"] = "private" if private else "team"
    rows.notes.append(note)


def _read_text(path: Path, ctx: ReaderContext, rows: Assembler) -> tuple[str | None, str]:
    try:
        if not path.is_file():
            return None, ""
        info = path.stat()
        if info.st_size > 1024 * 1024:
            rows.problems.append(f"{path.name}: skipped, {info.st_size:,} bytes is too large")
            return None, ""
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        rows.problems.append(f"{path.name}: {exc.strerror}")
        return None, ""
    return text, local_date(datetime.fromtimestamp(info.st_mtime, UTC), ctx.tz)


def memory_bucket(name: str, cwds: Iterable[str]) -> str | None:
    """The cwd whose ``sha256(cwd)[:16]`` names a memory folder (Codex's hashed layout)."""
    for cwd in cwds:
        if hashlib.sha256(cwd.encode("utf-8", "surrogatepass")).hexdigest()[:16] == name:
            return cwd
    return None
