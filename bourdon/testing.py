"""Helpers for bourdon's tests and for plugin authors: throwaway libraries with real git.

>>> from bourdon.testing import make_library
>>> library = make_library(tmp_path / "lib")            # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bourdon.library import SUFFIX, Library, Provenance
from bourdon.resources import sample_library_path


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
