"""Where a resumable reader's state is kept between exports: ``.bourdon/resume/<reader>.json``
in the library (git-ignored, next to the watermarks).

The state is the reader's own (``ReadResult.resume``: per file, where its read stopped and
what it had gathered by then); the pipeline only keeps it. A state that is missing or
unreadable means a whole read, never an error. ``bourdon export --force`` reads whole.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from bourdon.model import LOCAL_DIR, check_agent_id
from bourdon.store.durable import atomic_write

RESUME: Final = "resume"


def resume_path(root: Path, reader: str) -> Path:
    return root / LOCAL_DIR / RESUME / f"{check_agent_id(reader, 'reader name')}.json"


def load_resume(root: Path, reader: str) -> dict[str, Any] | None:
    """The state the last read of ``reader`` left in the library at ``root``, if any."""
    try:
        data = json.loads(resume_path(root, reader).read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def save_resume(root: Path, reader: str, state: Mapping[str, Any] | None) -> None:
    """Keep ``state`` for the next read; ``None`` removes the kept one."""
    target = resume_path(root, reader)
    if state is None:
        with contextlib.suppress(OSError):
            target.unlink()
        return
    data = json.dumps(state, separators=(",", ":")).encode("utf-8")
    # A cache: lost to a power cut, the older state (or none) is still a right place to start.
    atomic_write(target, data, 0o600, sync=False)
