"""Shared fixtures: every test runs with a temporary HOME, library and BOURDON_HOME."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bourdon.library import Library
from bourdon.testing import make_library


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point HOME, BOURDON_HOME and BOURDON_LIBRARY away from the real home directory."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("BOURDON_HOME", str(home / ".bourdon"))
    monkeypatch.setenv("BOURDON_LIBRARY", str(home / "agent-library"))
    return home


@pytest.fixture
def library(tmp_path: Path) -> Iterator[Library]:
    """An empty library in a temporary folder."""
    lib = Library.init(tmp_path / "lib")
    yield lib
    lib.close()


@pytest.fixture
def sample_library(tmp_path: Path) -> Iterator[Library]:
    """A library holding the bundled sample agents."""
    lib = make_library(tmp_path / "sample")
    yield lib
    lib.close()
