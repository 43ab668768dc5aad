"""Claude Code's transcripts (``projects/<encoded-cwd>/*.jsonl``) read into session facts.

The record shapes, forks, subagent files and legacy summaries are described in the package
docstring (``bourdon.readers.claude_code``); this module follows them. It only reads.

Each file is read into a ``Part`` (what it says, in order, serialisable), which a resumed read
continues from the file's saved offset; ``Scan`` combines the parts of every file in reading
order into sessions, so a resumed read and a whole read give the same sessions.

Size: over 400 lines because the parts, their continuation and their combination must follow
one record grammar; split, a change to it would have to be made in two modules in step.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import ReadStats, clean_text, parse_time
from bourdon.readers.common.facts import SessionFacts
from bourdon.readers.common.paths import absolute_path
from bourdon.readers.common.text import user_prompt
from bourdon.readers.listing import StoreListing

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
# Lists, not tuples: a saved part is used as JSON gave it back. Record uuids are kept as short
# hashes (``_short``): they are only compared, and the saved state stays small.
_Item = list[Any]
PART_SCHEMA: Final = 1  # the shape of a saved Part; a state of another shape is not resumed


@dataclass
class Part:
    """What one transcript file says, in the order it says it, before files are combined.

    Kept between reads (``to_json``/``from_json``) so a file that grew is read from where the
    last read stopped: the per-session accumulators a whole read would have at that offset.
    """

    sid: str | None  # the session the file belongs to (a flat agent file: named inside)
    main: bool  # a top-level transcript (not a subagent's)
    start: str | None = None  # first timestamp of the file's own records (ISO)
    inherited_start: str | None = None  # first timestamp of lines inherited by a fork
    cwds: list[str] = field(default_factory=list)  # cwds of its own records, first seen first
    folder_cwd: str | None = None  # the first cwd of a top-level transcript, for its folder
    custom_title: str | None = None
    ai_title: str | None = None
    summaries: list[tuple[str, str]] = field(default_factory=list)  # (leafUuid, text)
    prompts: list[_Item] = field(default_factory=list)
    edits: list[_Item] = field(default_factory=list)
    uuids: list[str] = field(default_factory=list)  # its own records' uuids, for summaries
    saved_uuids: str = ""  # the uuids of a saved part, split only when a summary needs them
    unknown: list[str] = field(default_factory=list)  # unknown record and block kinds seen
    counts: list[int] = field(default_factory=lambda: [0, 0, 0])  # records, skipped, too large

    def to_json(self) -> list[Any]:
        return [
            self.sid,
            self.main,
            self.start,
            self.inherited_start,
            self.cwds,
            self.folder_cwd,
            self.custom_title,
            self.ai_title,
            [list(x) for x in self.summaries],
            self.prompts,
            self.edits,
            " ".join(filter(None, (self.saved_uuids, *self.uuids))),
            self.unknown,
            self.counts,
        ]

    @classmethod
    def from_json(cls, data: list[Any]) -> Part:
        """The part saved by ``to_json``; raises ``ValueError``/``TypeError`` when garbled."""
        (sid, main, start, inherited, cwds, folder, custom, ai, summ, prompts, edits, uuids,
         unknown, counts) = data  # fmt: skip
        return cls(
            sid=sid,
            main=bool(main),
            start=start,
            inherited_start=inherited,
            cwds=list(cwds),
            folder_cwd=folder,
            custom_title=custom,
            ai_title=ai,
            summaries=[(str(a), str(b)) for a, b in summ],
            prompts=_items(prompts),
            edits=_items(edits),
            saved_uuids=str(uuids),
            unknown=[str(u) for u in unknown],
            counts=[int(n) for n in counts],
        )

    def all_uuids(self) -> list[str]:
        return [*self.saved_uuids.split(), *self.uuids]


def _items(data: object) -> list[_Item]:
    """A saved list of items; one of another shape fails where it is unpacked (``ValueError``
    or ``TypeError``, and the file is read whole), so only the outer list is checked here."""
    if not isinstance(data, list) or (data and not isinstance(data[0], list)):
        raise ValueError("not a list of items")
    return data


def _short(uuid: str) -> str:
    """A record uuid as 12 hex digits: enough to tell a store's records apart."""
    return hashlib.blake2b(uuid.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def read_records(part: Part, records: Iterable[dict[str, Any]]) -> None:
    """Add a file's records (from where ``part`` stopped) to ``part``."""
    for record in records:
        kind = _kind(record.get("type"))
        if kind not in KNOWN_RECORDS:
            _skip(part, f"record type {kind!r}")
            continue
        named = record.get("sessionId")
        named = named if isinstance(named, str) and named else None
        if part.sid is None:  # a flat agent-*.jsonl: the parent is named inside
            if named is None:
                continue
            part.sid = named
        inherited = named if part.main and named and named != part.sid else None
        _record(part, record, inherited)
        if part.main and part.folder_cwd is None and isinstance(record.get("cwd"), str):
            part.folder_cwd = record["cwd"]


def _skip(part: Part, what: str) -> None:
    part.counts[1] += 1
    if what not in part.unknown:
        part.unknown.append(what)


def _record(part: Part, record: dict[str, Any], inherited: str | None) -> None:
    kind = record["type"]
    uuid = _short(record["uuid"]) if isinstance(record.get("uuid"), str) else None
    if uuid is not None and inherited is None:
        part.uuids.append(uuid)
    if inherited is not None:
        if part.inherited_start is None and "timestamp" in record:
            part.inherited_start = _iso(record.get("timestamp"))
    else:
        if part.start is None and "timestamp" in record:
            part.start = _iso(record.get("timestamp"))
        cwd = record.get("cwd")
        if isinstance(cwd, str) and cwd not in part.cwds:
            part.cwds.append(cwd)
    if kind == "custom-title" and not inherited:
        part.custom_title = _text(record.get("customTitle")) or part.custom_title
    elif kind == "ai-title" and not inherited:
        part.ai_title = _text(record.get("aiTitle")) or part.ai_title
    elif kind == "summary" and isinstance(record.get("leafUuid"), str):
        text = _text(record.get("summary"))
        if text:
            part.summaries.append((record["leafUuid"], text))
    elif kind == "user":
        _user(part, record, (uuid, inherited))
    elif kind == "assistant":
        _assistant(part, record, (uuid, inherited))


def _iso(value: object) -> str | None:
    moment = parse_time(value)
    return moment.isoformat() if moment is not None else None


def _user(part: Part, record: dict[str, Any], origin: tuple[str | None, str | None]) -> None:
    uuid, inherited = origin
    result = record.get("toolUseResult")
    if (
        isinstance(result, dict)
        and isinstance(result.get("filePath"), str)
        and ("oldString" in result or result.get("type") in ("create", "update"))
    ):
        path = absolute_path(result["filePath"], record.get("cwd"))
        part.edits.append([f"{uuid}:result" if uuid else None, path, inherited])
    if not part.main or record.get("isMeta") or record.get("isCompactSummary"):
        return
    if record.get("isSidechain"):
        return
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        kinds = {_kind(b.get("type")) for b in content if isinstance(b, dict)}
        _blocks(part, kinds)
        if "tool_result" in kinds:
            return
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
        content = "\n".join(b["text"] for b in blocks if isinstance(b.get("text"), str))
    prompt = user_prompt(content)
    if prompt:
        part.prompts.append([uuid, prompt, inherited])


def _assistant(part: Part, record: dict[str, Any], origin: tuple[str | None, str | None]) -> None:
    uuid, inherited = origin
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return
    _blocks(part, {_kind(b.get("type")) for b in content if isinstance(b, dict)})
    for n, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        if _kind(block.get("name")) not in EDIT_TOOLS or not isinstance(block.get("input"), dict):
            continue
        given = block["input"].get("file_path") or block["input"].get("notebook_path")
        if isinstance(given, str) and given.strip():
            key = f"{uuid}:{n}" if uuid else None
            part.edits.append([key, absolute_path(given, record.get("cwd")), inherited])


def _blocks(part: Part, kinds: set[Any]) -> None:
    for kind in kinds:
        if kind not in KNOWN_BLOCKS:
            _skip(part, f"content block {kind!r}")


def transcript_files(
    root: Path, stats: ReadStats, folders: list[Path], seen: StoreListing | None = None
) -> list[tuple[str, str | None, bool, Path]]:
    """Every transcript under ``root/projects`` in reading order: (path, session, top-level,
    project folder). The path is a string, as ``str(Path)`` gives it: thousands of ``Path``
    objects cost more than reading the few files that changed.

    In each project folder the top-level transcripts come first, then the subagents' (flat
    ``agent-*.jsonl`` name their session inside: ``None``). A vanished folder is a problem.
    The project folders are added to ``folders``. ``seen``: the folders as the export's walk
    listed them (else they are listed here).
    """
    projects = root / "projects"
    if not projects.is_dir():
        return []
    seen = seen or StoreListing()
    try:
        # Names sorted as strings: cheaper than Paths, and the same order.
        found = [projects / name for name, is_dir in seen.entries(projects) if is_dir]
    except OSError as exc:
        stats.problem(f"{projects}: {exc.strerror}")
        return []
    folders.extend(found)
    out: list[tuple[str, str | None, bool, Path]] = []
    for folder in found:
        try:
            subagents: list[tuple[str, str | None, bool, Path]] = []
            listed = seen.entries(folder)
            where = str(folder) + os.sep
            for name, is_dir in listed:
                if is_dir or not name.endswith(".jsonl"):
                    continue
                if name.startswith("agent-"):
                    subagents.append((where + name, None, False, folder))
                else:
                    out.append((where + name, name[: -len(".jsonl")], True, folder))
            for name, is_dir in listed:
                if is_dir and (folder / name / "subagents").is_dir():
                    child = folder / name
                    for path in sorted(child.glob("subagents/**/*.jsonl")):
                        subagents.append((str(path), name, False, folder))
            out.extend(subagents)
        except OSError as exc:  # removed or rotated while we read (the 30-day sweep)
            stats.problem(f"{folder.name}: {exc.strerror}")
    return out


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
    """The files' parts combined in reading order; resolves forks and legacy summaries."""

    def __init__(self, stats: ReadStats) -> None:
        self.stats = stats
        self.dirs: list[tuple[Path, str | None]] = []  # (memory folder, a cwd of that project)
        self.folders: list[Path] = []  # every project folder, in reading order
        self._parts: list[tuple[Path, Part]] = []  # (project folder, part)

    def add(self, folder: Path, part: Part) -> None:
        """A part of a transcript in the project folder ``folder`` (one of ``folders``)."""
        self._parts.append((folder, part))

    def memory_dirs(self, root: Path) -> list[tuple[Path, str | None]]:
        """The auto-memory folders found under ``root``, each with a cwd of its project."""
        return [(d, cwd) for d, cwd in self.dirs if root in d.parents]

    def sessions(self) -> list[SessionFacts]:
        """Each session's facts; a prompt or edit copied into several files is counted once.

        A line a fork inherited (its ``sessionId`` names another session whose transcript was
        read) belongs to that session; any other record seen in several files belongs to the
        oldest session holding it. A subagent file gives its session a date and cwd only when
        the session has no top-level transcript.
        """
        by_id: dict[str, _Transcript] = {}
        summaries: list[tuple[str, str]] = []
        unknown: set[str] = set()
        folders: dict[int, str | None] = {}  # by id(): the folders are ``self.folders``
        mains = {p.sid for _, p in self._parts if p.main and p.sid}
        counts = [0, 0, 0]  # records, skipped, too large: added to the stats once
        for folder, part in self._parts:
            records, skipped, too_large = part.counts
            counts[0] += records
            counts[1] += skipped
            counts[2] += too_large
            for what in part.unknown:
                if what not in unknown:
                    unknown.add(what)
                    self.stats.problem(f"claude-code: skipped unknown {what}")
            sid = part.sid
            if part.main and folders.get(id(folder)) is None:
                folders[id(folder)] = part.folder_cwd
            if sid is None:
                continue
            t = by_id.get(sid)
            if t is None:
                t = by_id[sid] = _Transcript(SessionFacts(sid))
            t.main = t.main or part.main
            facts = t.facts
            if part.main or sid not in mains:
                if facts.start is None and part.start:
                    facts.start = datetime.fromisoformat(part.start)
                for cwd in part.cwds:
                    facts.see_cwd(cwd)
            if t.inherited_start is None and part.inherited_start:
                t.inherited_start = datetime.fromisoformat(part.inherited_start)
            t.custom_title = part.custom_title or t.custom_title
            t.ai_title = part.ai_title or t.ai_title
            if part.summaries:
                summaries.extend(part.summaries)
            if part.prompts:
                t.prompts.extend(part.prompts)
            if part.edits:
                t.edits.extend(part.edits)
        self.stats.records += counts[0]
        self.stats.skipped += counts[1]
        self.stats.too_large += counts[2]
        for folder in self.folders:
            if (folder / "memory").is_dir():
                self.dirs.append((folder / "memory", folders.get(id(folder))))
        if summaries:
            owner = self._owners({_short(leaf) for leaf, _ in summaries})
            for leaf, text in summaries:
                found = by_id.get(owner.get(_short(leaf), ""))
                if found is not None and found.ai_title is None:
                    found.ai_title = text
        for t in by_id.values():
            if t.facts.start is None:
                t.facts.start = t.inherited_start
        claimed: set[str] = set()
        out = []
        for t in sorted(by_id.values(), key=lambda t: _age(t.facts)):
            facts = t.facts
            empty = not (facts.cwds or t.prompts or t.edits or t.custom_title or t.ai_title)
            if facts.start is None and empty:
                continue  # an empty file: no session
            facts.titles = [x for x in (t.custom_title or t.ai_title,) if x]
            facts.prompts = _unclaimed(t.prompts, claimed, mains)
            facts.edits = _unclaimed(t.edits, claimed, mains)
            out.append(facts)
        return out

    def _owners(self, leaves: set[str]) -> dict[str, str]:
        """The session of the first part holding each of ``leaves`` (record uuids, short)."""
        owner: dict[str, str] = {}
        if len(leaves) > 8:  # many: one pass over every uuid
            for _, part in self._parts:
                for uuid in part.all_uuids():
                    owner.setdefault(uuid, part.sid or "")
            return owner
        # A few (the usual case): looked for in each part's saved uuids as they are. Each is
        # 12 hex digits between spaces, so a match of 12 of them is a whole uuid.
        wanted = set(leaves)
        for _, part in self._parts:
            if not wanted:
                break
            for uuid in [u for u in wanted if u in part.saved_uuids or u in part.uuids]:
                owner[uuid] = part.sid or ""
                wanted.discard(uuid)
        return owner


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
