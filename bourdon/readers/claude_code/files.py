"""Each Claude Code transcript and ``history.jsonl`` read into what the reader gathers from it,
resuming from what the last read saved of it: its mark (``common.resume``) and its part (a
``transcripts.Part`` as header and body) or prompts. See the package docstring, "Resuming".

Pure like every reader: reads files, never writes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bourdon.readers.base import JsonlLines, ReadStats, clean_text, parse_time
from bourdon.readers.claude_code.transcripts import GarbledPart, Part, SavedPart, read_records
from bourdon.readers.common.resume import GROWN, REWRITTEN, UNCHANGED, compare, new_mark
from bourdon.readers.listing import StoreListing

_SLASH_COMMAND: Final = re.compile(r"^/[\w:-]+(\s|$)")  # "/clear", "/model opus"; not "/home/x"


@dataclass
class Kept:
    """What a read keeps of the transcripts for the next: for each, ``[mark, header]`` and
    the body of its part (``Part.header``/``Part.body``; the body apart, as a string the state
    keeps as it is and this reader parses only when it needs it)."""

    marks: dict[str, Any] = field(default_factory=dict)
    bodies: dict[str, Any] = field(default_factory=dict)


class ColdParts:
    """The state's cold part: what was kept of a checkpoint's quiet files, as a ``Kept``. Looked
    into only when needed (the pipeline reads its file then); garbled, it holds nothing."""

    def __init__(self, cold: Mapping[str, Any]) -> None:
        self.cold = cold
        self._kept: Kept | None = None

    @property
    def loaded(self) -> bool:
        return self._kept is not None

    def kept(self) -> Kept:
        if self._kept is None:
            marks, bodies = self.cold.get("files"), self.cold.get("bodies")
            self._kept = Kept(
                marks if isinstance(marks, dict) else {},
                bodies if isinstance(bodies, dict) else {},
            )
        return self._kept

    def merged(self, hot: Kept) -> Kept:
        """``hot`` and every cold entry, for the files of either to be looked up."""
        cold = self.kept()
        return Kept({**cold.marks, **hot.marks}, {**cold.bodies, **hot.bodies})

    def with_quiet(self, out: Kept, keys: Collection[str]) -> Kept:
        """``out`` with the cold entries of the quiet files ``keys`` added to it."""
        if not keys:
            return out
        cold = self.kept()
        marks, bodies = dict(out.marks), dict(out.bodies)
        try:
            for key in keys:
                marks[key] = cold.marks[key]
                bodies[key] = cold.bodies[key]
        except KeyError as exc:  # the cold file was lost: read the store whole
            raise GarbledPart(f"no saved part for {os.path.basename(exc.args[0])}") from None  # noqa: PTH119
        return Kept(marks, bodies)


def transcript_parts(
    key: str,
    sid: str | None,
    main: bool,
    saved: Kept,
    stats: ReadStats,
    out: Kept,
    seen: StoreListing | None = None,
) -> tuple[list[Part | SavedPart], bool]:
    """The parts of one transcript, and whether the file changed since the read that saved
    ``saved``: the saved part when the file is unchanged, else the saved one continued from
    its offset (or a new one when the file was rewritten), then the unterminated last line's,
    which is not saved: it is read again next time. What it keeps goes to ``out``. ``seen``:
    the file's stat as the export's walk took it."""
    try:
        # A str path: no Path object is made for the thousands of files that did not change.
        info = seen.stat(key) if seen is not None else os.stat(key)  # noqa: PTH116
    except OSError as exc:
        stats.problem(f"{os.path.basename(key)}: {exc.strerror}")  # noqa: PTH119
        return [], True
    marks, body = saved.marks.get(key), saved.bodies.get(key)
    found = _kept(marks, body, sid, main)
    how = compare(key, info, found[0]) if found is not None else REWRITTEN
    if found is not None and how == UNCHANGED:
        stats.files += 1
        out.marks[key] = marks
        out.bodies[key] = body
        return [found[1]], False
    if found is not None and how == GROWN:
        mark, kept = found
        part, start = kept.full(), int(mark[0])
        # Not changed since the last read, which left its unfinished last line unsaved.
        moved = mark[1:3] != [info.st_size, info.st_mtime_ns]
    else:
        part, start, moved = Part(sid, main), 0, True
        # The file as it was held legacy summaries: what they titled must be looked at again.
        part.summarised = _summarised(marks)
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
    out.marks[key] = [new_mark(path, info, lines.end), part.header()]
    out.bodies[key] = part.body()
    if lines.tail is None:
        return [part], moved
    tail = Part(part.sid, main)
    read_records(tail, [lines.tail])
    tail.counts[0] += 1
    return [part, tail], moved


def saved_part(saved: Kept, key: str) -> SavedPart:
    """The part saved for the transcript ``key``; raises ``GarbledPart`` when garbled."""
    marks = saved.marks.get(key)
    try:
        if not (isinstance(marks, list) and len(marks) == 2):
            raise TypeError("not a saved mark and header")
        return SavedPart(marks[1], saved.bodies.get(key))
    except (TypeError, ValueError) as exc:
        raise GarbledPart(f"{os.path.basename(key)}: {exc}") from exc  # noqa: PTH119


def _kept(marks: object, body: object, sid: str | None, main: bool) -> tuple[Any, SavedPart] | None:
    """The mark and part saved for a file, if they are this file's."""
    if not (isinstance(marks, list) and len(marks) == 2):
        return None
    try:
        part = SavedPart(marks[1], body)
    except (TypeError, ValueError):
        return None
    return (marks[0], part) if part.main == main and not (sid and part.sid != sid) else None


def _summarised(marks: object) -> bool:
    header = marks[1] if isinstance(marks, list) and len(marks) == 2 else None
    return isinstance(header, list) and len(header) == 6 and bool(header[5])


def history_prompts(
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
        if how != REWRITTEN and _history_entries(saved[1]) and isinstance(saved[2], list):
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


def _history_entries(saved: object) -> bool:
    """Whether ``saved`` is a list of prompts as ``_history_line`` gives them."""
    return isinstance(saved, list) and all(
        isinstance(e, list) and len(e) == 4 and isinstance(e[0], str) for e in saved
    )


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
