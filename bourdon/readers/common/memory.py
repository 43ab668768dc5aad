"""Markdown memory files (Claude Code's CLAUDE.md and auto memory, Codex's memories) as
entities and notes: bullets under a "People" or "Decisions" heading become entities, the rest
notes. See ``memory_rows``.

Pure like every reader: reads nothing, writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

from bourdon.model import fold
from bourdon.readers.base import clean_text
from bourdon.readers.common.frontmatter import Meta, front_matter, listed
from bourdon.readers.common.text import clean_block

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(?:[-*+]|\d+[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_KINDS: Final = (
    ("person", re.compile(r"\b(people|persons?|team|teammates|contacts|who)\b")),
    ("decision", re.compile(r"\b(decisions?|decided|adrs?)\b")),
    (
        "library",
        re.compile(
            r"\b(tools?|tooling|librar(y|ies)|stack|dependenc(y|ies)|packages?"
            r"|frameworks?)\b"
        ),
    ),
)
_DASHES: Final = "\u2014\u2013-"  # em dash, en dash, hyphen: "Name - summary"
_PREFIX = re.compile(r"^(decision|person|library|tool)\s*:\s*(.+)$", re.I | re.S)


def _meta_private(meta: Meta) -> bool:
    """Front matter saying ``visibility: private``, ``private: true`` or tagged ``private``."""
    tag_list = listed(meta, "tags")
    return (
        str(meta.get("visibility", "")).lower() == "private"
        or str(meta.get("private", "")).lower() in ("true", "yes")
        or "private" in [str(t).lower() for t in tag_list]
    )


def _blocks(body: str) -> Iterator[tuple[str | None, str, bool]]:
    """(section heading, text, is a top-level bullet) for each bullet and paragraph."""
    heading: str | None = None
    lines: list[str] = []
    bullet = False
    fenced = False

    def flush() -> Iterator[tuple[str | None, str, bool]]:
        text = "\n".join(lines).strip("\n")
        if text.strip():
            yield heading, text, bullet

    for raw in body.split("\n"):
        line = raw.rstrip()
        if _FENCE.match(line):
            fenced = not fenced
            lines.append(line)
            continue
        if fenced:
            lines.append(line)
            continue
        head = _HEADING.match(line)
        top = _BULLET.match(line)
        if head or top or not line.strip():
            yield from flush()
            lines, bullet = [], False
            if head:
                heading = head.group(2)
            elif top:
                lines, bullet = [top.group(1)], True
            continue
        if bullet and line[:1] in (" ", "\t"):
            lines.append(line)
        elif bullet:
            yield from flush()
            lines, bullet = [line], False
        else:
            lines.append(line)
    yield from flush()


def _section_kind(heading: str | None) -> str | None:
    if not heading:
        return None
    words = clean_text(heading).lower()
    for kind, pattern in _KINDS:
        if pattern.search(words):
            return kind
    return None


def _plain(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"(\*\*|__|`)", "", text)


def _entity(kind: str, text: str, date: str, private: bool) -> dict[str, Any] | None:
    first = text.split("\n", 1)[0].strip()
    bold = re.match(r"^(\*\*|__|`)(.+?)\1", first)
    aliases: list[str] = []
    if kind == "decision":
        name = re.split(rf" [{_DASHES}] |: |\. ", _plain(first), maxsplit=1)[0]
    elif bold:
        name = bold.group(2)
    else:
        name = re.split(rf" [{_DASHES}] |: | \(|, ", _plain(first), maxsplit=1)[0]
    name = clean_text(name.strip(" .:;,"), 128)
    if kind == "library" and not bold:
        # "terraform 1.9 with the aws provider 5.x" -> "terraform"
        name = re.split(r" (?:with|for|in|on|via|and|to|as) ", name, maxsplit=1)[0]
        name = re.sub(r"(\s+v?\d[\w.]*)+$", "", name)
        name = name.split()[0] if len(name.split()) > 3 else name
    if not name or (kind != "decision" and (len(name) > 64 or len(name.split()) > 4)):
        return None
    rest = _plain(first)[len(name) :] if _plain(first).startswith(name) else ""
    paren = re.match(r"^\s*\(([^)]*)\)", rest) if kind == "person" else None
    if paren:
        for alias in re.split(r",|/| or ", paren.group(1)):
            alias = clean_text(alias.strip(" @"), 128)
            if len(alias.split()) > 3:
                continue  # a remark in parentheses, not another name
            if alias and fold(alias) != fold(name) and alias not in aliases:
                aliases.append(alias)
    row: dict[str, Any] = {"name": name, "type": kind}
    if aliases:
        row["aliases"] = aliases[:16]
    summary = clean_text(_plain(text), 2000)
    if summary and summary != name:
        row["summary"] = summary
    row["last_touched"] = date
    row["visibility"] = "private" if private else "team"
    return row


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", clean_text(text).lower()).strip("-")[:64]


def memory_rows(
    text: str,
    kind: str,
    date: str,
    private: bool,
    related: list[str],
    *,
    notes_private: bool = False,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Entities and notes of one memory file (markdown).

    Bullets under a heading naming people (``People``, ``Team``...), decisions or tools and
    libraries (``Tools``, ``Stack``, ``Dependencies``...) become entities of that type, and so
    do bullets starting ``Decision:``, ``Person:``, ``Library:`` or ``Tool:``. Every other
    top-level bullet or paragraph becomes a note (<= 4000 characters), tagged with the file's
    kind and its section heading. A file holding neither is one note. ``notes_private``
    (the prompt visibility setting) makes every note private.
    """
    meta, body = front_matter(text.lstrip("\ufeff"))
    private = private or _meta_private(meta)
    tags = [kind]
    for tag in listed(meta, "tags"):
        slug = _slug(str(tag))
        if slug and slug not in tags:
            tags.append(slug)
    entities: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for heading, block, bullet in _blocks(body):
        mark = "#private" in block
        block = block.replace("#private", "").strip() if mark else block
        section = _section_kind(heading) if bullet else None
        prefixed = _PREFIX.match(block) if bullet else None
        if prefixed:
            section = {"tool": "library"}.get(prefixed.group(1).lower(), prefixed.group(1).lower())
            block = prefixed.group(2)
        if section:
            entity = _entity(section, block, date, private or mark)
            if entity is not None:
                entities.append(entity)
                continue
        note_text = clean_block(block)
        if not note_text:
            continue
        note: dict[str, Any] = {"date": date, "text": note_text}
        if related:
            note["related_entities"] = related[:16]
        note_tags = [*tags]
        slug = _slug(heading) if heading else ""
        if slug and slug not in note_tags:
            note_tags.append(slug)
        note["tags"] = note_tags[:32]
        note["visibility"] = "private" if private or mark or notes_private else "team"
        notes.append(note)
    return entities, notes
