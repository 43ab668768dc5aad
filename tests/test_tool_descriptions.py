"""tools/list describes the parameters of the search, trace, traversal, turn-brief and forget
tools, so a model can fill them in without reading the docs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from bourdon.serve.server import create_server
from bourdon.testing import make_library

DESCRIBED = (
    "search_federation",
    "trace_entity",
    "expand_neighbors",
    "fetch_slice",
    "compile_turn",
    "forget",
)


def listed_tools(tmp_path: Path) -> dict[str, Any]:
    make_library(tmp_path / "lib").close()
    server = create_server(tmp_path / "lib", watch=False, home=tmp_path / "home")

    async def listing() -> dict[str, Any]:
        async with Client(server) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    return anyio.run(listing)


def test_every_parameter_of_the_newer_tools_is_described(tmp_path: Path) -> None:
    tools = listed_tools(tmp_path)
    undescribed = {
        name: [
            param
            for param, prop in tools[name].input_schema.get("properties", {}).items()
            if len(str(prop.get("description", "")).split()) < 3
        ]
        for name in DESCRIBED
    }
    assert {name: params for name, params in undescribed.items() if params} == {}
    for name in DESCRIBED:
        assert len((tools[name].description or "").split()) >= 10, name
