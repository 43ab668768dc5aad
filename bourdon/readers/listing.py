"""``StoreListing``: a store's folders and files as one walk saw them, shared by the export's
fingerprint walk and the reader, so a store is listed and stat-ed once per export."""

from __future__ import annotations

import os
from pathlib import Path


class StoreListing:
    """The folders and files of a store as one walk saw them: each folder's entries and each
    file's stat, by path. The export's fingerprint walk fills it and hands it to the reader, so
    the store is listed and stat-ed once per export. A path it does not hold is looked up on
    disk; what changed after the walk is seen by the next export (its fingerprint differs).
    """

    def __init__(self) -> None:
        self.folders: dict[str, list[tuple[str, bool]]] = {}  # sorted (name, is a folder)
        self.files: dict[str, os.stat_result] = {}

    def entries(self, folder: Path) -> list[tuple[str, bool]]:
        """``folder``'s entries as (name, is a folder, symlinks followed), sorted by name.
        Raises ``OSError`` as listing the folder would."""
        found = self.folders.get(str(folder))
        if found is not None:
            return found
        with os.scandir(folder) as it:
            return sorted((e.name, e.is_dir()) for e in it)

    def stat(self, path: str | Path) -> os.stat_result:
        """``os.stat(path)`` as the walk took it (raises ``OSError`` as ``os.stat`` would)."""
        found = self.files.get(str(path))
        return found if found is not None else os.stat(path)  # noqa: PTH116 - str or Path
