"""The stylesheet parses: every rule and every ``@media`` block is closed where it should be.

A block left open swallows every rule after it on a phone or on a wide screen (the merge of two
sections once lost a closing brace), and no page test would see which rule went missing.
"""

from __future__ import annotations

import re
from importlib import resources

CSS = resources.files("bourdon.serve.web").joinpath("static", "ui.css").read_text()


def blocks(text: str) -> list[tuple[str, str | None]]:
    """Each block's selector and the selector of the block it sits in (comments left out)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    open_blocks: list[str] = []
    found: list[tuple[str, str | None]] = []
    start = 0
    for i, char in enumerate(text):
        if char == "{":
            selector = text[start:i].strip().split(";")[-1].strip()
            found.append((selector, open_blocks[-1] if open_blocks else None))
            open_blocks.append(selector)
            start = i + 1
        elif char == "}":
            assert open_blocks, f"a '}}' closes nothing near: {text[max(0, i - 80) : i]!r}"
            open_blocks.pop()
            start = i + 1
    assert not open_blocks, f"left open: {open_blocks}"
    return found


def test_every_block_is_closed() -> None:
    blocks(CSS)


def test_rules_sit_at_the_top_or_in_a_media_block_only() -> None:
    for selector, parent in blocks(CSS):
        assert parent is None or parent.startswith("@media"), f"{selector!r} is inside {parent!r}"
        if parent is not None:
            assert not selector.startswith("@media"), f"{selector!r} nested in {parent!r}"


def test_no_selector_is_defined_twice_at_the_top_level() -> None:
    outer = [s for s, parent in blocks(CSS) if parent is None and not s.startswith("@media")]
    assert sorted({s for s in outer if outer.count(s) > 1}) == []
