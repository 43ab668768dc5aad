"""The text edits of ``bourdon setup`` in TOML (Codex) and YAML (goose) files, and where each
agent's file is on macOS and Windows: every byte of the user's file but bourdon's entry kept.

Expectations are written by hand from each agent's documented format.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path

import pytest
import yaml

from bourdon.errors import InputError
from bourdon.ingest import mcpconfig
from bourdon.ingest.agents import Machine, canonical, installed, known

OLD = ["/old/bin/bourdon", "--library", "/old/lib", "serve"]
NEW = ["/new/bin/bourdon", "--library", "/new/lib", "serve"]


def agent(agent_id: str, home: Path = Path("/home/u")) -> mcpconfig.Agent:
    return next(a for a in known(Machine(home)) if a.id == agent_id)


def test_codex_table_is_replaced_where_it_stands_and_taken_out_exactly() -> None:
    codex = agent("codex")
    raw = (
        'model = "o3"  # mine\n\n'
        '[mcp_servers.bourdon]\ncommand = "/old/bin/bourdon"\n'
        'args = ["--library", "/old/lib", "serve"]\n\n'
        '[mcp_servers.bourdon.env]\nX = "1"\n\n'
        '[profiles.fast]\nmodel = "o4-mini"\n'
    )
    new = mcpconfig.register(codex, raw, NEW)
    assert new == (
        'model = "o3"  # mine\n\n'
        '[mcp_servers.bourdon]\ncommand = "/new/bin/bourdon"\n'
        'args = ["--library", "/new/lib", "serve"]\n\n'
        '[profiles.fast]\nmodel = "o4-mini"\n'
    )
    assert mcpconfig.registered(codex, new) == NEW
    assert mcpconfig.register(codex, new, NEW) == new  # a second time: the same bytes
    gone = mcpconfig.unregister(codex, new)
    assert tomllib.loads(gone) == {"model": "o3", "profiles": {"fast": {"model": "o4-mini"}}}
    assert "# mine" in gone


def test_codex_appended_table_comes_out_to_the_original_bytes() -> None:
    codex = agent("codex")
    raw = 'model = "o3"\n'
    new = mcpconfig.register(codex, raw, NEW)
    assert new.startswith(raw + "\n[mcp_servers.bourdon]\n")
    assert mcpconfig.unregister(codex, new) == raw
    assert mcpconfig.register(codex, None, NEW).startswith("[mcp_servers.bourdon]\n")


def test_codex_inline_definition_and_broken_toml_are_refused() -> None:
    codex = agent("codex")
    with pytest.raises(InputError, match="by hand"):
        mcpconfig.register(codex, 'mcp_servers = { bourdon = { command = "x" } }\n', NEW)
    with pytest.raises(InputError, match="not valid TOML"):
        mcpconfig.register(codex, "model = \n", NEW)


def test_goose_extension_is_added_updated_and_removed_as_text() -> None:
    goose = agent("goose")
    raw = "# goose\nGOOSE_MODEL: x\nextensions:\n    developer:\n        enabled: true\n" \
          "        type: builtin\n        name: developer\nGOOSE_MODE: auto\n"  # fmt: skip
    once = mcpconfig.register(goose, raw, OLD)
    assert once.startswith(
        "# goose\nGOOSE_MODEL: x\nextensions:\n    bourdon:\n        enabled: true\n"
    )
    data = yaml.safe_load(once)
    assert data["extensions"]["developer"] == {
        "enabled": True,
        "type": "builtin",
        "name": "developer",
    }
    assert data["GOOSE_MODE"] == "auto"
    twice = mcpconfig.register(goose, once, NEW)
    assert yaml.safe_load(twice)["extensions"]["bourdon"]["cmd"] == "/new/bin/bourdon"
    assert twice.count("    bourdon:\n") == 1
    assert mcpconfig.registered(goose, twice) == NEW
    assert mcpconfig.unregister(goose, twice) == raw


def test_goose_file_without_extensions_gets_the_mapping() -> None:
    goose = agent("goose")
    new = mcpconfig.register(goose, "GOOSE_PROVIDER: openai", NEW)
    data = yaml.safe_load(new)
    assert data["GOOSE_PROVIDER"] == "openai"
    assert data["extensions"]["bourdon"]["type"] == "stdio"
    assert data["extensions"]["bourdon"]["args"] == NEW[1:]


def test_opencode_2_servers_form_is_followed_where_the_file_uses_it() -> None:
    opencode = agent("opencode")
    raw = '{"mcp": {"servers": {"other": {"type": "remote", "url": "https://x"}}}}'
    new = yaml.safe_load(mcpconfig.register(opencode, raw, NEW))  # JSON is YAML
    assert set(new["mcp"]) == {"servers"}
    assert new["mcp"]["servers"]["bourdon"] == {"type": "local", "command": NEW, "enabled": True}


def test_continue_refuses_a_block_file_of_someone_elses() -> None:
    block = agent("continue-dev")
    with pytest.raises(InputError, match="not bourdon's"):
        mcpconfig.register(block, "name: mine\nmcpServers: []\n", NEW)


def test_paths_on_macos_and_windows(tmp_path: Path) -> None:
    mac = {a.id: a.config for a in known(Machine(tmp_path, platform="darwin"))}
    support = tmp_path / "Library" / "Application Support"
    assert mac["copilot"] == support / "Code" / "User" / "mcp.json"
    assert mac["claude-desktop"] == support / "Claude" / "claude_desktop_config.json"
    appdata = tmp_path / "AppData" / "Roaming"
    win = {a.id: a.config for a in known(Machine(tmp_path, platform="win32", appdata=appdata))}
    assert win["claude-desktop"] == appdata / "Claude" / "claude_desktop_config.json"
    assert win["goose"] == appdata / "Block" / "goose" / "config" / "config.yaml"
    assert win["cline"] == (
        appdata / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev" / "settings"
        / "cline_mcp_settings.json"
    )  # fmt: skip


def test_a_program_on_path_says_an_agent_is_installed(tmp_path: Path) -> None:
    programs = tmp_path / "bin"
    programs.mkdir()
    (programs / "opencode").write_text("#!/bin/sh\n")
    (programs / "opencode").chmod(0o755)
    (programs / "goose").write_text("not executable")
    machine = Machine(tmp_path / "home", path=str(programs))
    assert [a.id for a in installed(machine)] == ["opencode"]
    assert canonical("Windsurf") == "cascade"
    with pytest.raises(InputError, match="knows"):
        canonical("notepad")


def test_json_file_keeps_its_indentation_and_other_servers() -> None:
    cursor = dataclasses.replace(agent("cursor"))
    raw = '{\n    "mcpServers": {\n        "x": {"command": "y"}\n    }\n}\n'
    new = mcpconfig.register(cursor, raw, NEW)
    assert new.splitlines()[1] == '    "mcpServers": {'
    assert (
        mcpconfig.unregister(cursor, new)
        == '{\n    "mcpServers": {\n        "x": {\n            "command": "y"\n        }\n    }\n}\n'
    )


def test_kilo_code_with_its_own_config_gets_opencodes_form(tmp_path: Path) -> None:
    # Kilo Code's docs: servers under the top-level `mcp` key of ~/.config/kilo/kilo.json,
    # a local one as {type: local, command: [...], enabled}.
    (tmp_path / ".config" / "kilo").mkdir(parents=True)
    kilo = agent("kilo-code", tmp_path)
    assert kilo.config == tmp_path / ".config" / "kilo" / "kilo.json"
    new = yaml.safe_load(mcpconfig.register(kilo, '{"mcp": {}, "model": "x"}', NEW))
    assert new == {
        "mcp": {"bourdon": {"type": "local", "command": NEW, "enabled": True}},
        "model": "x",
    }
