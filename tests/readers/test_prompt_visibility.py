"""The prompt visibility setting: the visibility every reader gives verbatim prompt text (session
rows with key actions) and instruction-file notes. Default team, so the goldens are unchanged;
``private`` keeps them home from every member and remote."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from bourdon.errors import InputError
from bourdon.readers import load_readers
from bourdon.readers.base import ReaderContext
from bourdon.serve.config import reader_context
from bourdon.testing.readercheck import reader_context as context_for

STORES = {
    "claude-code": "claude_code",
    "codex": "codex",
    "cursor": "cursor",
    "copilot": "copilot",
    "copilot-cli": "copilot_cli",
    "gemini-cli": "gemini_cli",
    "cline": "cline",
}


def read(name: str, home: Path, **kw: Any) -> dict[str, Any]:
    module = importlib.import_module(f"tests.support.stores.{STORES[name]}")
    if not home.exists():
        module.write_store(home)
    readers, _ = load_readers(name)
    return readers[name].read(context_for(home, **kw)).manifest


@pytest.mark.parametrize("name", sorted(STORES))
def test_private_setting_makes_prompts_and_instruction_notes_private(
    name: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    default = read(name, home)
    private = read(name, home, prompt_visibility="private")
    prompted = [s for s in default["recent_sessions"] if s.get("key_actions")]
    assert prompted, "the store has sessions with prompts"
    assert any(s["visibility"] == "team" for s in prompted)  # by default they are shared
    assert all(
        s["visibility"] == "private" for s in private["recent_sessions"] if s.get("key_actions")
    )
    assert all(n["visibility"] == "private" for n in private["notes"])
    # Nothing else changes: the same rows, and entities keep their own visibility.
    assert [e["name"] for e in private["known_entities"]] == [
        e["name"] for e in default["known_entities"]
    ]
    assert [e["visibility"] for e in private["known_entities"]] == [
        e["visibility"] for e in default["known_entities"]
    ]
    assert len(private["recent_sessions"]) == len(default["recent_sessions"])


def test_the_default_is_team() -> None:
    assert ReaderContext(home=Path("/nowhere")).prompt_visibility == "team"


def test_the_setting_is_read_from_the_environment_by_the_composition_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BOURDON_PROMPT_VISIBILITY", raising=False)
    assert reader_context().prompt_visibility == "team"
    monkeypatch.setenv("BOURDON_PROMPT_VISIBILITY", "private")
    assert reader_context().prompt_visibility == "private"
    monkeypatch.setenv("BOURDON_PROMPT_VISIBILITY", "public")
    with pytest.raises(InputError, match="BOURDON_PROMPT_VISIBILITY"):
        reader_context()


@pytest.mark.parametrize("name", sorted(STORES))
def test_every_note_a_reader_writes_is_marked_as_an_instruction_note(
    name: str, tmp_path: Path
) -> None:
    """The mark ``--keep-prompts-home`` filters on: a reader's notes carry a known file tag."""
    from bourdon.access.homebound import is_instruction, is_prompt

    manifest = read(name, tmp_path / "home")
    assert manifest["notes"]
    assert all(is_instruction("notes", n) for n in manifest["notes"])
    assert all(
        is_prompt("recent_sessions", s) for s in manifest["recent_sessions"]
    )  # every reader session holds what the user typed
