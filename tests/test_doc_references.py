"""Every Python path the docs name (`bourdon.store.library.Library`) is one the code defines.

The docs point readers at modules and functions by dotted path; a move that forgets them leaves
a reader with an import error. Only code spans that start with `bourdon.` and read like a Python
path count: `bourdon agents` (a command) and `bourdon.agents/v1` (a schema name) do not.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A code span holding only a dotted path, optionally called: `bourdon.policy.decide(...)`.
PATH_SPAN = re.compile(r"`(bourdon(?:\.[A-Za-z_]\w*)+)(?:\([^`]*\))?`")
# An import in a code example: `from bourdon.store.library import Library, Provenance`.
EXAMPLE_IMPORT = re.compile(r"^\s*from (bourdon[\w.]*) import ([\w, ]+)$", re.M)


def named_paths() -> list[tuple[str, str]]:
    found = set()
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in PATH_SPAN.finditer(text):
            found.add((doc.name, match.group(1)))
        for match in EXAMPLE_IMPORT.finditer(text):
            for name in match.group(2).split(","):
                found.add((doc.name, f"{match.group(1)}.{name.strip()}"))
    return sorted(found)


def resolves(dotted: str) -> bool:
    """Import the longest module prefix of ``dotted``, then look the rest up as attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


def test_the_docs_name_python_paths_at_all() -> None:
    # Guards the pattern: if it matched nothing, the test below would pass on any docs.
    assert len(named_paths()) >= 20


@pytest.mark.parametrize(("doc", "dotted"), named_paths())
def test_every_python_path_in_the_docs_resolves(doc: str, dotted: str) -> None:
    assert resolves(dotted), f"{doc} names `{dotted}`, which the code does not define"


@pytest.mark.parametrize(
    ("dotted", "expected"),
    [
        ("bourdon.errors.BourdonError", True),
        ("bourdon.store.library.Library.open", True),
        ("bourdon.library", False),  # the flat module of before the house: gone
        ("bourdon.errors.NoSuchError", False),
    ],
)
def test_resolving_tells_a_defined_path_from_a_missing_one(dotted: str, expected: bool) -> None:
    assert resolves(dotted) is expected
