"""What the pages work out from one agent's rows, kept while that agent's rows are served.

The index never changes an ``AgentView``: a changed manifest gets a new one. So what a page
derives from a view for one kind of caller (the rows it may see, their sorted order, their
weekly counts) holds as long as the view is served, and is worked out again only when the
manifest changes. Entries hold their view weakly and the memo is bounded, so replaced views
are not kept alive by it for long.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Final, TypeVar

from bourdon.access.visibility import Access
from bourdon.query.rows import AgentView

T = TypeVar("T")
MAX_ENTRIES: Final = 512  # agents x kinds of caller x sorts: ample for a library's pages

_entries: dict[tuple[int, Hashable], tuple[weakref.ref[AgentView], object]] = {}
_lock = threading.Lock()


def seen_by(access: Access) -> Hashable:
    """What decides which rows ``Access.allows``: the level, the namespaces, prompts kept home."""
    return (int(access.level), access.agents, access.keep_home)


def remember(agent: AgentView, key: Hashable, make: Callable[[], T]) -> T:
    """``make()``, or what it answered for ``agent`` and ``key`` while ``agent`` is the same."""
    slot = (id(agent), key)
    with _lock:
        found = _entries.get(slot)
    if found is not None and found[0]() is agent:
        return found[1]  # type: ignore[return-value]
    value = make()
    with _lock:
        if len(_entries) >= MAX_ENTRIES:
            _entries.clear()
        _entries[slot] = (weakref.ref(agent), value)
    return value
