"""Where a resumable reader's state is kept between exports: ``.bourdon/resume/<reader>.jsonl``
in the library (git-ignored, next to the watermarks), and its cold part beside it.

The state is the reader's own (``ReadResult.resume``: per file, where its read stopped and
what it had gathered by then); the pipeline only keeps it. A state that is missing or
unreadable means a whole read, never an error. ``bourdon export --force`` reads whole.

On disk it is JSON Lines: a first line with the bourdon version that wrote it (a state of
another version is not used: its reader may have read the files otherwise), the state's plain
values (``state``) and the names of its mappings (``sections``), then one line per entry of each
of its mappings (a reader's files): ``[section, key, value]``, or, for a string value (and no
line break in it, ASCII), ``~section<TAB>key<TAB>value`` with the string as it is, so that a
reader's large strings (what it gathered from each file, as JSON it parses only when it needs
it) cost no decoding at all. A key that is not ASCII, holds a tab or a line break, or opens with
a quote, is written as JSON. A state saved after a resumed read gives back most entries
untouched, as the very objects it was given: their lines are written again as they were read,
not encoded again.

**The cold part.** A state may hold, under ``"cold"``, sections a reader rarely needs (what it
kept of the files it expects to stay unchanged for many exports). They are kept in a second
file, ``<reader>.cold.jsonl``, of the same format, read only when the reader first looks into
them (``ColdState``), and written only when the state hands back another cold part than the one
it was loaded with: most exports neither read nor write it. The state's first line names the
cold file it goes with by a token the cold file carries too; a cold file with another token (a
save cut short between the two files) or none at all reads as empty, which costs the reader
what it would have looked up there, never a wrong answer.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from bourdon import __version__
from bourdon.model import LOCAL_DIR, check_agent_id
from bourdon.store.durable import atomic_write

RESUME: Final = "resume"
COLD: Final = "cold"  # the state's key for the sections kept in the cold file

Lines = dict[int, tuple[object, str]]  # id(entry) -> (entry, its line); the entry kept alive


class SavedState(dict[str, Any]):
    """A state as loaded, remembering the line each entry was read from (by object id)."""

    def __init__(self, data: dict[str, Any], lines: Lines) -> None:
        super().__init__(data)
        self.lines = lines


class ColdState(Mapping[str, Any]):
    """The cold part of a loaded state: its file is read the first time it is looked into,
    and reads as empty when it is missing, garbled, or not the one the state names."""

    def __init__(self, path: Path, token: str) -> None:
        self.path = path
        self.token = token
        self._data: dict[str, Any] | None = None
        self.lines: Lines = {}

    @property
    def loaded(self) -> bool:
        return self._data is not None

    def _load(self) -> dict[str, Any]:
        if self._data is None:
            parsed = _parse(self.path)
            if parsed is None or parsed[0].get("token") != self.token:
                self._data = {}
            else:
                self._data, self.lines = parsed[1], parsed[2]
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._load()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


def resume_path(root: Path, reader: str) -> Path:
    return root / LOCAL_DIR / RESUME / f"{check_agent_id(reader, 'reader name')}.jsonl"


def cold_path(root: Path, reader: str) -> Path:
    return resume_path(root, reader).with_suffix(".cold.jsonl")


def load_resume(root: Path, reader: str) -> SavedState | None:
    """The state the last read of ``reader`` left in the library at ``root``, if any."""
    parsed = _parse(resume_path(root, reader))
    if parsed is None:
        return None
    header, data, lines = parsed
    token = header.get(COLD)
    if isinstance(token, str):
        data[COLD] = ColdState(cold_path(root, reader), token)
    return SavedState(data, lines)


def save_resume(
    root: Path, reader: str, state: Mapping[str, Any] | None, previous: object = None
) -> None:
    """Keep ``state`` for the next read (``None`` removes the kept one). Entries that are the
    very objects ``previous`` (a ``SavedState``) was loaded with are written as they were read;
    a cold part that is the very one ``previous`` had is not written at all."""
    target, cold_target = resume_path(root, reader), cold_path(root, reader)
    if state is None:
        for path in (target, cold_target):
            with contextlib.suppress(OSError):
                path.unlink()
        return
    known = previous.lines if isinstance(previous, SavedState) else {}
    was = previous.get(COLD) if isinstance(previous, SavedState) else None
    cold = state.get(COLD)
    token = None
    if isinstance(cold, ColdState) and isinstance(was, ColdState) and cold is was:
        token = cold.token  # unchanged: its file stays as it is
    elif isinstance(cold, Mapping) and cold:
        token = secrets.token_hex(8)
        if isinstance(was, ColdState):
            known = {**known, **was.lines}
        # Written before the state that names it: a save cut short in between leaves a state
        # naming the cold file it had, which no longer carries its token.
        _write(cold_target, {"token": token}, cold, known)
    else:
        with contextlib.suppress(OSError):
            cold_target.unlink()
    hot = {k: v for k, v in state.items() if k != COLD}
    _write(target, {COLD: token} if token else {}, hot, known)


@contextlib.contextmanager
def saved_meanwhile(
    root: Path, reader: str, state: Mapping[str, Any] | None, previous: object = None
) -> Iterator[None]:
    """``save_resume`` in a thread while the block runs: the export's library write, whose
    waits on the disk leave the interpreter free for it. The block's end waits for the save
    and raises what the save raised (the block's own error first)."""
    failed: list[BaseException] = []

    def save() -> None:
        try:
            save_resume(root, reader, state, previous)
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    saver = threading.Thread(target=save, name=f"bourdon-save-resume-{reader}")
    saver.start()
    try:
        yield
    finally:
        saver.join()
    if failed:
        raise failed[0]


def _parse(path: Path) -> tuple[dict[str, Any], dict[str, Any], Lines] | None:
    """A state file's first line, its state, and the line of each entry; ``None`` when it is
    missing, garbled, or of another bourdon version."""
    try:
        raw = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    head, _, rest = raw.partition("\n")
    try:
        header = json.loads(head)
        if header["bourdon"] != __version__:  # another bourdon may read its files otherwise
            return None
        data = header["state"]
        if not isinstance(data, dict):
            return None
        for section in header["sections"]:
            data[str(section)] = {}
        lines: Lines = {}
        encoded = []
        for line in rest.split("\n"):
            if line.startswith("~"):
                section, key, value = line[1:].split("\t", 2)
                data[section][json.loads(key) if key.startswith('"') else key] = value
                lines[id(value)] = (value, line)
            elif line:
                encoded.append(line)
        # One parse of all the JSON lines (much faster than one per line), then paired.
        for line, (section, key, value) in zip(
            encoded, json.loads("[" + ",".join(encoded) + "]"), strict=True
        ):
            data.setdefault(section, {})[key] = value
            lines[id(value)] = (value, line)
    except (ValueError, TypeError, KeyError, RecursionError, AttributeError):
        return None
    return header, data, lines


def _write(target: Path, extra: dict[str, Any], state: Mapping[str, Any], known: Lines) -> None:
    """One state file: its first line (``extra`` added to it), then a line per entry."""
    plain = {k: v for k, v in state.items() if not isinstance(v, Mapping)}
    sections = [k for k, v in state.items() if isinstance(v, Mapping)]
    top = {"bourdon": __version__, **extra, "state": plain, "sections": sections}
    out = [json.dumps(top, separators=(",", ":"))]
    for section, entries in state.items():
        if not isinstance(entries, Mapping):
            continue
        for key, value in entries.items():
            seen = known.get(id(value))
            if seen is not None and seen[0] is value:
                out.append(seen[1])
            else:
                out.append(_line(section, key, value))
    # A cache: lost to a power cut, the older state (or none) is still a right place to start.
    # Not renamed over the old one: ext4 writes out a file renamed over another at the next
    # journal commit, which the library's commit would then wait for.
    with contextlib.suppress(FileNotFoundError):
        target.unlink()
    atomic_write(target, ("\n".join(out) + "\n").encode("utf-8"), 0o600, sync=False)


def _line(section: str, key: str, value: object) -> str:
    """An entry's line: its string as it is when it can be (see the module docstring)."""
    if isinstance(value, str) and _plain(value, "\n") and _plain(section, "\t\n\r"):
        shown = key if _plain(key, "\t\n\r") and not key.startswith('"') else json.dumps(key)
        return f"~{section}\t{shown}\t{value}"
    return json.dumps([section, key, value], separators=(",", ":"))


def _plain(text: object, breaks: str) -> bool:
    """ASCII (so it is written as it is, whatever it holds) without any of ``breaks``."""
    return isinstance(text, str) and text.isascii() and not any(c in text for c in breaks)
