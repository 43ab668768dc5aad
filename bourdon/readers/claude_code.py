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
  its repository: notes and entities, see ``memory_rows``.

Visibility (every row gets one explicitly): ``private`` for a session whose cwd is under a
private folder (``~/personal`` or ``~/private``, also ``/home/<user>/...``, ``/Users/<user>/...``
and ``C:\\Users\\<user>\\...`` shapes), for entities and notes tied only to such projects, for a
memory file whose frontmatter says ``visibility: private``, ``private: true`` or carries a
``private`` tag, for ``CLAUDE.local.md`` (personal by design), and for a bullet marked
``#private``; ``team`` for everything else. ``source`` is never set: the pipeline stamps it.

The helpers in the second half (project identity across worktrees and clones, privacy,
memory-file parsing, row assembly) are shared with the Codex reader.
"""

from __future__ import annotations

import hashlib
import ntpath
import os
import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from bourdon.model import fold
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
from bourdon.readers.base import (
    normalize_path as _normalize_path,
)


@lru_cache(maxsize=8192)
def _normalized(value: str) -> str | None:
    return _normalize_path(value)


def normalize_path(value: object) -> str | None:
    """``base.normalize_path``, remembered: the same few cwds come back on every record."""
    return _normalized(value) if isinstance(value, str) else None


NAME: Final = "claude-code"
AGENT_TYPE: Final = "code-assistant"

MAX_SESSIONS: Final = 500
MAX_ENTITIES: Final = 1000
MAX_NOTES: Final = 1000
MAX_NOTE: Final = 4000
MAX_MEMORY_FILE: Final = 1024 * 1024

EDIT_TOOLS: Final = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
KNOWN_RECORDS: Final = frozenset(
    "user assistant system attachment summary ai-title custom-title last-prompt mode "
    "permission-mode queue-operation file-history-snapshot file-history-delta progress pr-link "
    "bridge-session agent-name agent-setting atis-latch tag".split()
)
KNOWN_BLOCKS: Final = frozenset(
    "text thinking redacted_thinking tool_use tool_result image document server_tool_use "
    "web_search_tool_result web_fetch_tool_result mcp_tool_use mcp_tool_result "
    "container_upload search_result tool_reference".split()
)
# Text the harness puts in a user record that the user did not type.
_WRAPPER = re.compile(
    r"^\s*(<(command-name|command-message|command-args|local-command-stdout|local-command-stderr"
    r"|local-command-caveat|bash-input|bash-stdout|bash-stderr|task-notification"
    r"|user-memory-input)>|Caveat: The messages below were generated|\[Request interrupted)"
)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
_SLASH_COMMAND = re.compile(r"^/[\w:-]+(\s|$)")  # "/clear", "/model opus"; not "/home/x"


class ClaudeCodeReader:
    """Claude Code transcripts, prompt history, auto memory and CLAUDE.md files."""

    name = NAME
    agent_type = AGENT_TYPE
    store_env = "CLAUDE_CONFIG_DIR"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        xdg = ctx.env.get("XDG_CONFIG_HOME")
        config = Path(xdg).expanduser() if xdg else ctx.home / ".config"
        return [ctx.home / ".claude", config / "claude"]

    def health(self, ctx: ReaderContext) -> Health:
        return default_health(self, ctx)

    def read(self, ctx: ReaderContext) -> ReadResult:
        stats = ReadStats()
        roots = store_roots(self, ctx)
        scan = _Scan(stats)
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


def store_roots(reader: Any, ctx: ReaderContext) -> list[Path]:
    """Every store folder to read: the explicit one, the env list, or each default that exists."""
    if ctx.store is not None:
        return [ctx.store] if ctx.store.is_dir() else []
    override = ctx.env.get(reader.store_env)
    if override:
        parts = [p.strip() for p in re.split(rf"[,{re.escape(os.pathsep)}]", override)]
        candidates = [ctx.home / p[2:] if p.startswith("~/") else Path(p) for p in parts if p]
    else:
        candidates = list(reader.locations(ctx))
    found: list[Path] = []
    seen: set[str] = set()
    for path in candidates:
        try:
            key = str(path.resolve())
        except OSError:
            continue
        if path.is_dir() and key not in seen:
            seen.add(key)
            found.append(path)
    return found


# -- transcripts ---------------------------------------------------------------------------


@dataclass
class SessionFacts:
    """What a reader learned about one session, before it becomes a manifest row."""

    session_id: str
    start: datetime | None = None
    cwd: str | None = None
    cwds: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)  # absolute paths where known
    remotes: dict[str, str] = field(default_factory=dict)  # cwd -> git remote URL

    def see_cwd(self, value: object) -> None:
        cwd = normalize_path(value)
        if cwd and cwd not in self.cwds:
            self.cwds.append(cwd)
        if cwd and self.cwd is None:
            self.cwd = cwd


# An item (prompt or edit) of a transcript: (record uuid, value, session named by the record
# when it differs from the file's: a line inherited from an ancestor by a fork).
_Item = tuple[str | None, str, str | None]


@dataclass
class _Transcript:
    """One session's transcript, with its prompts and edits keyed by record uuid."""

    facts: SessionFacts
    custom_title: str | None = None
    ai_title: str | None = None
    prompts: list[_Item] = field(default_factory=list)
    edits: list[_Item] = field(default_factory=list)
    main: bool = False  # a top-level transcript was read (not only subagent files)
    inherited_start: datetime | None = None  # first time of inherited lines, a fallback


