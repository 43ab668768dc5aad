"""What every reader is, and the parsing helpers readers share. Pure: no writes, no git, no network.

A reader turns one agent's native store (transcripts, SQLite databases, memory files) into a
*fresh view* in the manifest's shape: ``{"agent": {...}, "known_entities": [...],
"recent_sessions": [...], "notes": [...]}``. The export pipeline (``bourdon.ingest.pipeline``)
redacts it, applies visibility and commits it with ``Library.regenerate``, which replaces only
this reader's rows from this machine. Helpers only some readers need are in
``bourdon.readers.common``; this module is what a plugin imports.

Readers are registered through the entry-point group ``bourdon.readers`` (built-in ones too)
and found with ``bourdon.readers.load_readers()``.

Rules every reader follows (native-stores.md section 0):

- never write to the store: open SQLite read-only (``mode=ro``), never create ``-wal``/``-shm``;
- survive any one bad record: skip it, count it in ``ReadStats``, keep reading;
- read only complete JSONL lines; an unterminated last line is kept only if it parses;
- take dates from inside the records, in the user's time zone (``ReaderContext.tz``), and
  write ``""`` when a session has no timestamp, never today's date;
- take the working directory from the records, never from an encoded folder name.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any, Final, Protocol, runtime_checkable

from bourdon.readers.listing import StoreListing
from bourdon.readers.paths import normalize_path as normalize_path
from bourdon.readers.paths import project_name as project_name

MAX_LINE: Final = 16 * 1024 * 1024  # a JSONL record longer than this is skipped, not parsed
MAX_JSON_FILE: Final = 64 * 1024 * 1024  # whole-file JSON stores larger than this are skipped
MAX_TEXT: Final = 256  # key actions and titles are cut to this many characters

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)")


@dataclass(frozen=True)
class ReaderContext:
    """Where and how a reader reads: the user's home, environment, time zone and machine."""

    home: Path
    env: Mapping[str, str] = field(default_factory=dict)
    tz: tzinfo | None = None  # None: the machine's local time zone
    machine: str = ""
    store: Path | None = None  # an explicit store location overrides the default ones
    # The visibility given to verbatim prompt text (session rows with key actions) and to
    # notes from instruction and memory files: "team" (the default) or "private". Rows the
    # private-path rule makes private stay private either way.
    prompt_visibility: str = "team"
    # What the export's walk saw of the store (None: look it up on disk).
    listing: StoreListing | None = field(default=None, compare=False, repr=False)

    def shared(self, private: bool, *, prompts: bool = True) -> str:
        """The visibility of a prompt or instruction row: private, else the setting."""
        if private:
            return "private"
        return "private" if prompts and self.prompt_visibility != "team" else "team"


@dataclass
class ReadStats:
    """What a read saw, for ``bourdon readers`` and for spotting a store that drifted."""

    files: int = 0
    records: int = 0
    skipped: int = 0
    partial_tail: int = 0
    too_large: int = 0
    sessions: int = 0  # session rows in the view
    found_sessions: int = 0  # sessions the store holds: more than ``sessions`` past the cap
    bytes_read: int = 0  # bytes of the store read (a resumed read: only what was appended)
    problems: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        """Note a problem for the report; the first 50 are kept."""
        if len(self.problems) < 50:
            self.problems.append(text)


@dataclass
class ReadResult:
    """A reader's fresh view of its store, in the manifest's shape, and what it saw."""

    manifest: dict[str, Any]
    stats: ReadStats = field(default_factory=ReadStats)
    # A resumable reader's state after this read (plain JSON values; under "cold", sections
    # the pipeline keeps apart, and may be the very mapping it was given), to be given back to
    # ``read_from`` next time; ``None`` for the other readers.
    resume: dict[str, Any] | None = None

    @property
    def rows(self) -> int:
        """How many rows the view holds, of every kind."""
        return sum(
            len(self.manifest.get(k) or [])
            for k in ("known_entities", "recent_sessions", "known_workstreams", "notes")
        )


