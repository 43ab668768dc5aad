"""Hand-written fixture stores under ``tests/fixtures/stores/<agent>/``, installed into a home.

The files are written by hand from each agent's documented format. ``{HOME}`` in them stands
for the home they are installed into (so working folders and rule files exist there), and
every file gets one modification time, so notes dated by it are the same on every run.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

STORES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "stores"
MTIME: Final = datetime(2026, 4, 1, 10, 0, tzinfo=UTC).timestamp()


def install(
    agent: str,
    home: Path,
    *,
    folder: str = "",
    placeholder: bytes = b"{HOME}",
    mtime: float = MTIME,
) -> Path:
    """Copy the fixture store of ``agent`` (its ``folder`` inside, if given) into ``home``,
    ``placeholder`` replaced by the home and every file's mtime set to ``mtime``; return
    ``home``. Symbolic links are copied as links."""
    shutil.copytree(STORES / agent / folder, home, dirs_exist_ok=True, symlinks=True)
    for path in sorted(home.rglob("*")):
        if path.is_file() and not path.is_symlink():
            raw = path.read_bytes()
            if placeholder in raw:
                path.write_bytes(raw.replace(placeholder, str(home).encode()))
            os.utime(path, (mtime, mtime))
    return home


def session_view(row: dict[str, Any], home: Path) -> tuple[str, str, list[str], list[str], str]:
    """What a person checks of a session row: date, folder (relative to the home), key
    actions, files and visibility."""
    cwd = row.get("cwd", "")
    folder = str(Path(cwd).relative_to(home)) if cwd.startswith(str(home)) else cwd
    return (
        row["date"],
        folder,
        row.get("key_actions", []),
        row.get("files_touched", []),
        row["visibility"],
    )
