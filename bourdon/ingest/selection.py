"""Which readers an export uses: every registered reader, or the one a command names.

Readers are entry-point plugins (``bourdon.readers``); a plugin that fails to load is reported
as ``Broken``, never raised, so one bad plugin does not hide the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bourdon.errors import BourdonError, NotFoundError

if TYPE_CHECKING:
    from bourdon.readers import Broken
    from bourdon.readers.base import Reader


def available_readers(only: str | None = None) -> tuple[dict[str, Reader], list[Broken]]:
    """Every registered reader (or only the one named ``only``), and the plugins that failed."""
    from bourdon.readers import load_readers

    return load_readers(only)


def pick_reader(name: str) -> Reader:
    """The reader named ``name``; says why when it failed to load or is not registered."""
    readers, broken = available_readers(only=name)
    if name in readers:
        return readers[name]
    for b in broken:
        if b.name == name:
            raise BourdonError(f"the {name} reader could not be loaded: {b.error}")
    raise NotFoundError(f"no reader named {name!r}; see 'bourdon readers'")