@dataclass(frozen=True)
class Health:
    """Whether a reader can read its store here, and the fix when it cannot."""

    ok: bool
    message: str
    fix: str | None = None


@runtime_checkable
class Reader(Protocol):
    """One agent's native store, read into a manifest view."""

    name: str  # the agent id it writes, e.g. "claude-code"
    agent_type: str  # L5 agent type, e.g. "code-assistant"
    store_env: str  # environment variable that relocates the store

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """Where the store may live on this machine, first match wins."""
        ...

    def read(self, ctx: ReaderContext) -> ReadResult:
        """The fresh view of the whole store. Never raises for bad records."""
        ...

    def health(self, ctx: ReaderContext) -> Health:
        """Present and readable, or what to do about it."""
        ...


@runtime_checkable
class ResumableReader(Reader, Protocol):
    """A reader that continues from where its last read stopped (an append-only store).

    ``read_from(ctx, None)`` is a whole read; ``read_from(ctx, state)`` with the ``resume`` of
    an earlier ``ReadResult`` reads only what was added since and gives the same view a whole
    read would. A state it does not recognise (another reader version or schema) is ignored.
    The reader stays pure: the state comes in and goes out as values; the pipeline keeps it.
    The sections under its ``"cold"`` key come in as a mapping read only when looked into
    (``bourdon.ingest.resume``): a reader hands it back as it came when they did not change.
    """

    def read_from(self, ctx: ReaderContext, resume: Mapping[str, Any] | None) -> ReadResult:
        """The fresh view of the whole store, continuing from ``resume`` where it can."""
        ...


def store_path(reader: Reader, ctx: ReaderContext) -> Path | None:
    """The reader's store here: the explicit one, the env override, or the first default."""
    if ctx.store is not None:
        return ctx.store
    override = ctx.env.get(reader.store_env)
    if override:
        return Path(override.split(os.pathsep)[0]).expanduser()
    for candidate in reader.locations(ctx):
        if candidate.exists():
            return candidate
    return None


def default_health(reader: Reader, ctx: ReaderContext) -> Health:
    """Ready when the store is found and readable; else what to set or fix."""
    path = store_path(reader, ctx)
    if path is None:
        places = ", ".join(str(p) for p in reader.locations(ctx)) or "(none known)"
        return Health(
            False,
            f"no {reader.name} store found (looked in {places})",
            f"set {reader.store_env} to the store's folder if it lives elsewhere",
        )
    if not os.access(path, os.R_OK):
        return Health(False, f"{path} is not readable", f"check the permissions of {path}")
    return Health(True, f"store at {path}")


# -- JSON and JSONL ----------------------------------------------------------------------


