"""Fixtures of the interop suite; the harness that runs the reference is in harness.py."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.interop.harness import REFERENCE_VERSION, Reference, reference_venv


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


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
