"""Where a resumable reader's state is kept between exports: ``.bourdon/resume/<reader>.jsonl``
in the library (git-ignored, next to the watermarks).

The state is the reader's own (``ReadResult.resume``: per file, where its read stopped and
what it had gathered by then); the pipeline only keeps it. A state that is missing or
unreadable means a whole read, never an error. ``bourdon export --force`` reads whole.

On disk it is JSON Lines: a first line with the bourdon version that wrote it (a state of
another version is not used: its reader may have read the files otherwise), the state's plain
values (``state``) and the names of its mappings (``sections``), then one line
``[section, key, value]`` per entry of each of its mappings (a reader's files). A state saved
after a resumed read gives back most entries untouched, as the very objects it was given:
their lines are written again as they were read, not encoded again.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from bourdon import __version__
from bourdon.model import LOCAL_DIR, check_agent_id
from bourdon.store.durable import atomic_write

RESUME: Final = "resume"


class SavedState(dict[str, Any]):
    """A state as loaded, remembering the line each entry was read from (by object id)."""

    def __init__(self, data: dict[str, Any], lines: dict[int, tuple[object, str]]) -> None:
        super().__init__(data)
        self.lines = lines  # id(entry) -> (entry, its line); the entry is kept alive with it


def resume_path(root: Path, reader: str) -> Path:
    return root / LOCAL_DIR / RESUME / f"{check_agent_id(reader, 'reader name')}.jsonl"


def load_resume(root: Path, reader: str) -> SavedState | None:
    """The state the last read of ``reader`` left in the library at ``root``, if any."""
    try:
        raw = resume_path(root, reader).read_bytes().decode("utf-8")
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
        lines: dict[int, tuple[object, str]] = {}
        raw_lines = rest.splitlines()
        # One parse of all the lines (much faster than one per line), then paired with them.
        for line, (section, key, value) in zip(
            raw_lines, json.loads("[" + ",".join(raw_lines) + "]"), strict=True
        ):
            data.setdefault(section, {})[key] = value
            lines[id(value)] = (value, line)
    except (ValueError, TypeError, KeyError, RecursionError, AttributeError):
        return None
    return SavedState(data, lines)


def save_resume(
    root: Path, reader: str, state: Mapping[str, Any] | None, previous: object = None
) -> None:
    """Keep ``state`` for the next read (``None`` removes the kept one). Entries that are the
    very objects ``previous`` (a ``SavedState``) was loaded with are written as they were read.
    """
    target = resume_path(root, reader)
    if state is None:
        with contextlib.suppress(OSError):
            target.unlink()
        return
    known = previous.lines if isinstance(previous, SavedState) else {}
    plain = {k: v for k, v in state.items() if not isinstance(v, Mapping)}
    sections = [k for k, v in state.items() if isinstance(v, Mapping)]
    top = {"bourdon": __version__, "state": plain, "sections": sections}
    out = [json.dumps(top, separators=(",", ":"))]
    for section, entries in state.items():
        if not isinstance(entries, Mapping):
            continue
        for key, value in entries.items():
            seen = known.get(id(value))
            if seen is not None and seen[0] is value:
                out.append(seen[1])
            else:
                out.append(json.dumps([section, key, value], separators=(",", ":")))
    # A cache: lost to a power cut, the older state (or none) is still a right place to start.
    atomic_write(target, ("\n".join(out) + "\n").encode("utf-8"), 0o600, sync=False)
