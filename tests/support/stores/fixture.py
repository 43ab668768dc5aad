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
from typing import Final

STORES: Final = Path(__file__).resolve().parents[2] / "fixtures" / "stores"
MTIME: Final = datetime(2026, 4, 1, 10, 0, tzinfo=UTC).timestamp()


def install(agent: str, home: Path) -> Path:
    """Copy the fixture store of ``agent`` into ``home``, ``{HOME}`` replaced; return ``home``."""
    shutil.copytree(STORES / agent, home, dirs_exist_ok=True)
    for path in sorted(home.rglob("*")):
        if path.is_file() and not path.is_symlink():
            raw = path.read_bytes()
            if b"{HOME}" in raw:
                path.write_bytes(raw.replace(b"{HOME}", str(home).encode()))
            os.utime(path, (MTIME, MTIME))
    return home
