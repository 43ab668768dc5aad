"""Aider: the chat and input histories it keeps in each project folder.

Ground truth relied on (native-stores.md section 7; [src Aider-AI/aider:aider/io.py,
aider/args.py]; prompt_toolkit ``FileHistory``):

- Aider writes ``.aider.chat.history.md`` and ``.aider.input.history`` in the project's git
  root (the working folder outside git), not in one store. There is no cwd field: the folder
  holding the file is the session's folder. ``--chat-history-file`` and
  ``--input-history-file`` can move them; such files are found only through
  ``BOURDON_AIDER_STORE``.
- Where bourdon looks: ``BOURDON_AIDER_STORE`` (one or more folders separated by the path
  separator, each a project folder or a folder of projects), else the home. Either way a
  bounded scan: folders at most ``MAX_DEPTH`` levels down, skipping hidden folders,
  ``node_modules``, ``.venv`` and symlinked folders, and stopping after ``MAX_FOLDERS``
  folders (said in the read's problems and in ``health()``).
- ``.aider.chat.history.md`` is appended to (``open("a", errors="ignore")``, any
  ``--encoding``; read as UTF-8 with replacement). ``# aider chat started at YYYY-MM-DD
  HH:MM:SS`` opens one launch, one session, in naive local time (taken in ``ctx.tz``). Each
  line of one user input starts with ``#### `` and the lines of one input are consecutive;
  ``> `` lines are Aider's own output (``> Applied edit to <path>``, ``> Added <path> to the
  chat``); the rest is the model's, including SEARCH/REPLACE blocks whose file is named on
  the line before ``<<<<<<< SEARCH`` (or before the code fence that precedes it).
- ``.aider.input.history`` entries are ``# <datetime.now()>`` (naive local, microseconds)
  followed by the input's lines, each prefixed with ``+``.
- Conventions: Aider keeps no memory, but a ``.aider.conf.yml`` (in the home and in the
  project folder, flat YAML; [docs aider.chat/docs/config/aider_conf.html,
  aider.chat/docs/usage/conventions.html]) names files to load read-only with ``read:`` (one
  name or a list), typically ``CONVENTIONS.md``. Relative names are taken in the project
  folder, ``~`` in the home. Each such file is one note, dated by its modification time.

What it extracts, without any model call: one session per launch header (its date in the
user's zone; the folder as cwd; the user's inputs as key actions, the lines of one input
joined, slash commands left out except ``/add`` and the modes that carry a prompt,
``/ask``, ``/code``, ``/architect`` and ``/context``, whose text is kept; files from
``Applied edit to``, ``Added … to the chat``, SEARCH/REPLACE headers and ``/add``); the input
history gives its prompts to a launch whose chat file lost them, and input entries no launch
covers (before the first header, or without a chat file) make one session per day. Project
entities and files touched in several sessions; notes from the conventions files. Aider has
no hooks.

Visibility (the same rule in every reader): ``readers.common.privacy``.

Size: over 400 lines because Aider has no store of its own: finding the files (the bounded
scan), the two history grammars, their merge and the configs' conventions are one reader.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Final

from bourdon.readers.base import (
    Health,
    ReaderContext,
    ReadResult,
    ReadStats,
    local_date,
    normalize_path,
    parse_time,
    project_name,
)
from bourdon.readers.common.assembly import Draft, NoteDraft, assemble
from bourdon.readers.common.files import memory_notes, read_memory_file
from bourdon.readers.common.frontmatter import front_matter, listed
from bourdon.readers.common.paths import safe_text

NAME: Final = "aider"
CHAT: Final = ".aider.chat.history.md"
INPUT: Final = ".aider.input.history"
CONF: Final = ".aider.conf.yml"
TAG: Final = "aider-conventions"
MAX_DEPTH: Final = 4  # folders this far below a scan root are still looked in
MAX_FOLDERS: Final = 20_000  # a scan stops after this many folders, and says so
MAX_HISTORY: Final = 64 * 1024 * 1024  # a history file larger than this is skipped, counted
SKIP_FOLDERS: Final = frozenset({"node_modules", ".venv"})
PROMPT_MODES: Final = frozenset({"/ask", "/code", "/architect", "/context"})
_HEADER: Final = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
_STAMP: Final = re.compile(r"^# (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\s*$")
_APPLIED: Final = re.compile(r"^> Applied edit to (.+?)\s*$")
_ADDED: Final = re.compile(r"^> Added (.+?) to the chat\.?\s*$")
_SEARCH: Final = re.compile(r"^<{5,9} SEARCH\s*$")
_GLOB: Final = re.compile(r"[*?\[]")


@dataclass
class Scan:
    """The history files a bounded scan found, and whether it stopped at the cap."""

    files: list[Path] = field(default_factory=list)
    roots: list[Path] = field(default_factory=list)
    capped: bool = False

    def cap_note(self) -> str:
        """What a stopped scan means for the user, or nothing."""
        if not self.capped:
            return ""
        return (
            f"the scan for Aider histories stopped after {MAX_FOLDERS} folders; "
            f"set BOURDON_AIDER_STORE to your project folders"
        )


class AiderReader:
    """Aider chat and input histories, found in the project folders under the home."""

    name = NAME
    agent_type = "code-assistant"
    store_env = "BOURDON_AIDER_STORE"

    def locations(self, ctx: ReaderContext) -> list[Path]:
        """Every history file the bounded scan finds (the store is these files, not a folder)."""
        return scan(self._roots(ctx)).files

    def watch_paths(self, ctx: ReaderContext) -> list[Path]:
        """The files an export's fingerprint covers: the histories, configs and conventions."""
        files = self.locations(ctx)
        folders = sorted({p.parent for p in files})
        confs = [c for c in [ctx.home / CONF, *(f / CONF for f in folders)] if c.is_file()]
        named = [path for path, _ in conventions(folders, ctx, ReadStats())]
        return sorted(set(files + confs + named))

    def health(self, ctx: ReaderContext) -> Health:
        """Ready when at least one history is found; says when the scan was cut short."""
        found = scan(self._roots(ctx))
        places = ", ".join(str(p) for p in found.roots) or "(nowhere)"
        note = f"; {found.cap_note()}" if found.capped else ""
        chats = [p for p in found.files if p.name == CHAT]
        if not found.files:
            return Health(
                False,
                f"no Aider history found under {places} (to depth {MAX_DEPTH}){note}",
                f"set {self.store_env} to your project folders (separated by {os.pathsep!r})",
            )
        count = len(chats)
        return Health(
            True,
            f"{count} Aider chat histor{'y' if count == 1 else 'ies'} under {places}{note}",
        )

    def read(self, ctx: ReaderContext) -> ReadResult:
        """Every project folder's histories, as one view."""
        stats = ReadStats()
        found = scan(self._roots(ctx))
        if found.capped:
            stats.problem(found.cap_note())
        folders: dict[Path, set[str]] = {}
        for path in found.files:
            folders.setdefault(path.parent, set()).add(path.name)
        drafts: list[Draft] = []
        for folder in sorted(folders):
            drafts += project_drafts(folder, folders[folder], ctx, stats)
        notes: list[NoteDraft] = []
        for path, owner in conventions(sorted(folders), ctx, stats):
            label = path.name if owner is None else _relative(path, owner)
            where = f" for {project_name(str(owner))}" if owner is not None else ""
            heading = f"Aider conventions {label}{where}"
            owned = None if owner is None else str(owner)
            notes += memory_notes(path, owned, TAG, ctx.tz, stats, heading=heading)
        return ReadResult(assemble(self.name, drafts, notes, ctx, stats), stats)

    def _roots(self, ctx: ReaderContext) -> list[Path]:
        if ctx.store is not None:
            return [ctx.store]
        override = ctx.env.get(self.store_env)
        if override:
            return [Path(p).expanduser() for p in override.split(os.pathsep) if p.strip()]
        return [ctx.home]


