"""Helpers for bourdon's tests and for plugin authors: throwaway libraries with real git.

>>> from bourdon.testing import make_library
>>> library = make_library(tmp_path / "lib")            # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bourdon.formats.resources import sample_library_path
from bourdon.model import SUFFIX
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance


def make_library(root: Path, *, sample: bool = True) -> Library:
    """A new library at ``root``, holding the bundled sample agents unless ``sample`` is False."""
    library = Library.init(root)
    if sample:
        for path in sorted((sample_library_path() / "agents").glob(f"*{SUFFIX}")):
            library.import_manifest(
                path.read_bytes(), what=path.name, provenance=Provenance(caller="fixture")
            )
    return library


def manifest(agent_id: str, agent_type: str = "code-assistant", **sections: Any) -> dict[str, Any]:
    """A minimal valid manifest dict, with any row sections given as keyword arguments."""
    return {
        "spec_version": "0.1",
        "agent": {"id": agent_id, "type": agent_type},
        "last_updated": "2026-11-30T00:00:00Z",
        **sections,
    }


_WORDS = (
    "atlas harbor falcon ledger orbit quartz signal tundra velvet willow amber cobalt ember "
    "garnet juniper lumen meadow nimbus onyx prism raven sierra topaz umber vector zephyr"
).split()
_TYPES = ("project", "library", "person", "file", "decision")


def generated_manifest(
    agent_id: str, entities: int, sessions: int, seed: int = 0
) -> dict[str, Any]:
    """A large, deterministic manifest for benchmarks and scale tests."""
    import random

    rng = random.Random(f"{seed}-{agent_id}")
    rows = []
    for i in range(entities):
        a, b = rng.choice(_WORDS), rng.choice(_WORDS)
        rows.append(
            {
                "name": f"{a}-{b}-{i}",
                "type": _TYPES[i % len(_TYPES)],
                "aliases": [f"{a[:3]}{b[:3]}{i}"],
                "summary": f"The {a} {b} component number {i}, touched by {agent_id}.",
                "tags": [a, b],
                "last_touched": f"2026-{1 + i % 11:02d}-{1 + i % 28:02d}",
                "visibility": ("public", "team", "private")[i % 3],
            }
        )
    session_rows = [
        {
            "date": f"2026-{1 + i % 11:02d}-{1 + i % 28:02d}",
            "session_id": f"{agent_id}-s{i}",
            "cwd": f"/home/ada/src/{rng.choice(_WORDS)}",
            "project_focus": [rows[i % max(entities, 1)]["name"]] if entities else [],
            "key_actions": [f"worked on {rng.choice(_WORDS)} {rng.choice(_WORDS)}"],
            "files_touched": [f"src/{rng.choice(_WORDS)}.py"],
            "visibility": ("team", "public", "private")[i % 3],
        }
        for i in range(sessions)
    ]
    return manifest(agent_id, known_entities=rows, recent_sessions=session_rows)


def make_large_library(
    root: Path, agents: int = 20, entities: int = 1000, sessions: int = 500, seed: int = 0
) -> Library:
    """A library of ``agents`` generated agents (the benchmark library of the issues)."""
    from bourdon.formats import yamlio

    library = Library.init(root)
    for n in range(agents):
        data = generated_manifest(f"agent-{n:02d}", entities, sessions, seed)
        library.import_manifest(
            yamlio.dump(data), what=f"agent-{n:02d}", provenance=Provenance(caller="generator")
        )
    return library