class _Scan:
    """Walks ``projects/`` and collects transcripts; resolves forks and legacy summaries."""

    def __init__(self, stats: ReadStats) -> None:
        self.stats = stats
        self.by_id: dict[str, _Transcript] = {}
        self.owner: dict[str, str] = {}  # record uuid -> session id (first file wins)
        self.summaries: list[tuple[str, str]] = []  # (leafUuid, text)
        self.unknown: set[str] = set()
        self.dirs: list[tuple[Path, str | None]] = []  # (memory folder, a cwd of that project)
        self._project_cwd: dict[Path, str] = {}

    def transcripts(self, root: Path) -> None:
        projects = root / "projects"
        if not projects.is_dir():
            return
        try:
            folders = sorted(p for p in projects.iterdir() if p.is_dir())
        except OSError as exc:
            self.stats.problem(f"{projects}: {exc.strerror}")
            return
        for folder in folders:
            try:
                self._folder(folder)
            except OSError as exc:  # removed or rotated while we read (the 30-day sweep)
                self.stats.problem(f"{folder.name}: {exc.strerror}")

    def _folder(self, folder: Path) -> None:
        subagents: list[tuple[Path, str | None]] = []
        for path in sorted(folder.glob("*.jsonl")):
            if path.name.startswith("agent-"):
                subagents.append((path, None))
            else:
                self._file(path, path.stem, folder)
        for child in sorted(p for p in folder.iterdir() if p.is_dir()):
            for path in sorted(child.glob("subagents/**/*.jsonl")):
                subagents.append((path, child.name))
        for path, parent in subagents:
            self._file(path, parent, folder, main=False)
        if (folder / "memory").is_dir():
            self.dirs.append((folder / "memory", self._project_cwd.get(folder)))

    def memory_dirs(self, root: Path) -> list[tuple[Path, str | None]]:
        return [(d, cwd) for d, cwd in self.dirs if root in d.parents]

    def _file(self, path: Path, sid: str | None, folder: Path, *, main: bool = True) -> None:
        current = self._session(sid) if sid else None
        if current is not None and main:
            current.main = True
        for record in iter_jsonl(path, self.stats):
            kind = _kind(record.get("type"))
            if kind not in KNOWN_RECORDS:
                self._skip(f"record type {kind!r}")
                continue
            named = record.get("sessionId")
            named = named if isinstance(named, str) and named else None
            if current is None:  # a flat agent-*.jsonl: the parent is named inside
                if named is None:
                    continue
                current = self._session(named)
            inherited = named if main and named and named != current.facts.session_id else None
            self._record(record, current, main, inherited)
            if main and isinstance(record.get("cwd"), str):
                self._project_cwd.setdefault(folder, record["cwd"])

    def _session(self, sid: str) -> _Transcript:
        found = self.by_id.get(sid)
        if found is None:
            found = self.by_id[sid] = _Transcript(SessionFacts(sid))
        return found

    def _skip(self, what: str) -> None:
        self.stats.skipped += 1
        if what not in self.unknown:
            self.unknown.add(what)
            self.stats.problem(f"claude-code: skipped unknown {what}")

    def _record(
        self, record: dict[str, Any], current: _Transcript, main: bool, inherited: str | None
    ) -> None:
        kind = record["type"]
        facts = current.facts
        uuid = record.get("uuid") if isinstance(record.get("uuid"), str) else None
        if uuid is not None and inherited is None:
            self.owner.setdefault(uuid, facts.session_id)
        if inherited is not None:
            if current.inherited_start is None and "timestamp" in record:
                current.inherited_start = parse_time(record.get("timestamp"))
        elif main or not current.main:
            if facts.start is None and "timestamp" in record:
                facts.start = parse_time(record.get("timestamp"))
            facts.see_cwd(record.get("cwd"))
        if kind == "custom-title" and not inherited:
            current.custom_title = _text(record.get("customTitle")) or current.custom_title
        elif kind == "ai-title" and not inherited:
            current.ai_title = _text(record.get("aiTitle")) or current.ai_title
        elif kind == "summary" and isinstance(record.get("leafUuid"), str):
            text = _text(record.get("summary"))
            if text:
                self.summaries.append((record["leafUuid"], text))
        elif kind == "user":
            self._user(record, current, (uuid, inherited), main)
        elif kind == "assistant":
            self._assistant(record, current, (uuid, inherited))

    def _user(
        self,
        record: dict[str, Any],
        current: _Transcript,
        origin: tuple[str | None, str | None],
        main: bool,
    ) -> None:
        uuid, inherited = origin
        result = record.get("toolUseResult")
        if (
            isinstance(result, dict)
            and isinstance(result.get("filePath"), str)
            and ("oldString" in result or result.get("type") in ("create", "update"))
        ):
            path = absolute_path(result["filePath"], record.get("cwd"))
            current.edits.append((f"{uuid}:result" if uuid else None, path, inherited))
        if not main or record.get("isMeta") or record.get("isCompactSummary"):
            return
        if record.get("isSidechain"):
            return
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            kinds = {_kind(b.get("type")) for b in content if isinstance(b, dict)}
            self._blocks(kinds)
            if "tool_result" in kinds:
                return
            blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
            content = "\n".join(b["text"] for b in blocks if isinstance(b.get("text"), str))
        prompt = user_prompt(content)
        if prompt:
            current.prompts.append((uuid, prompt, inherited))

    def _assistant(
        self, record: dict[str, Any], current: _Transcript, origin: tuple[str | None, str | None]
    ) -> None:
        uuid, inherited = origin
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        self._blocks({_kind(b.get("type")) for b in content if isinstance(b, dict)})
        for n, block in enumerate(content):
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            if _kind(block.get("name")) not in EDIT_TOOLS or not isinstance(
                block.get("input"), dict
            ):
                continue
            given = block["input"].get("file_path") or block["input"].get("notebook_path")
            if isinstance(given, str) and given.strip():
                key = f"{uuid}:{n}" if uuid else None
                current.edits.append((key, absolute_path(given, record.get("cwd")), inherited))

    def _blocks(self, kinds: set[Any]) -> None:
        for kind in kinds:
            if kind not in KNOWN_BLOCKS:
                self._skip(f"content block {kind!r}")

    def sessions(self) -> list[SessionFacts]:
        """Each session's facts; a prompt or edit copied into several files is counted once.

        A line a fork inherited (its ``sessionId`` names another session whose transcript was
        read) belongs to that session; any other record seen in several files belongs to the
        oldest session holding it.
        """
        for leaf, text in self.summaries:
            owner = self.by_id.get(self.owner.get(leaf, ""))
            if owner is not None and owner.ai_title is None:
                owner.ai_title = text
        for t in self.by_id.values():
            if t.facts.start is None:
                t.facts.start = t.inherited_start
        mains = {sid for sid, t in self.by_id.items() if t.main}
        claimed: set[str] = set()
        out = []
        for t in sorted(self.by_id.values(), key=lambda t: _age(t.facts)):
            facts = t.facts
            empty = not (facts.cwds or t.prompts or t.edits or t.custom_title or t.ai_title)
            if facts.start is None and empty:
                continue  # an empty file: no session
            facts.titles = [x for x in (t.custom_title or t.ai_title,) if x]
            facts.prompts = _unclaimed(t.prompts, claimed, mains)
            facts.edits = _unclaimed(t.edits, claimed, mains)
            out.append(facts)
        return out


