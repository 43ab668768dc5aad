"""The one front-matter parser every reader uses (Claude Code and Codex memory, Cursor and Cline
rules): what each caller relies on."""

from __future__ import annotations

from bourdon.readers.common.files import described
from bourdon.readers.common.frontmatter import front_matter, listed


def test_keys_values_and_the_body_as_written() -> None:
    meta, body = front_matter("---\nName: debugging\ndescription: 'How to debug'\n---\n\nBody\n")
    assert meta == {"name": "debugging", "description": "How to debug"}
    assert body == "\nBody\n"  # Claude Code's bullets depend on the body's own indentation


def test_lists_inline_or_as_items() -> None:
    meta, _ = front_matter("---\ntags: [a, 'b']\nalso:\n  - x\n  - y\n---\n")
    assert meta == {"tags": ["a", "b"], "also": ["x", "y"]}
    assert listed(meta, "tags") == ["a", "b"]
    assert listed({"tags": "private"}, "tags") == ["private"]
    assert listed({}, "tags") == []


def test_crlf_files_and_a_rule_description() -> None:
    meta, body = front_matter(
        "---\r\ndescription: Money handling\r\nalwaysApply: false\r\n---\r\nUse Decimal.\r\n"
    )
    assert meta["description"] == "Money handling"
    assert body.strip() == "Use Decimal."
    assert described(meta) == " (Money handling)"
    assert described({}) == ""


def test_without_a_closing_line_there_is_no_front_matter() -> None:
    text = "---\ntitle: x\n" + "line\n" * 300 + "---\nrest\n"
    assert front_matter(text) == ({}, text)
    assert front_matter("no front matter\n---\n") == ({}, "no front matter\n---\n")
    assert front_matter("") == ({}, "")
