"""Claude Code's transcripts (``projects/<encoded-cwd>/*.jsonl``) read into session facts.

The record shapes, forks, subagent files and legacy summaries are described in the package
docstring (``bourdon.readers.claude_code``); this module follows them. It only reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import ReadStats, clean_text, iter_jsonl, parse_time
from bourdon.readers.common.facts import SessionFacts
from bourdon.readers.common.paths import absolute_path
from bourdon.readers.common.text import user_prompt

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


class Scan:
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
        """Read every project folder under ``root/projects``; a vanished one is a problem."""
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
        """The auto-memory folders found under ``root``, each with a cwd of its project."""
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


def _kind(value: object) -> str | None:
    """A record's ``type`` (or a tool's name) when it is a string; a list or dict is no type."""
    return value if isinstance(value, str) else None


def _text(value: object) -> str | None:
    return clean_text(value) or None
