"""Fixtures of the interop suite (``reference`` is in tests/conftest.py; the harness that runs
the reference is in harness.py)."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
