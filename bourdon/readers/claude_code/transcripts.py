"""Claude Code's transcripts (``projects/<encoded-cwd>/*.jsonl``) read into parts.

The record shapes, forks, subagent files and legacy summaries are described in the package
docstring (``bourdon.readers.claude_code``); this module follows them. It only reads.

Each file is read into a ``Part`` (what it says, in order, serialisable), which a resumed read
continues from the file's saved offset; ``sessions.Scan`` combines the parts of every file in
reading order into sessions, so a resumed read and a whole read give the same sessions.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import ReadStats, clean_text, parse_time
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
# hashes (``short_uuid``): they are only compared, and the saved state stays small.
Item = list[Any]


class GarbledPart(ValueError):
    """A saved part's body does not parse: the state it came from must not be used."""


@dataclass
class Part:
    """What one transcript file says, in the order it says it, before files are combined.

    Kept between reads as a header (what every read needs of every file: its session, its
    counts, whether it holds summaries) and a body (the rest, as a JSON string), so a file that
    did not change costs no parse unless its session is assembled again (``full``), and a file
    that grew is read from where the last read stopped: the per-session accumulators a whole
    read would have at that offset.
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
    prompts: list[Item] = field(default_factory=list)
    edits: list[Item] = field(default_factory=list)
    uuids: list[str] = field(default_factory=list)  # its own records' uuids, for summaries
    saved_uuids: str = ""  # the uuids of a saved part, split only when a summary needs them
    unknown: list[str] = field(default_factory=list)  # unknown record and block kinds seen
    counts: list[int] = field(default_factory=lambda: [0, 0, 0])  # records, skipped, too large
    summarised: bool = False  # held legacy summaries when it was saved

    def header(self) -> list[Any]:
        return [
            self.sid,
            self.main,
            self.folder_cwd,
            self.counts,
            self.unknown,
            bool(self.summaries),
        ]

    def body(self) -> str:
        """The rest of the part as JSON (``SavedPart.full`` parses it back)."""
        return json.dumps(
            [
                self.start,
                self.inherited_start,
                self.cwds,
                self.custom_title,
                self.ai_title,
                [list(x) for x in self.summaries],
                self.prompts,
                self.edits,
                " ".join(filter(None, (self.saved_uuids, *self.uuids))),
            ],
            separators=(",", ":"),
        )

    def full(self) -> Part:
        return self

    def all_uuids(self) -> list[str]:
        return [*self.saved_uuids.split(), *self.uuids]


class SavedPart:
    """A ``Part`` as a resume state kept it: its header at hand, its body parsed only when its
    session is combined again (``full``): most files of a large store did not change."""

    __slots__ = ("_part", "body", "counts", "folder_cwd", "main", "sid", "summarised", "unknown")
    summaries: Final = ()  # the header says whether there are any (``summarised``)

    def __init__(self, header: list[Any], body: object) -> None:
        """Raises ``ValueError``/``TypeError`` when the header is garbled."""
        sid, main, folder, counts, unknown, summarised = header
        if not isinstance(body, str) or not (sid is None or isinstance(sid, str)):
            raise ValueError("not a saved part")
        records, skipped, too_large = counts
        self.sid: str | None = sid
        self.main = bool(main)
        self.folder_cwd = folder if isinstance(folder, str) else None
        self.counts = [int(records), int(skipped), int(too_large)]
        self.unknown = [str(u) for u in unknown] if unknown else []
        self.summarised = bool(summarised)
        self.body = body
        self._part: Part | None = None

    def full(self) -> Part:
        """The whole part (parsed once); raises ``GarbledPart`` when its body is garbled."""
        if self._part is None:
            try:
                body = json.loads(self.body)
            except (ValueError, RecursionError) as exc:
                raise GarbledPart(str(exc)) from exc
            self._part = self._parse(body)
        return self._part

    @staticmethod
    def parse_all(parts: list[SavedPart]) -> None:
        """``full`` for every one of ``parts`` at once: one parse of all their bodies costs
        far less than one each (a combination of every session needs them all)."""
        todo = [p for p in parts if p._part is None]
        try:
            bodies = json.loads("[" + ",".join(p.body for p in todo) + "]")
        except (ValueError, RecursionError) as exc:
            raise GarbledPart(str(exc)) from exc
        for part, body in zip(todo, bodies, strict=True):
            part._part = part._parse(body)

    def _parse(self, body: Any) -> Part:
        try:
            (start, inherited, cwds, custom, ai, summ, prompts, edits,
             uuids) = body  # fmt: skip
            return Part(
                sid=self.sid,
                main=self.main,
                start=start,
                inherited_start=inherited,
                cwds=[str(c) for c in cwds],
                folder_cwd=self.folder_cwd,
                custom_title=custom,
                ai_title=ai,
                summaries=[(str(a), str(b)) for a, b in summ],
                prompts=_items(prompts),
                edits=_items(edits),
                saved_uuids=str(uuids),
                unknown=self.unknown,
                counts=self.counts,
                summarised=self.summarised,
            )
        except (TypeError, ValueError, RecursionError) as exc:
            raise GarbledPart(str(exc)) from exc


def _items(data: object) -> list[Item]:
    """A saved list of items, each ``[key, value, inherited]`` (each item is checked where it
    is unpacked: ``sessions._unclaimed``)."""
    if not isinstance(data, list):
        raise ValueError("not a list of items")
    return data


def short_uuid(uuid: str) -> str:
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
    uuid = short_uuid(record["uuid"]) if isinstance(record.get("uuid"), str) else None
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


def _kind(value: object) -> str | None:
    """A record's ``type`` (or a tool's name) when it is a string; a list or dict is no type."""
    return value if isinstance(value, str) else None


def _text(value: object) -> str | None:
    return clean_text(value) or None
