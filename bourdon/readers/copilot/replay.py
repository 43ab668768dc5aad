"""VS Code's chat session mutation log (``chatSessions/*.jsonl``) replayed into the state it ends
in: ``kind`` 0 sets the initial state, 1 sets a path, 2 appends (or truncates at ``i`` and
appends), 3 deletes. Pure: reads the file, writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bourdon.readers.base import ReadStats, iter_jsonl


def replay(path: Path, stats: ReadStats) -> dict[str, Any] | None:
    """The session state a VS Code ``chatSessions/*.jsonl`` mutation log ends in."""
    state: Any = None
    for entry in iter_jsonl(path, stats):
        kind = entry.get("kind")
        if kind == 0:
            state = entry.get("v")
            continue
        if not isinstance(state, dict):
            stats.skipped += 1  # no initial state to apply it to
            continue
        try:
            state = _apply(state, kind, entry)
        except (KeyError, IndexError, TypeError, ValueError):
            stats.skipped += 1
    return state if isinstance(state, dict) else None


def _apply(state: dict[str, Any], kind: object, entry: dict[str, Any]) -> dict[str, Any]:
    path = entry.get("k")
    if kind not in (1, 2, 3) or not isinstance(path, list):
        raise ValueError(f"unknown entry kind {kind!r}")
    if not path:
        whole = entry.get("v")
        if kind == 1 and isinstance(whole, dict):
            return whole  # the whole state replaced
        raise ValueError("empty path")
    parent: Any = state
    for step in path[:-1]:
        parent = parent[_step(parent, step)]
    last = _step(parent, path[-1], allow_end=True)
    if kind == 1:
        _put(parent, last, entry.get("v"))
    elif kind == 2:
        current = parent[last] if _has(parent, last) else None
        items = current if isinstance(current, list) else []
        if isinstance(entry.get("i"), int):
            del items[entry["i"] :]
        values = entry.get("v")
        if isinstance(values, list):
            items.extend(values)
        _put(parent, last, items)
    elif isinstance(parent, dict):
        parent.pop(last, None)
    elif isinstance(parent, list) and last < len(parent):
        parent[last] = None  # a hole, as JavaScript leaves it
    return state


def _step(container: Any, step: object, allow_end: bool = False) -> Any:
    if isinstance(container, dict) and isinstance(step, str):
        if not allow_end and step not in container:
            raise KeyError(step)
        return step
    if isinstance(container, list) and isinstance(step, int) and not isinstance(step, bool):
        if 0 <= step < len(container) or (allow_end and step == len(container)):
            return step
        raise IndexError(step)
    raise TypeError(f"cannot step into {type(container).__name__} with {step!r}")


def _has(container: Any, key: Any) -> bool:
    return key in container if isinstance(container, dict) else key < len(container)


def _put(container: Any, key: Any, value: Any) -> None:
    if isinstance(container, list) and key == len(container):
        container.append(value)
    else:
        container[key] = value
