"""Readers of the agents' native stores, found through the ``bourdon.readers`` entry points.

Built-in readers register exactly as third-party ones do, in ``pyproject.toml``::

    [project.entry-points."bourdon.readers"]
    claude-code = "bourdon.readers.claude_code:ClaudeCodeReader"

A plugin that fails to load is reported, never fatal.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points

from bourdon.readers.base import Health, Reader, ReaderContext, ReadResult, ReadStats

GROUP = "bourdon.readers"


@dataclass(frozen=True)
class Broken:
    """A registered reader that could not be loaded, and why."""

    name: str
    target: str
    error: str


def load_readers(only: str | None = None) -> tuple[dict[str, Reader], list[Broken]]:
    """Every registered reader by name (or only the one named ``only``: a hook loads one
    reader module, not all), and the ones that failed to load."""
    found: dict[str, Reader] = {}
    broken: list[Broken] = []
    chosen = entry_points(group=GROUP) if only is None else entry_points(group=GROUP, name=only)
    for ep in sorted(chosen, key=lambda e: e.name):
        try:
            reader = ep.load()()
        except Exception as exc:
            broken.append(Broken(ep.name, ep.value, f"{type(exc).__name__}: {exc}"))
            continue
        if not isinstance(reader, Reader):
            broken.append(Broken(ep.name, ep.value, "does not implement the Reader protocol"))
            continue
        found[ep.name] = reader
    return found, broken


__all__ = ["Broken", "Health", "ReadResult", "ReadStats", "Reader", "ReaderContext", "load_readers"]
