"""compile_turn, the agent-neutral turn brief, over the bundled sample library.

The expected items are written by hand from library/agents/*.l5.yaml: which entities each
prompt names, which sessions ran in which folder, which rows are private.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client

from bourdon.errors import InputError
from bourdon.formats import yamlio
from bourdon.query.context import compile_codex_turn
from bourdon.query.index import Index
from bourdon.query.turnbrief import compile_turn
from bourdon.serve.server import create_server
from bourdon.testing import make_library, manifest

BOURDON_DIR = "/home/ada/src/bourdon"
LEDGERLINE_DIR = "/home/ada/src/ledgerline"
SLIM_KEYS = {"schema_version", "agent_id", "routing", "brief", "items", "meta"}


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BOURDON_HOME", str(tmp_path / "home" / ".bourdon"))
    monkeypatch.setenv("BOURDON_LIBRARY", str(tmp_path / "unused-library"))


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    root = tmp_path_factory.mktemp("turn") / "library"
    make_library(root).close()
    index = Index(root, clock=lambda: date(2026, 12, 1))
    index.refresh()
    yield index


def kinds_and_names(answer: dict[str, Any]) -> list[tuple[str, str]]:
    return [(item["kind"], item["name"]) for item in answer["items"]]


def test_the_prompt_names_rank_first_then_sessions_about_them(sample: Index) -> None:
    answer = compile_turn(sample, "tune the rapidfuzz thresholds")
    assert set(answer) == SLIM_KEYS
    assert answer["schema_version"] == "bourdon.turn-brief/v1"
    assert answer["agent_id"] == "generic"
    assert answer["routing"] == {"mode": "inject", "confidence": "medium"}
    assert kinds_and_names(answer) == [
        ("entity", "rapidfuzz"),
        ("session", "2026-11-21 ledgerline, rapidfuzz"),
        ("session", "2026-11-14 ledgerline, rapidfuzz"),
    ]
    assert [i["rank"] for i in answer["items"]] == [1, 2, 3]
    assert answer["items"][0]["source_agents"] == ["claude-code", "codex", "gemini-cli"]
    assert [i["source_agents"] for i in answer["items"][1:]] == [["codex"], ["claude-code"]]


def test_the_working_folder_brings_its_project_and_its_sessions_first(sample: Index) -> None:
    answer = compile_turn(sample, "tune the rapidfuzz thresholds", cwd=LEDGERLINE_DIR)
    assert kinds_and_names(answer)[:2] == [("entity", "ledgerline"), ("entity", "rapidfuzz")]
    sessions = [i["name"] for i in answer["items"] if i["kind"] == "session"]
    # Every ledgerline session ran in that folder; newest first, the rapidfuzz ones included.
    assert sessions == [
        "2026-11-26 ledgerline, OFX import",
        "2026-11-21 ledgerline, rapidfuzz",
        "2026-11-17 ledgerline, Q4 VAT export",
        "2026-11-14 ledgerline, rapidfuzz",
    ]
    other = compile_turn(sample, "How does ledgerline talk to Priya Raman?", cwd=BOURDON_DIR)
    assert kinds_and_names(other)[:3] == [
        ("entity", "bourdon"),
        ("entity", "Priya Raman"),
        ("entity", "ledgerline"),
    ]
    assert [i["name"] for i in other["items"][3:]] == [
        "2026-11-29 bourdon, sample library",
        "2026-11-28 bourdon",
        "2026-11-27 bourdon, docs",
    ]


def test_a_prompt_naming_nothing_gives_an_empty_brief_that_says_so(sample: Index) -> None:
    answer = compile_turn(sample, "hello there", format="brief")
    assert answer["items"] == []
    assert answer["routing"] == {"mode": "observe", "confidence": "none"}
    assert "No recognition anchors" in answer["brief"]


def test_bounds_are_clamped_reported_and_never_cut_a_line(sample: Index) -> None:
    prompt = "How does ledgerline talk to Priya Raman?"
    one = compile_turn(sample, prompt, cwd=BOURDON_DIR, max_items=0)
    assert len(one["items"]) == 1 and one["meta"]["max_items"] == 1
    assert one["meta"]["truncated"] is True
    many = compile_turn(sample, prompt, cwd=BOURDON_DIR, max_items=500, max_chars=10**6)
    assert (many["meta"]["max_items"], many["meta"]["max_chars"]) == (20, 8000)
    full_lines = set(many["brief"].splitlines())
    for fmt in ("markdown", "brief"):
        tiny = compile_turn(sample, prompt, cwd=BOURDON_DIR, max_chars=5, format=fmt)
        assert tiny["meta"]["max_chars"] == 320
        assert len(tiny["brief"]) <= 320
        assert "left out to fit" in tiny["brief"]  # never "nothing known" when it was cut
        small = compile_turn(sample, prompt, cwd=BOURDON_DIR, max_chars=700, format=fmt)
        wide = compile_turn(sample, prompt, cwd=BOURDON_DIR, max_items=20, format=fmt)
        assert len(small["brief"]) <= 700
        assert set(small["brief"].splitlines()) <= set(wide["brief"].splitlines())
        assert 0 < len(small["items"]) < len(wide["items"])
    assert "<!-- /bourdon:recognition -->" in full_lines  # markdown closes what it opens


def test_every_format_parses_and_lists_the_same_items(sample: Index) -> None:
    prompt = "ledgerline and rapidfuzz"
    names = [i["name"] for i in compile_turn(sample, prompt, max_chars=8000)["items"]]
    assert len(names) == 6

    def brief(fmt: str) -> str:
        return str(compile_turn(sample, prompt, format=fmt, max_chars=8000)["brief"])

    parsed_json = json.loads(brief("json"))
    parsed_yaml = yaml.safe_load(brief("yaml"))
    root = ET.fromstring(brief("xml"))
    assert [i["name"] for i in parsed_json["items"]] == names
    assert [i["name"] for i in parsed_yaml["items"]] == names
    assert [e.get("name") for e in root.iter("item")] == names
    assert root.get("notice") == parsed_json["bourdon"]
    compact = brief("compact")
    assert "\n" not in compact and compact.startswith("[bourdon")
    assert all(name in compact for name in names)
    # Small bounds still parse: whole items are dropped, never part of one.
    for fmt, load in (("json", json.loads), ("yaml", yaml.safe_load), ("xml", ET.fromstring)):
        text = compile_turn(sample, prompt, format=fmt, max_chars=400)["brief"]
        assert len(text) <= 400
        assert load(text) is not None


def test_every_line_is_marked_as_bourdons_and_names_its_agents(sample: Index) -> None:
    answer = compile_turn(sample, "ledgerline and rapidfuzz", format="brief", agent="cursor")
    lines = answer["brief"].splitlines()
    assert all(line.startswith("[bourdon") for line in lines)
    assert "for cursor" in lines[0]
    assert lines[1].startswith("[bourdon:claude-code, codex, cursor] 1. ledgerline")
    markdown = compile_turn(sample, "ledgerline and rapidfuzz")["brief"].splitlines()
    assert all("bourdon" in line for line in markdown)


def test_an_unknown_format_is_refused_naming_the_supported_ones(sample: Index) -> None:
    with pytest.raises(InputError, match="markdown, json, xml, compact, brief, yaml"):
        compile_turn(sample, "ledgerline", format="toml")


def test_a_private_canary_never_reaches_a_team_caller(sample: Index) -> None:
    # "Ada's salary negotiation" and "dotfiles" are private rows of the sample library.
    for fmt in ("markdown", "json", "xml", "yaml", "compact", "brief"):
        answer = compile_turn(
            sample,
            "Ada's salary negotiation, then fix dotfiles",
            cwd="/home/ada/personal/work",
            format=fmt,
            verbose=True,
        )
        answer.pop("prompt")
        text = json.dumps(answer, ensure_ascii=False)
        assert "salary" not in text and "dotfiles" not in text, fmt
        assert answer["items"] == []


def test_expired_rows_are_left_out(tmp_path: Path) -> None:
    root = tmp_path / "library"
    library = make_library(root, sample=False)
    try:
        rows = [
            {"name": "Kestrel Gateway", "type": "service", "valid_to": "2026-06-30"},
            {"name": "Marigold Ledger", "type": "project", "summary": "billing"},
        ]
        raw = yamlio.dump(manifest("claude-code", known_entities=rows))
        library.import_manifest(raw, what="claude-code.yaml")
    finally:
        library.close()
    day = date(2026, 6, 30)
    index = Index(root, clock=lambda: day)
    index.refresh()
    prompt = "Kestrel Gateway in front of Marigold Ledger"
    assert [i["name"] for i in compile_turn(index, prompt)["items"]] == [
        "Kestrel Gateway",
        "Marigold Ledger",
    ]
    day = date(2026, 7, 1)
    assert [i["name"] for i in compile_turn(index, prompt)["items"]] == ["Marigold Ledger"]
    codex = compile_codex_turn(index, prompt)
    assert [i["name"] for i in codex["items"]] == ["Marigold Ledger"]


def test_compile_turn_over_the_real_mcp_client(tmp_path: Path) -> None:
    root = tmp_path / "library"
    make_library(root).close()
    server = create_server(root, watch=False, home=tmp_path / "home", peers_file=False)

    async def run() -> tuple[Any, Any, Any, Any]:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            answer = await client.call_tool(
                "compile_turn",
                {"prompt": "tune rapidfuzz", "agent": "codex", "cwd": LEDGERLINE_DIR},
            )
            verbose = await client.call_tool(
                "compile_turn", {"prompt": "tune rapidfuzz", "verbose": True, "format": "xml"}
            )
            bad = await client.call_tool("compile_turn", {"prompt": "x", "format": "toml"})
            return tools["compile_turn"], answer, verbose, bad

    tool, answer, verbose, bad = anyio.run(run)
    params = tool.input_schema["properties"]
    assert list(params) == [
        "prompt", "agent", "cwd", "access_level", "max_items", "max_chars", "format", "verbose"
    ]  # fmt: skip
    assert all(params[p].get("description") for p in params)
    assert (params["agent"]["default"], params["format"]["default"]) == ("generic", "markdown")
    slim = answer.structured_content
    assert set(slim) == SLIM_KEYS and slim["agent_id"] == "codex"
    assert kinds_and_names(slim)[:2] == [("entity", "ledgerline"), ("entity", "rapidfuzz")]
    full = verbose.structured_content
    assert set(full["delivery"]["variants"]) == {
        "markdown",
        "json",
        "xml",
        "compact",
        "brief",
        "yaml",
    }
    assert full["delivery"]["rendered_text"] == full["brief"]
    ET.fromstring(full["brief"])
    assert [c["name"] for c in full["trace"]["candidates"] if c["selected"]] == [
        i["name"] for i in full["items"]
    ]
    assert bad.is_error
    assert "markdown, json, xml" in bad.content[0].text


def test_bourdon_turn_prints_the_brief_and_refuses_an_unknown_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bourdon.cli.main import main

    root = tmp_path / "library"
    make_library(root).close()
    args = ["--library", str(root), "turn", "tune the rapidfuzz thresholds"]
    assert main([*args, "--format", "compact", "--agent", "cursor"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed.startswith("[bourdon context, to weigh: rapidfuzz (entity;")
    assert "\n" not in printed
    assert main([*args, "--cwd", LEDGERLINE_DIR, "--max-items", "2", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert kinds_and_names(answer) == [("entity", "ledgerline"), ("entity", "rapidfuzz")]
    assert answer["meta"]["max_items"] == 2
    assert main([*args, "--format", "toml"]) == 2
    assert "markdown, json, xml, compact, brief, yaml" in capsys.readouterr().err


def test_a_prompt_naming_no_known_entity_is_answered_from_full_text_search(sample: Index) -> None:
    # No name or alias in the prompt: recognition finds nothing, search finds the decision
    # whose summary tells of the alias bomb, and the session where the reader learned to refuse.
    answer = compile_turn(sample, "why did the alias bomb test take two gigabytes")
    names = [item["name"] for item in answer["items"]]
    assert names[0] == "Refuse YAML anchors and aliases"
    assert answer["items"][0]["kind"] == "entity"
    assert answer["items"][0]["source_agents"] == ["claude-code"]
    assert "dotfiles" not in str(answer)  # private rows stay out of the search as well


def test_a_private_row_is_never_a_search_candidate_for_a_team_brief(sample: Index) -> None:
    # dotfiles is private (claude-code): its session's words match, but the brief is team.
    answer = compile_turn(sample, "chezmoi zsh tmux")
    assert answer["items"] == []
    assert "chezmoi" not in answer["brief"]
