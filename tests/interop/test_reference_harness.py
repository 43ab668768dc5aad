"""The harness itself: the reference installs, writes a library and answers over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.interop.harness import Reference, call

pytestmark = pytest.mark.anyio


async def test_the_reference_writes_a_library_and_answers(
    reference: Reference, tmp_path: Path
) -> None:
    library, home = tmp_path / "ref-lib", tmp_path / "home"
    home.mkdir()
    async with Client(reference.stdio(library, home)) as client:
        written = await call(
            client,
            "commit_to_federation",
            agent_id="alpha-agent",
            agent_type="code-assistant",
            entities=[{"name": "Ledgerline"}],
        )
        assert written["entities_added"] == 1
        assert (await call(client, "list_agents"))["agents"] == ["alpha-agent"]
    assert (library / "agents" / "alpha-agent.l5.yaml").is_file()
    assert "origin: committed" in (library / "agents" / "alpha-agent.l5.yaml").read_text()