def _age(facts: SessionFacts) -> tuple[bool, float, str]:
    """Oldest first, sessions without a timestamp last."""
    start = facts.start
    return (start is None, start.timestamp() if start else 0.0, facts.session_id)


def _unclaimed(items: list[_Item], claimed: set[str], mains: set[str]) -> list[str]:
    out = []
    for key, value, inherited in items:
        if inherited is not None and inherited in mains:
            continue  # the ancestor's own transcript holds it
        if key is not None:
            if key in claimed:
                continue
            claimed.add(key)
        out.append(value)
    return out


def listing(folder: Path, pattern: str) -> list[Path]:
    """``folder.glob(pattern)`` sorted; empty when the folder vanishes while it is listed."""
    try:
        return sorted(folder.glob(pattern))
    except OSError:
        return []


def _kind(value: object) -> str | None:
    """A record's ``type`` (or a tool's name) when it is a string; a list or dict is no type."""
    return value if isinstance(value, str) else None


def user_prompt(content: object) -> str:
    """The words a user typed, from a user record's text; ``""`` for harness-made text."""
    if not isinstance(content, str):
        return ""
    text = _REMINDER.sub(" ", content)
    if _WRAPPER.match(text):
        return ""
    return clean_text(text)


def _text(value: object) -> str | None:
    return clean_text(value) or None


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
            cwd = normalize_path(line.get("project"))
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