# -- finding the files -------------------------------------------------------------------------


def scan(roots: list[Path]) -> Scan:
    """The history files under ``roots``: breadth first, bounded in depth and folder count."""
    found = Scan(roots=roots)
    queue: deque[tuple[Path, int]] = deque()
    for root in roots:
        if root.name in (CHAT, INPUT) and not root.is_dir():
            found.files.append(root)  # a history file named directly
        elif root.is_dir():
            queue.append((root, 0))
    visited = 0
    while queue:
        if visited >= MAX_FOLDERS:
            found.capped = True
            break
        folder, depth = queue.popleft()
        visited += 1
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if entry.name in (CHAT, INPUT) and not is_dir:
                found.files.append(Path(entry.path))
            elif (
                is_dir
                and depth < MAX_DEPTH
                and not entry.name.startswith(".")
                and entry.name not in SKIP_FOLDERS
            ):
                queue.append((Path(entry.path), depth + 1))
    found.files = sorted(set(found.files))
    return found


def _text(path: Path, stats: ReadStats) -> str | None:
    try:
        size = path.stat().st_size
        if size > MAX_HISTORY:
            stats.too_large += 1
            stats.problem(f"{path}: skipped, {size:,} bytes is too large")
            return None
        raw = path.read_bytes()
    except OSError as exc:
        stats.problem(f"{path}: {exc.strerror or exc}")
        return None
    stats.files += 1
    return raw.decode("utf-8", "replace").lstrip("\ufeff")


