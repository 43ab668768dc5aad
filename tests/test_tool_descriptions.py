"""tools/list tells a model how to fill every tool in: each parameter described in prose, the
closed sets as enums, the row lists of commit_to_federation as typed objects, every input
schema a valid JSON Schema (Draft 2020-12), and the parameters themselves unchanged (names,
defaults, which are required), as clients of the reference call them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from bourdon.access.visibility import LEVELS
from bourdon.formats.schema import schema
from bourdon.model import AGENT_TYPES
from bourdon.query.graph import RELATIONSHIPS
from bourdon.query.reads import WORKSTREAM_STATUSES
from bourdon.query.rowid import KINDS
from bourdon.query.turnformats import FORMATS
from bourdon.serve.server import create_server
from bourdon.serve.writes.clamp import MODES as CLAMP_MODES
from bourdon.testing import make_library

PARAMETERS = Path(__file__).parent / "fixtures" / "tool_parameters.json"

# Every closed set a tool takes, with the values the server itself accepts.
CLOSED: dict[tuple[str, str], tuple[str, ...]] = {
    **{
        (tool, "access_level"): LEVELS
        for tool in (
            "find_entity",
            "query_agent_memory",
            "get_cross_agent_summary",
            "list_recent_work",
            "list_workstreams",
            "list_notes",
            "trace_entity",
            "search_federation",
            "prepare_recognition_context",
            "get_deeper_context",
            "expand_neighbors",
            "fetch_slice",
        )
    },
    ("compile_turn", "access_level"): ("public", "team"),
    ("compile_codex_turn", "access_level"): ("public", "team"),
    ("commit_to_federation", "mode"): ("merge", "replace"),
    ("commit_to_federation", "agent_type"): AGENT_TYPES,
    ("commit_to_federation", "on_clamp"): CLAMP_MODES,
    ("list_workstreams", "status"): WORKSTREAM_STATUSES,
    ("search_federation", "source"): KINDS,
    ("search_federation", "kind"): KINDS,
    ("fetch_slice", "kind"): KINDS,
    ("compile_turn", "format"): FORMATS,
    ("expand_neighbors", "relationship_types"): RELATIONSHIPS,
}
ROW_PARAMETERS = {
    "entities": "entity",
    "sessions": "session",
    "workstreams": "workstream",
    "notes": "note",
}


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("tools")
    make_library(tmp / "lib").close()
    server = create_server(tmp / "lib", watch=False, home=tmp / "home")

    async def listing() -> dict[str, Any]:
        async with Client(server) as client:
            return {t.name: t for t in (await client.list_tools()).tools}

    return anyio.run(listing)


def enum_of(prop: dict[str, Any]) -> set[str] | None:
    """The allowed values of a property: its enum, that of its non-null branch, or its items'."""
    for branch in [prop, *prop.get("anyOf", [])]:
        if "enum" in branch:
            return set(branch["enum"])
        if branch.get("type") == "array":
            return enum_of(branch.get("items", {}))
    return None


def described(text: object) -> bool:
    return len(str(text or "").split()) >= 3


def test_every_parameter_of_every_tool_is_described(tools: dict[str, Any]) -> None:
    assert len(tools) == 23
    undescribed = {
        name: [
            param
            for param, prop in tool.input_schema.get("properties", {}).items()
            if not described(prop.get("description"))
        ]
        for name, tool in tools.items()
    }
    assert {name: params for name, params in undescribed.items() if params} == {}


def test_tool_descriptions_are_dedented_prose(tools: dict[str, Any]) -> None:
    for name, tool in tools.items():
        text = tool.description or ""
        assert len(text.split()) >= 8, name
        indented = [line for line in text.splitlines() if line.startswith(" ")]
        assert indented == [], (name, indented[:2])


def test_closed_sets_are_enums_of_what_the_server_accepts(tools: dict[str, Any]) -> None:
    found = {
        (tool, param): enum_of(tools[tool].input_schema["properties"][param])
        for tool, param in CLOSED
    }
    assert found == {key: set(values) for key, values in CLOSED.items()}
    # Every property that lists allowed values is one of them, so none is left unchecked here.
    listed = {
        (name, param)
        for name, tool in tools.items()
        for param, prop in tool.input_schema.get("properties", {}).items()
        if enum_of(prop) is not None and param not in ROW_PARAMETERS
    }
    assert listed == set(CLOSED)


def test_names_defaults_and_required_parameters_are_kept(tools: dict[str, Any]) -> None:
    want = json.loads(PARAMETERS.read_text(encoding="utf-8"))
    got = {
        name: {
            "required": sorted(tool.input_schema.get("required", [])),
            "defaults": {
                param: prop.get("default", "<required>")
                for param, prop in tool.input_schema.get("properties", {}).items()
            },
        }
        for name, tool in tools.items()
    }
    assert got == want


def test_every_input_schema_is_a_valid_draft_2020_12_schema(tools: dict[str, Any]) -> None:
    for name, tool in tools.items():
        Draft202012Validator.check_schema(tool.input_schema)  # raises, naming the fault
        assert tool.input_schema["type"] == "object", name


def test_row_lists_are_typed_objects_read_from_the_l5_schema(tools: dict[str, Any]) -> None:
    props = tools["commit_to_federation"].input_schema["properties"]
    defs = schema()["$defs"]
    for param, definition in ROW_PARAMETERS.items():
        listed = next(b for b in props[param]["anyOf"] if b.get("type") == "array")
        row = listed["items"]
        assert row["type"] == "object" and row["additionalProperties"] is True, param
        assert described(row.get("description")), param
        assert row["required"] == [r for r in defs[definition]["required"] if r != "date"]
        for field, prop in row["properties"].items():
            assert described(prop.get("description")), f"{param}.{field}"
            l5 = defs[definition]["properties"][field]
            for limit in ("maxLength", "minLength", "maxItems", "format"):
                if limit in l5:
                    assert prop[limit] == l5[limit], f"{param}.{field}.{limit}"
        assert row["properties"]["visibility"]["enum"] == list(LEVELS), param
    names = next(b for b in props["entities"]["anyOf"] if b.get("type") == "array")
    assert names["items"]["properties"]["name"]["maxLength"] == 128
    sessions = next(b for b in props["sessions"]["anyOf"] if b.get("type") == "array")
    assert "date" not in sessions["items"]["required"]  # dated today when omitted
    statuses = next(b for b in props["workstreams"]["anyOf"] if b.get("type") == "array")
    assert statuses["items"]["properties"]["status"]["enum"] == list(WORKSTREAM_STATUSES)