# == Shared with the Codex reader =========================================================
# Project identity, privacy, paths, memory files and row assembly. Candidates for base.py.

PRIVATE_DIRS: Final = frozenset({"personal", "private"})
_CONTROL_BLOCK = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)")


def clean_block(value: object, limit: int = MAX_NOTE) -> str:
    """Multi-line text kept readable: ANSI and control characters gone, line breaks kept."""
    if not isinstance(value, str):
        return ""
    text = _ANSI.sub("", value).replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL_BLOCK.sub(" ", text.replace("\t", "    "))
    lines = [line.rstrip() for line in text.split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def _is_windows(path: str) -> bool:
    return bool(re.match(r"^[A-Za-z]:[\\/]", path)) or path.startswith("\\\\")


def is_private_path(path: str | None, home: Path) -> bool:
    """A folder under ``~/personal`` or ``~/private``, on this machine or in a copied store."""
    if not path:
        return False
    if _is_windows(path):  # C:\\Users\\<user>\\personal\\...
        parts = [p.casefold() for p in re.split(r"[\\/]+", path)]
        return len(parts) > 3 and parts[1] == "users" and parts[3] in PRIVATE_DIRS
    mine = str(home).rstrip("/") + "/"
    if path.startswith(mine):
        rest = path[len(mine) :].split("/")
    else:  # /home/<user>/... or /Users/<user>/... of another machine
        parts = path.split("/")
        rest = parts[3:] if len(parts) > 3 and parts[1] in ("home", "Users") else []
    return bool(rest) and rest[0].casefold() in PRIVATE_DIRS


def absolute_path(path: str, cwd: object) -> str:
    """A recorded path made absolute against the record's cwd when it was relative."""
    text = normalize_path(path) or path
    base = normalize_path(cwd)
    if base and not _is_windows(text) and not text.startswith("/"):
        module = ntpath if _is_windows(base) else posixpath
        text = module.normpath(module.join(base, text))
        return normalize_path(text) or text
    return text


def relative_path(path: str, base: str | None) -> str | None:
    """``path`` relative to ``base`` when it lies under it (``None`` if not), with ``/``."""
    if not base:
        return None
    windows = _is_windows(path)
    if windows != _is_windows(base):
        return None
    if windows:  # drive letters and names compare case-insensitively
        a, b = ntpath.normpath(path), ntpath.normpath(base).rstrip("\\")
        if not a.casefold().startswith(b.casefold() + "\\"):
            return None
        return a[len(b) + 1 :].replace("\\", "/") or None
    a, b = posixpath.normpath(path), posixpath.normpath(base).rstrip("/")
    if not a.startswith(b + "/"):
        return None
    return a[len(b) + 1 :] or None


@dataclass(frozen=True)
class GitInfo:
    toplevel: Path | None  # the working tree holding cwd (a worktree's own folder)
    main: Path | None  # the main repository (the same folder unless a worktree)
    remote: str | None  # the origin URL, else the first remote's


def git_info(cwd: str, home: Path) -> GitInfo:
    """The git repository around a local folder (worktrees resolved), never above ``home``."""
    none = GitInfo(None, None, None)
    if _is_windows(cwd) or not cwd.startswith("/"):
        return none
    folder = Path(cwd)
    stops = {home, *home.parents} if home in folder.parents or folder == home else {Path("/")}
    try:
        for candidate in (folder, *folder.parents):
            if candidate in stops:
                return none
            marker = candidate / ".git"
            if marker.is_dir():
                return GitInfo(candidate, candidate, _remote(marker / "config"))
            if marker.is_file():
                text = marker.read_text(encoding="utf-8", errors="replace")
                match = re.search(r"gitdir:\s*(.+)", text)
                if not match:
                    return GitInfo(candidate, candidate, None)
                gitdir = Path(match.group(1).strip())
                if not gitdir.is_absolute():
                    gitdir = Path(os.path.normpath(candidate / gitdir))
                if gitdir.parent.name == "worktrees":  # <main>/.git/worktrees/<name>
                    common = gitdir.parent.parent
                    return GitInfo(candidate, common.parent, _remote(common / "config"))
                return GitInfo(candidate, candidate, _remote(gitdir / "config"))
    except OSError:
        return none
    return none


def _remote(config: Path) -> str | None:
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    remotes: dict[str, str] = {}
    section = None
    for line in text.splitlines():
        head = re.match(r'\s*\[remote\s+"([^"]+)"\]', line)
        if head:
            section = head.group(1)
            continue
        if line.strip().startswith("["):
            section = None
            continue
        url = re.match(r"\s*url\s*=\s*(\S+)", line)
        if section and url:
            remotes.setdefault(section, url.group(1))
    return remotes.get("origin") or next(iter(remotes.values()), None)


def repo_name(url: str | None) -> str | None:
    """``git@github.com:dana/ledgerline.git`` -> ``ledgerline``."""
    if not url:
        return None
    tail = re.split(r"[/:\\]", url.strip().rstrip("/"))[-1]
    tail = tail.removesuffix(".git")
    return tail or None


def _last_part(path: str) -> str | None:
    parts = re.split(r"[\\/]" if _is_windows(path) else "/", path)
    parts = [p for p in parts if p and not (p.endswith(":") and _is_windows(path))]
    return parts[-1] if parts else None


@dataclass
class _Project:
    name: str
    aliases: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    sessions: int = 0
    last: str = ""
    private: bool = False


@dataclass
class _File:
    project: str
    rel: str
    sessions: set[str] = field(default_factory=set)
    last: str = ""
    private: bool = False


class Assembler:
    """Turns ``SessionFacts`` and memory files into the manifest's rows, deterministically."""

    def __init__(self, ctx: ReaderContext) -> None:
        self.ctx = ctx
        self.sessions: list[tuple[datetime | None, str, dict[str, Any]]] = []
        self.projects: dict[str, _Project] = {}
        self.files: dict[tuple[str, str], _File] = {}
        self.entities: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self._cwds: list[str] = []
        self._seen_memory: set[str] = set()
        self._git: dict[str, GitInfo] = {}
        self._names: dict[tuple[str, str | None], str] = {}

    def git(self, cwd: str) -> GitInfo:
        found = self._git.get(cwd)
        if found is None:
            found = self._git[cwd] = git_info(cwd, self.ctx.home)
        return found

    # projects ---------------------------------------------------------------------------

    def project_of(self, cwd: str | None, remote: str | None = None) -> str | None:
        """The project a cwd belongs to: one name for every worktree and clone of a repo."""
        if not cwd:
            return None
        known = self._names.get((cwd, remote))
        if known is not None:
            return known or None
        self._names[(cwd, remote)] = name = self._project_of(cwd, remote) or ""
        return name or None

    def _project_of(self, cwd: str, remote: str | None) -> str | None:
        info = self.git(cwd)
        folders = [p.name for p in (info.toplevel, info.main) if p is not None]
        name = repo_name(remote or info.remote)
        name = name or (info.main.name if info.main else None) or _last_part(cwd)
        if not name:
            return None
        name = clean_text(name, 128)
        key = fold(name)
        project = self.projects.get(key)
        if project is None:
            project = self.projects[key] = _Project(name)
        for alias in [*folders, _last_part(cwd) if info.main is None else None]:
            if alias and fold(alias) != key and alias not in project.aliases:
                project.aliases.append(clean_text(alias, 128))
        return project.name

    def cwds(self) -> list[str]:
        return list(self._cwds)

    # sessions ---------------------------------------------------------------------------

    def add_session(self, facts: SessionFacts) -> None:
        date = local_date(facts.start, self.ctx.tz)
        private = is_private_path(facts.cwd, self.ctx.home)
        focus: list[str] = []
        for cwd in facts.cwds:
            if cwd not in self._cwds:
                self._cwds.append(cwd)
            name = self.project_of(cwd, facts.remotes.get(cwd))
            if name is None:
                continue
            project = self.projects[fold(name)]
            if cwd not in project.folders:
                project.folders.append(cwd)
            if name not in focus:
                focus.append(name)
                project.sessions += 1
                project.last = max(project.last, date)
                project.private = project.private or private
        for title in facts.titles:
            if title not in focus:
                focus.append(title)
        touched: list[str] = []
        for path in facts.edits:
            shown = clean_text(relative_path(path, facts.cwd) or path, 1024)
            if shown and shown not in touched:
                touched.append(shown)
            self._file(path, facts, date, private)
        row: dict[str, Any] = {"date": date}
        if facts.session_id:
            row["session_id"] = clean_text(facts.session_id, 128)
        if facts.cwd:
            row["cwd"] = _CONTROL_BLOCK.sub("\ufffd", facts.cwd)[:512]
        if focus:
            row["project_focus"] = focus[:16]
        actions = key_actions(facts.titles, facts.prompts)
        if actions:
            row["key_actions"] = actions
        if touched:
            row["files_touched"] = touched[:50]
        row["visibility"] = "private" if private else "team"
        self.sessions.append((facts.start, facts.session_id, row))

    def _file(self, path: str, facts: SessionFacts, date: str, private: bool) -> None:
        """Count an edited file for its project, relative to the repository (or the cwd)."""
        for cwd in dict.fromkeys(c for c in (facts.cwd, *facts.cwds) if c):
            top = self.git(cwd).toplevel
            rel = (relative_path(path, str(top)) if top else None) or relative_path(path, cwd)
            if rel is not None:
                project = self.project_of(cwd, facts.remotes.get(cwd))
                break
        else:
            return
        if project is None:
            return
        entry = self.files.get((fold(project), rel))
        if entry is None:
            entry = self.files[(fold(project), rel)] = _File(project, rel)
        entry.sessions.add(facts.session_id or f"{date}|{facts.cwd}")
        entry.last = max(entry.last, date)
        entry.private = entry.private or private

    # memory files -----------------------------------------------------------------------

    def add_memory(
        self,
        path: Path,
        kind: str,
        project: str | None,
        cwd: str | None,
        *,
        private: bool = False,
        related: Iterable[str] = (),
    ) -> None:
        try:
            key = str(path.resolve())
            if key in self._seen_memory or not path.is_file():
                return
            self._seen_memory.add(key)
            info = path.stat()
            if info.st_size > MAX_MEMORY_FILE:
                self.problems.append(f"{path.name}: skipped, {info.st_size:,} bytes is too large")
                return
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError as exc:
            self.problems.append(f"{path.name}: {exc.strerror}")
            return
        date = local_date(datetime.fromtimestamp(info.st_mtime, UTC), self.ctx.tz)
        if project is not None:
            owner = self.projects.get(fold(project))
            private = private or (owner is not None and owner.private)
        private = private or is_private_path(cwd, self.ctx.home)
        names = [project] if project else []
        names += [n for n in related if n and n not in names]
        entities, notes = memory_rows(text, kind, date, private, names)
        self.entities.extend(entities)
        self.notes.extend(notes)

    # result -----------------------------------------------------------------------------

    def manifest(self, agent: str, agent_type: str) -> dict[str, Any]:
        ordered = sorted(
            self.sessions,
            key=lambda s: (s[0] is None, -(s[0].timestamp()) if s[0] else 0.0, s[1], s[2]["date"]),
        )
        sessions: list[dict[str, Any]] = []
        keys: set[tuple[str, str, str]] = set()
        for _, _, row in ordered:
            key = (row["date"], row.get("cwd", ""), row.get("session_id", ""))
            if key not in keys:
                keys.add(key)
                sessions.append(row)
        entities = _unique_entities([*self._project_rows(), *self._file_rows(), *self.entities])
        notes: list[dict[str, Any]] = []
        seen: set[tuple[str, str]] = set()
        for note in self.notes:
            if (note["date"], note["text"]) not in seen:
                seen.add((note["date"], note["text"]))
                notes.append(note)
        return {
            "agent": {"id": agent, "type": agent_type},
            "known_entities": entities[:MAX_ENTITIES],
            "recent_sessions": sessions[:MAX_SESSIONS],
            "notes": notes[:MAX_NOTES],
        }

    def _project_rows(self) -> list[dict[str, Any]]:
        rows = []
        projects = sorted(self.projects.values(), key=lambda p: p.name)
        projects.sort(key=lambda p: p.last, reverse=True)  # newest first, undated last
        for p in projects:
            if not p.sessions:
                continue
            row: dict[str, Any] = {"name": p.name, "type": "project"}
            if p.aliases:
                row["aliases"] = p.aliases[:16]
            shown = ", ".join(p.folders[:5]) + (", ..." if len(p.folders) > 5 else "")
            row["summary"] = clean_text(
                f"Worked on in {p.sessions} session{'s' if p.sessions != 1 else ''}; "
                f"folders: {shown}.",
                2000,
            )
            if p.last:
                row["last_touched"] = p.last
            row["visibility"] = "private" if p.private else "team"
            rows.append(row)
        return rows

    def _file_rows(self) -> list[dict[str, Any]]:
        often = [f for f in self.files.values() if len(f.sessions) >= 2]
        clash: dict[str, int] = {}
        for f in often:
            clash[fold(f.rel)] = clash.get(fold(f.rel), 0) + 1
        rows = []
        for f in sorted(often, key=lambda f: (-len(f.sessions), f.project, f.rel)):
            name = f.rel if clash[fold(f.rel)] == 1 else f"{f.project}/{f.rel}"
            if len(name) > 128:
                continue
            row: dict[str, Any] = {
                "name": name,
                "type": "file",
                "summary": f"Edited in {len(f.sessions)} sessions of {f.project}.",
            }
            if f.last:
                row["last_touched"] = f.last
            row["visibility"] = "private" if f.private else "team"
            rows.append(row)
        return rows[:200]


def _unique_entities(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    out = []
    for row in rows:
        key = fold(row["name"])
        if key and key not in seen:
            seen.add(key)
            out.append(row)
    return out


def key_actions(titles: list[str], prompts: list[str]) -> list[str]:
    """Titles, the first prompt and the latest prompts: at most 10, each one line <= 256."""
    items: list[str] = []
    for text in [*titles, *prompts]:
        text = clean_text(text)
        if text and text not in items:
            items.append(text)
    if len(items) <= 10:
        return items
    head = [t for t in titles if t in items][:2]
    rest = [t for t in items if t not in head]
    return [*head, rest[0], *rest[len(rest) - (9 - len(head)) :]]


# -- memory files ---------------------------------------------------------------------------

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_KINDS: Final = (
    ("person", re.compile(r"\b(people|persons?|team|teammates|contacts|who)\b")),
    ("decision", re.compile(r"\b(decisions?|decided|adrs?)\b")),
    (
        "library",
        re.compile(
            r"\b(tools?|tooling|librar(y|ies)|stack|dependenc(y|ies)|packages?"
            r"|frameworks?)\b"
        ),
    ),
)
_DASHES: Final = "\u2014\u2013-"  # em dash, en dash, hyphen: "Name - summary"
_PREFIX = re.compile(r"^(decision|person|library|tool)\s*:\s*(.+)$", re.I | re.S)


def frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """A leading ``---`` block of ``key: value`` lines (lists inline or ``- x``), and the rest."""
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    for end in range(1, min(len(lines), 200)):
        if lines[end].strip() == "---":
            break
    else:
        return {}, text
    meta: dict[str, Any] = {}
    last = None
    for line in lines[1:end]:
        item = re.match(r"^\s+-\s+(.*)$", line)
        if item and last is not None:
            current = meta.get(last)
            meta[last] = [*(current if isinstance(current, list) else []), item.group(1).strip()]
            continue
        pair = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        if pair:
            last, value = pair.group(1).lower(), pair.group(2).strip().strip("'\"")
            if value.startswith("[") and value.endswith("]"):
                meta[last] = [v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()]
            else:
                meta[last] = value
    return meta, "\n".join(lines[end + 1 :])


def _meta_private(meta: dict[str, Any]) -> bool:
    tags = meta.get("tags")
    tag_list = tags if isinstance(tags, list) else [tags] if isinstance(tags, str) else []
    return (
        str(meta.get("visibility", "")).lower() == "private"
        or str(meta.get("private", "")).lower() in ("true", "yes")
        or "private" in [str(t).lower() for t in tag_list]
    )


def _blocks(body: str) -> Iterator[tuple[str | None, str, bool]]:
    """(section heading, text, is a top-level bullet) for each bullet and paragraph."""
    heading: str | None = None
    lines: list[str] = []
    bullet = False
    fenced = False

    def flush() -> Iterator[tuple[str | None, str, bool]]:
        text = "\n".join(lines).strip("\n")
        if text.strip():
            yield heading, text, bullet

    for raw in body.split("\n"):
        line = raw.rstrip()
        if _FENCE.match(line):
            fenced = not fenced
            lines.append(line)
            continue
        if fenced:
            lines.append(line)
            continue
        head = _HEADING.match(line)
        top = _BULLET.match(line)
        if head or top or not line.strip():
            yield from flush()
            lines, bullet = [], False
            if head:
                heading = head.group(2)
            elif top:
                lines, bullet = [top.group(1)], True
            continue
        if bullet and line[:1] in (" ", "\t"):
            lines.append(line)
        elif bullet:
            yield from flush()
            lines, bullet = [line], False
        else:
            lines.append(line)
    yield from flush()


def _section_kind(heading: str | None) -> str | None:
    if not heading:
        return None
    words = clean_text(heading).lower()
    for kind, pattern in _KINDS:
        if pattern.search(words):
            return kind
    return None


def _plain(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"(\*\*|__|`)", "", text)


def _entity(kind: str, text: str, date: str, private: bool) -> dict[str, Any] | None:
    first = text.split("\n", 1)[0].strip()
    bold = re.match(r"^(\*\*|__|`)(.+?)\1", first)
    aliases: list[str] = []
    if kind == "decision":
        name = re.split(rf" [{_DASHES}] |: |\. ", _plain(first), maxsplit=1)[0]
    elif bold:
        name = bold.group(2)
    else:
        name = re.split(rf" [{_DASHES}] |: | \(|, ", _plain(first), maxsplit=1)[0]
    name = clean_text(name.strip(" .:;,"), 128)
    if kind == "library" and not bold:
        # "terraform 1.9 with the aws provider 5.x" -> "terraform"
        name = re.split(r" (?:with|for|in|on|via|and|to|as) ", name, maxsplit=1)[0]
        name = re.sub(r"(\s+v?\d[\w.]*)+$", "", name)
        name = name.split()[0] if len(name.split()) > 3 else name
    if not name or (kind != "decision" and (len(name) > 64 or len(name.split()) > 4)):
        return None
    rest = _plain(first)[len(name) :] if _plain(first).startswith(name) else ""
    paren = re.match(r"^\s*\(([^)]*)\)", rest) if kind == "person" else None
    if paren:
        for alias in re.split(r",|/| or ", paren.group(1)):
            alias = clean_text(alias.strip(" @"), 128)
            if len(alias.split()) > 3:
                continue  # a remark in parentheses, not another name
            if alias and fold(alias) != fold(name) and alias not in aliases:
                aliases.append(alias)
    row: dict[str, Any] = {"name": name, "type": kind}
    if aliases:
        row["aliases"] = aliases[:16]
    summary = clean_text(_plain(text), 2000)
    if summary and summary != name:
        row["summary"] = summary
    row["last_touched"] = date
    row["visibility"] = "private" if private else "team"
    return row


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", clean_text(text).lower()).strip("-")[:64]


def memory_rows(
    text: str, kind: str, date: str, private: bool, related: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Entities and notes of one memory file (markdown).

    Bullets under a heading naming people (``People``, ``Team``...), decisions or tools and
    libraries (``Tools``, ``Stack``, ``Dependencies``...) become entities of that type, and so
    do bullets starting ``Decision:``, ``Person:``, ``Library:`` or ``Tool:``. Every other
    top-level bullet or paragraph becomes a note (<= 4000 characters), tagged with the file's
    kind and its section heading. A file holding neither is one note.
    """
    meta, body = frontmatter(text.lstrip("\ufeff"))
    private = private or _meta_private(meta)
    tags = [kind]
    extra = meta.get("tags")
    for tag in extra if isinstance(extra, list) else [extra] if isinstance(extra, str) else []:
        slug = _slug(str(tag))
        if slug and slug not in tags:
            tags.append(slug)
    entities: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for heading, block, bullet in _blocks(body):
        mark = "#private" in block
        block = block.replace("#private", "").strip() if mark else block
        section = _section_kind(heading) if bullet else None
        prefixed = _PREFIX.match(block) if bullet else None
        if prefixed:
            section = {"tool": "library"}.get(prefixed.group(1).lower(), prefixed.group(1).lower())
            block = prefixed.group(2)
        if section:
            entity = _entity(section, block, date, private or mark)
            if entity is not None:
                entities.append(entity)
                continue
        note_text = clean_block(block)
        if not note_text:
            continue
        note: dict[str, Any] = {"date": date, "text": note_text}
        if related:
            note["related_entities"] = related[:16]
        note_tags = [*tags]
        slug = _slug(heading) if heading else ""
        if slug and slug not in note_tags:
            note_tags.append(slug)
        note["tags"] = note_tags[:32]
        note["visibility"] = "private" if private or mark else "team"
        notes.append(note)
    return entities, notes


def memory_bucket(name: str, cwds: Iterable[str]) -> str | None:
    """The cwd whose ``sha256(cwd)[:16]`` names a memory folder (Codex's hashed layout)."""
    for cwd in cwds:
        if hashlib.sha256(cwd.encode("utf-8", "surrogatepass")).hexdigest()[:16] == name:
            return cwd
    return None