# -- one project folder ------------------------------------------------------------------------


@dataclass
class _Launch:
    """One ``# aider chat started at`` block of a chat history."""

    stamp: str
    start: datetime | None
    prompts: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def project_drafts(
    folder: Path, names: set[str], ctx: ReaderContext, stats: ReadStats
) -> list[Draft]:
    """The sessions of one project folder, from its chat history and its input history."""
    cwd = safe_text(normalize_path(str(folder)))
    launches = chat_launches(folder / CHAT, ctx, stats) if CHAT in names else []
    entries = input_entries(folder / INPUT, ctx, stats) if INPUT in names else []
    timed = [(launch.start, n) for n, launch in enumerate(launches) if launch.start is not None]
    lost = {n for n, launch in enumerate(launches) if not launch.prompts}
    orphans: dict[str, list[tuple[datetime, str]]] = {}
    for moment, text in entries:
        before = [n for start, n in timed if start <= moment]
        if before:
            if before[-1] in lost:  # the chat file lost this launch's prompts: the input has them
                _input(launches[before[-1]], text)
            continue
        orphans.setdefault(local_date(moment, ctx.tz), []).append((moment, text))
    drafts = []
    for launch in launches:
        draft = Draft(session_id=_session_id(folder, launch.stamp), cwd=cwd)
        draft.seen(launch.start)
        draft.prompts, draft.files = launch.prompts, launch.files
        drafts.append(draft)
    for day, items in sorted(orphans.items()):
        launch = _Launch(stamp=f"input {day}", start=items[0][0])
        for _, text in items:
            _input(launch, text)
        draft = Draft(session_id=_session_id(folder, launch.stamp), cwd=cwd)
        draft.seen(launch.start)
        draft.prompts, draft.files = launch.prompts, launch.files
        drafts.append(draft)
    return drafts


def _session_id(folder: Path, stamp: str) -> str:
    """Aider numbers nothing: the folder and the launch time name the session, stably."""
    return hashlib.sha256(f"{folder}\0{stamp}".encode("utf-8", "replace")).hexdigest()[:16]


def chat_launches(path: Path, ctx: ReaderContext, stats: ReadStats) -> list[_Launch]:
    """The launches of a ``.aider.chat.history.md``, with their inputs and files."""
    text = _text(path, stats)
    if text is None:
        return []
    launches: list[_Launch] = []
    current: _Launch | None = None
    run: list[str] = []  # the lines of the user input being read
    recent: deque[str] = deque(maxlen=3)  # the lines before a SEARCH marker
    stray = False
    for line in text.splitlines():
        header = _HEADER.match(line)
        if line.startswith("####") and current is not None:
            run.append(line[4:].strip())
            continue
        if run and current is not None:
            _input(current, "\n".join(run))
            run = []
        if header:
            current = _Launch(stamp=header.group(1), start=parse_time(header.group(1), ctx.tz))
            launches.append(current)
            stats.records += 1
        elif current is None:
            stray = stray or bool(line.strip())
        elif line.startswith("> "):
            found = _APPLIED.match(line) or _ADDED.match(line)
            if found:
                current.files.append(found.group(1))
        elif _SEARCH.match(line):
            named = _search_file(recent)
            if named:
                current.files.append(named)
        recent.append(line)
    if run and current is not None:
        _input(current, "\n".join(run))
    if not launches and stray:
        stats.skipped += 1
        stats.problem(f"{path}: no '# aider chat started at' header; not an Aider history")
    return launches


