"""A quick reader for the YAML bourdon itself writes, beside the strict general one.

``yamlio.dump`` writes one narrow dialect: block mappings and sequences indented by two spaces
(a sequence two spaces deeper than its key, a row's first key on its dash line), plain
scalars that ``yamlio`` would write plain, JSON-style double-quoted scalars, literal blocks
(``|``, ``|-``, ``|+``) indented two spaces deeper than their key, ``null``, ``{}`` and ``[]``.
Reading that dialect line by line is several times faster than building values from
libyaml's events, which a large library pays at every cold start.

``parse`` returns ``None`` for anything outside the dialect, however valid as YAML: a comment,
a blank line between keys, flow style, a tab, another indentation, an anchor, a tag, a
duplicate key, a deep nesting, a long string... ``yamlio.load`` then reads it the strict
general way, so whatever this reader accepts reads the same both ways, and every error
(with its line and column) is the general reader's.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

# Characters yamlio.dump never writes raw, and that YAML may read otherwise than JSON does
# (line breaks of YAML 1.1, a tab, controls, a BOM): their mere presence means the general way.
_ODD: Final = re.compile(
    r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]"
)
# A double-quoted scalar as json.dumps writes it: escapes both JSON and YAML read alike.
_QUOTED: Final = re.compile(r'"(?:[^"\\]|\\(?:["\\bfnrt]|u(?![dD][89a-fA-F])[0-9a-fA-F]{4}))*"')
_BLOCKS: Final = frozenset({"|", "|-", "|+"})
_PLAIN: Final = re.compile(
    r"[^\W\d][^\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff:#]*", re.UNICODE
)
# Words that YAML 1.1 readers turn into booleans or null; they must stay quoted.
_KEYWORDS: Final = frozenset("y yes n no true false on off null".split())
_MAX_KEY: Final = 1000  # YAML readers refuse implicit keys over 1,024 characters


def is_plain(text: str) -> bool:
    """Whether ``text`` may be written unquoted: no YAML reader takes it for anything else."""
    return (
        _PLAIN.fullmatch(text) is not None
        and not text.endswith(" ")
        and text.lower() not in _KEYWORDS
    )


class _Outside(Exception):
    """The text leaves the dialect: read it the general way."""


def parse(source: str, *, max_depth: int, max_string: int) -> Any:
    """The value of ``source`` if it is in ``yamlio.dump``'s dialect, else ``None``.

    ``max_depth`` and ``max_string`` are the general reader's limits: text that comes near
    them is left to it, so its errors stay the only ones.
    """
    if not source.endswith("\n") or _ODD.search(source):
        return None
    lines = source.split("\n")
    lines.pop()  # after the final line break
    reader = _Reader(lines, max_depth - 2, max_string)
    try:
        value, end = reader.mapping(0, 0, 1)
    except _Outside:
        return None
    return value if end == len(lines) and value else None


class _Reader:
    def __init__(self, lines: list[str], max_depth: int, max_string: int) -> None:
        self.lines = lines
        self.max_depth = max_depth
        self.max_string = max_string
        self.plain_keys: set[str] = set()  # keys repeat in every row: judge each once
        self.plain_values: set[str] = set()  # and so do short values (types, tags, levels)
        self.known_lines: dict[str, tuple[int, str, str]] = {}  # whole "key: value" lines

    def mapping(self, i: int, indent: int, depth: int, dashed: bool = False) -> Any:
        """The mapping whose keys start at column ``indent`` from line ``i``; ``dashed``: line
        ``i`` is a row's dash line, its first key after the dash."""
        if depth > self.max_depth:
            raise _Outside
        lines, n = self.lines, len(self.lines)
        pad = " " * indent
        deeper = indent + 2
        out: dict[str, Any] = {}
        plain_keys, plain_values, known = self.plain_keys, self.plain_values, self.known_lines
        while i < n:
            line = lines[i]
            on_dash, dashed = dashed, False
            if not on_dash:
                hit = known.get(line)
                if hit is not None and hit[0] == indent:  # "key: value" met before, here
                    if hit[1] in out:
                        raise _Outside
                    out[hit[1]] = hit[2]
                    i += 1
                    continue
                if not line.startswith(pad):
                    break  # a shallower line: the caller goes on from it
            if line[indent : indent + 1] in (" ", ""):
                raise _Outside  # a blank line, or one deeper than a key may be
            i += 1
            if line[indent] == '"':
                quoted = _QUOTED.match(line, indent)
                if quoted is None:
                    raise _Outside
                key = json.loads(quoted.group())
                colon = quoted.end()
            else:
                colon = line.find(":", indent)
                key = line[indent:colon]
                if key not in plain_keys:
                    if colon <= indent or not is_plain(key):
                        raise _Outside
                    plain_keys.add(key)
            if colon - indent > _MAX_KEY or line[colon : colon + 1] != ":" or key in out:
                raise _Outside
            if colon + 1 < len(line):
                if line[colon + 1] != " " or line[colon + 2 : colon + 3] in (" ", ""):
                    raise _Outside
                value = line[colon + 2 :]
                if value in plain_values:
                    out[key] = value
                    if not on_dash:
                        known[line] = (indent, key, value)
                else:
                    out[key], i = self.scalar(value, deeper, i, depth)
                continue
            # A key alone on its line: a sequence or a mapping two columns deeper follows.
            below = lines[i] if i < n else ""
            if not below.startswith(pad + "  ") or below[deeper : deeper + 1] == " ":
                raise _Outside
            if below[deeper] == "-":
                out[key], i = self.sequence(i, deeper, depth + 1)
            else:
                out[key], i = self.mapping(i, deeper, depth + 1)
        if not out:
            raise _Outside
        return out, i

    def sequence(self, i: int, indent: int, depth: int) -> Any:
        if depth > self.max_depth:
            raise _Outside
        lines, n = self.lines, len(self.lines)
        dash = " " * indent + "-"
        out: list[Any] = []
        while i < n and lines[i].startswith(dash):
            rest = lines[i][indent + 1 :]
            i += 1
            if not rest:  # "-" alone: a list inside the list, two columns deeper
                below = lines[i] if i < n else ""
                if not below.startswith(" " * (indent + 2) + "-"):
                    raise _Outside
                item, i = self.sequence(i, indent + 2, depth + 1)
            elif rest[0] != " " or rest[1:2] in (" ", ""):
                raise _Outside
            elif rest[1:] in self.plain_values:
                item = rest[1:]
            elif self.is_key(rest[1:]):
                item, i = self.mapping(i - 1, indent + 2, depth + 1, dashed=True)
            else:
                item, i = self.scalar(rest[1:], indent + 2, i, depth)
            out.append(item)
        if not out:
            raise _Outside
        return out, i

    @staticmethod
    def is_key(text: str) -> bool:
        if text[0] == '"':
            quoted = _QUOTED.match(text)
            return quoted is not None and text[quoted.end() : quoted.end() + 1] == ":"
        return ":" in text

    def scalar(self, text: str, block_indent: int, i: int, depth: int) -> Any:
        """The value written ``text`` (after ``key: `` or ``- ``); a literal block's lines
        follow from line ``i``, at column ``block_indent``."""
        value: Any
        first = text[0]
        if first == '"':
            if "\\" not in text and text.count('"') == 2 and text[-1] == '"':
                value = text[1:-1]
            elif _QUOTED.fullmatch(text):
                value = json.loads(text)
            else:
                raise _Outside
        elif first == "|":
            return self.block(text, block_indent, i)
        elif text == "null":
            return None, i
        elif text in ("{}", "[]"):
            if depth + 1 > self.max_depth:
                raise _Outside
            return ({} if text == "{}" else []), i
        elif _PLAIN.fullmatch(text) and text[-1] != " " and text.lower() not in _KEYWORDS:
            value = text  # is_plain, inline: most values are plain
            if len(text) <= 32:
                self.plain_values.add(text)
        else:
            raise _Outside
        if len(value) > self.max_string:
            raise _Outside
        return value, i

    def block(self, header: str, indent: int, i: int) -> Any:
        if header not in _BLOCKS:
            raise _Outside
        lines, n = self.lines, len(self.lines)
        pad = " " * indent
        body: list[str] = []
        while i < n and lines[i] == "":  # leading empty lines are part of the text
            body.append("")
            i += 1
        if i >= n or not lines[i].startswith(pad) or lines[i][indent : indent + 1] in ("", " "):
            raise _Outside  # the first line sets a block's indentation: it must be ours
        while i < n:
            line = lines[i]
            if line and not line.startswith(pad):
                break
            if line.endswith(" "):
                raise _Outside
            body.append(line[indent:])
            i += 1
        text = "\n".join(body) + "\n"
        if header == "|-":
            text = text.rstrip("\n")
        elif header == "|":
            text = text.rstrip("\n") + "\n"
        if len(text) > self.max_string:
            raise _Outside
        return text, i
