"""Shared fixtures: every test runs with a temporary HOME, library and BOURDON_HOME."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bourdon.store.library import Library
from bourdon.testing import make_library
from tests.interop.harness import REFERENCE_VERSION, Reference, reference_venv


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


@pytest.fixture(scope="session")
def reference() -> Reference:
    """The reference package, installed once per cache; skipped (never in CI) when unreachable."""
    try:
        venv = reference_venv()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        message = f"interop suite: the reference bourdon {REFERENCE_VERSION} is unavailable ({exc})"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message + "; CI must run the interop suite")
        pytest.skip(message)
    return Reference(venv)


@pytest.fixture(scope="session")
def reference_schema(reference: Reference) -> Path:
    """The reference's own L5 schema file: the oracle of what "the Bourdon schema accepts"."""
    found = sorted(
        reference.venv.glob("lib/python*/site-packages/bourdon/core/schema/L5_schema.json")
    )
    assert found, f"the reference {REFERENCE_VERSION} ships no L5_schema.json"
    return found[0]