def _search_file(before: deque[str]) -> str | None:
    """The file a SEARCH/REPLACE block edits: the line before it, or before its code fence."""
    for line in reversed(before):
        text = line.strip()
        if not text or text.startswith("```"):
            continue
        name = text.strip("`*").rstrip(":").strip()
        prose = name.endswith(".") or (" " in name and "/" not in name and "\\" not in name)
        if name and len(name) < 300 and not prose and not name.startswith(("#", ">", "<", "=")):
            return name
        return None  # a sentence, not a file name: the "Applied edit to" line will tell
    return None


def _input(launch: _Launch, text: str) -> None:
    """One user input: a prompt, a slash command kept as one, or nothing."""
    text = text.strip()
    if not text or text == "<blank>":
        return
    if not text.startswith("/"):
        launch.prompts.append(text)
        return
    command, _, rest = text.partition(" ")
    command = command.lower()
    if command == "/add":
        launch.prompts.append(text)
        launch.files += [arg for arg in rest.split() if not _GLOB.search(arg)]
    elif command in PROMPT_MODES and rest.strip():
        launch.prompts.append(rest.strip())


def input_entries(path: Path, ctx: ReaderContext, stats: ReadStats) -> list[tuple[datetime, str]]:
    """The timed entries of a ``.aider.input.history`` (an entry without a time is skipped)."""
    text = _text(path, stats)
    if text is None:
        return []
    entries: list[tuple[datetime, str]] = []
    moment: datetime | None = None
    lines: list[str] = []

    def flush() -> None:
        if lines:
            if moment is None:
                stats.skipped += 1
            else:
                entries.append((moment, "\n".join(lines)))
                stats.records += 1
        lines.clear()

    for line in text.splitlines():
        if line.startswith("+"):
            lines.append(line[1:])
            continue
        flush()
        stamp = _STAMP.match(line)
        if stamp:
            moment = parse_time(stamp.group(1), ctx.tz)
        elif line.startswith("#"):
            moment = None  # a header that is not a time: its entry cannot be placed
    flush()
    return sorted(entries, key=lambda e: e[0])


# -- conventions -------------------------------------------------------------------------------


def conventions(
    folders: list[Path], ctx: ReaderContext, stats: ReadStats
) -> list[tuple[Path, Path | None]]:
    """The files ``read:`` names in the home's and the projects' ``.aider.conf.yml``.

    Each with the project folder it belongs to (``None``: a file outside every project, such
    as one the home's config names by absolute path). A relative name in the home's config
    is looked for in every project, as Aider looks for it in the folder it runs in.
    """
    shared = _read_names(ctx.home / CONF, ctx, stats)
    found: dict[Path, Path | None] = {}
    for folder in folders:
        for name in [*shared, *_read_names(folder / CONF, ctx, stats)]:
            path = _expand(name, ctx) or folder / name
            inside = path == folder or folder in path.parents
            if path.is_file():
                found.setdefault(path, folder if inside else None)
    return sorted(found.items(), key=lambda item: str(item[0]))


def _read_names(conf: Path, ctx: ReaderContext, stats: ReadStats) -> list[str]:
    """The ``read`` entries of an Aider config: a name, a ``[list]`` or ``- item`` lines."""
    text, _ = read_memory_file(conf, stats)
    if not text:
        return []
    # The config is flat YAML: keep its key lines and list items, and read them as front matter.
    kept = [
        line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    ]
    meta, _ = front_matter("\n".join(["---", *kept[:150], "---"]))
    return [name for name in listed(meta, "read") if name]


def _expand(name: str, ctx: ReaderContext) -> Path | None:
    """An absolute path for ``~`` and absolute names (``~`` is the reader's home); else None."""
    if name == "~" or name.startswith("~/"):
        return ctx.home / name[2:]
    path = Path(name)
    return path if path.is_absolute() else None


def _relative(path: Path, folder: Path) -> str:
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return path.name