def iter_jsonl(path: Path, stats: ReadStats) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file, one per complete line, surviving anything.

    Lines that are not JSON objects are skipped and counted; an unterminated last line is
    kept if it parses (Claude Code often leaves one) and counted as a partial tail if not.
    Invalid UTF-8 is replaced, never fatal. Lines over MAX_LINE are skipped unread, and so are
    lines nested too deep for ``json.loads`` (it raises ``RecursionError`` past ~1,000 levels).
    """
    lines = JsonlLines(path, 0, stats)
    yield from lines
    if lines.tail is not None:
        stats.records += 1
        yield lines.tail
    stats.partial_tail += lines.partial


class JsonlLines:
    """The records of a JSONL file's complete lines from byte ``start``, and where they end.

    Iterating yields the JSON objects of the complete lines (counted in ``stats``, as
    ``iter_jsonl`` counts them); afterwards ``end`` is the offset after the last complete
    line, where a resumed read starts, and an unterminated last line is in ``tail`` (it
    parsed) or counted in ``partial`` (it did not), not in ``stats``: it is read again next
    time, once finished.
    """

    def __init__(self, path: Path, start: int, stats: ReadStats) -> None:
        self.path, self.end, self.stats = path, start, stats
        self.tail: dict[str, Any] | None = None
        self.partial = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        stats = self.stats
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed below; may stop early
        except OSError as exc:
            stats.problem(f"{self.path.name}: {exc.strerror}")
            return
        stats.files += 1
        with handle:
            if self.end:
                handle.seek(self.end)
            offset = self.end
            while True:
                line = handle.readline(MAX_LINE + 1)
                if not line:
                    return
                offset += len(line)
                stats.bytes_read += len(line)
                if len(line) > MAX_LINE:
                    while line and not line.endswith(b"\n"):  # skip the rest of the huge line
                        line = handle.readline(MAX_LINE)
                        offset += len(line)
                        stats.bytes_read += len(line)
                    if line.endswith(b"\n"):
                        stats.too_large += 1
                        self.end = offset
                    continue
                complete = line.endswith(b"\n")
                record = _json_line(line)
                if not complete:
                    if isinstance(record, dict):
                        self.tail = record
                    elif record != "":
                        self.partial += 1
                    return
                self.end = offset
                if isinstance(record, dict):
                    stats.records += 1
                    yield record
                elif record != "":
                    stats.skipped += 1


_NOT_JSON: Final = object()


def _json_line(line: bytes) -> object:
    """The JSON value of one line: ``_NOT_JSON`` when it does not parse, ``""`` when blank."""
    text = line.decode("utf-8", "replace").strip().lstrip("\ufeff")
    if not text:
        return ""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOT_JSON


def load_json(path: Path, stats: ReadStats) -> Any:
    """A whole-file JSON store, or ``None`` (counted) when missing, cut mid-write or huge."""
    try:
        size = path.stat().st_size
        if size > MAX_JSON_FILE:
            stats.too_large += 1
            stats.problem(f"{path.name}: skipped, {size:,} bytes is too large")
            return None
        raw = path.read_bytes()
    except OSError as exc:
        stats.problem(f"{path.name}: {exc.strerror}")
        return None
    stats.files += 1
    try:
        data = json.loads(raw.decode("utf-8", "replace").lstrip("\ufeff"))
    except (ValueError, RecursionError):  # RecursionError: nested too deep for json.loads
        stats.skipped += 1
        stats.problem(f"{path.name}: not valid JSON (perhaps being written)")
        return None
    stats.records += 1
    return data


# -- text, time and paths ----------------------------------------------------------------


def clean_text(value: object, limit: int = MAX_TEXT) -> str:
    """One line of readable text: no ANSI escapes or control characters, whitespace folded."""
    if not isinstance(value, str):
        return ""
    # Most text is printable with single spaces already: both patterns need a character that
    # is not printable, and only a space can be whitespace in printable text.
    if not value.isprintable():
        text = " ".join(_CONTROL.sub(" ", _ANSI.sub("", value)).split())
    elif "  " in value or value.startswith(" ") or value.endswith(" "):
        text = " ".join(value.split())
    else:
        text = value
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def parse_time(value: object, tz: tzinfo | None = None) -> datetime | None:
    """An aware datetime from an ISO string, or epoch seconds or milliseconds (number or str).

    Naive times are taken as local time in ``tz`` (the machine's zone when None).
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"-?\d+(\.\d+)?", text):
            value = float(text)
        else:
            try:
                parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
            except ValueError:
                return None
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=tz) if tz else parsed.astimezone()
            return parsed
    if isinstance(value, (int, float)):
        seconds = float(value)
        if seconds > 1e11:  # milliseconds (seconds would be past the year 5000)
            seconds /= 1000
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    return None


def local_date(moment: datetime | None, tz: tzinfo | None = None) -> str:
    """The calendar date of ``moment`` where the user lives; ``""`` when unknown."""
    if moment is None:
        return ""
    local = moment.astimezone(tz) if tz else moment.astimezone()
    return local.date().isoformat()
