"""Strict YAML reading and stable YAML writing of manifests.

Reading builds values from libyaml's event stream instead of PyYAML's constructors, which gives
full control over what a manifest may contain:

- no anchors or aliases (an alias bomb is refused at its first ``&``), no explicit tags
  (``!!python/object`` and friends), no duplicate keys, one document per file;
- plain scalars are strings (``2026-01-05``, ``no``, ``0123`` and ``0.1`` stay as written); only
  ``null``/``~``/empty are null. Manifests hold no numbers or booleans;
- size, nesting depth and string length are capped, and the depth is counted while reading, so
  deep nesting never reaches a recursive C composer (which segfaults near 30,000 levels).

Writing uses a small emitter of our own: keys in a fixed, readable order, two-space block style,
strings plain where no YAML reader could take them for something else, literal blocks for
multi-line text and JSON-style double quotes otherwise. The same value always gives the same
bytes, and writing is several times faster than PyYAML's representer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, NoReturn

from bourdon.errors import InputError, ManifestError, TooLargeError
from bourdon.formats.yamlfast import is_plain, parse

if TYPE_CHECKING:  # PyYAML is imported for the first manifest bourdon did not write itself
    import yaml

MAX_BYTES: Final = 4 * 1024 * 1024
MAX_DEPTH: Final = 32
MAX_STRING: Final = 64 * 1024

_NULLS: Final = frozenset({"", "~", "null", "Null", "NULL"})
_STR_TAG: Final = "tag:yaml.org,2002:str"


def load(text: bytes | str, *, what: str = "manifest") -> Any:
    """Parse one YAML document strictly; raise ``ManifestError`` or ``TooLargeError``.

    >>> load(b"name: bourdon\\ndate: 2026-01-05\\n")
    {'name': 'bourdon', 'date': '2026-01-05'}
    """
    source = _decode(text, what)
    quick = parse(source, max_depth=MAX_DEPTH, max_string=MAX_STRING)
    if quick is not None:
        return quick  # bourdon's own dialect, read line by line (see yamlfast)
    return _general(source, what)


def load_general(text: bytes | str, *, what: str = "manifest") -> Any:
    """``load`` without the quick path for bourdon's own dialect: libyaml reads everything."""
    return _general(_decode(text, what), what)


def _general(source: str, what: str) -> Any:
    import yaml

    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        return _Builder(what).build(yaml.parse(source, Loader=loader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        if "maximum nesting depth" in problem:  # libyaml's own cap, met before ours
            raise TooLargeError(f"{what} nests deeper than {MAX_DEPTH} levels{where}") from None
        raise ManifestError(f"{what}: YAML error{where}: {problem}") from None
    except yaml.YAMLError as exc:
        raise ManifestError(f"{what}: YAML error: {' '.join(str(exc).split())}") from None


def _decode(text: bytes | str, what: str) -> str:
    if isinstance(text, str):
        raw_len = len(text.encode("utf-8", "surrogatepass"))
        source = text
    else:
        raw_len = len(text)
    if raw_len > MAX_BYTES:
        raise TooLargeError(f"{what} is {raw_len:,} bytes; the limit is {MAX_BYTES:,}")
    if isinstance(text, bytes):
        if text.startswith(b"\xef\xbb\xbf"):
            raise ManifestError(
                f"{what} starts with a byte-order mark; save it as UTF-8 without BOM"
            )
        try:
            source = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ManifestError(
                f"{what} is not valid UTF-8 (byte {exc.start} is {text[exc.start]:#04x})"
            ) from None
    if source.startswith("\ufeff"):
        raise ManifestError(f"{what} starts with a byte-order mark; save it as UTF-8 without BOM")
    nul = source.find("\x00")
    if nul >= 0:
        raise ManifestError(f"{what} contains a NUL character at offset {nul}")
    return source


class _Builder:
    """Turns a libyaml event stream into dicts, lists and strings, iteratively."""

    def __init__(self, what: str) -> None:
        self.what = what

    def fail(
        self, event: yaml.Event, problem: str, error: type[InputError] = ManifestError
    ) -> NoReturn:
        mark = event.start_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise error(f"{self.what}: {problem}{where}")

    def build(self, events: Any) -> Any:
        import yaml

        stack: list[Any] = []  # open containers; a dict is paired with its pending key
        pending_keys: list[str | None] = []
        root: Any = None
        documents = 0
        for event in events:
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    self.fail(event, "holds more than one YAML document; keep one per file")
                continue
            if isinstance(event, yaml.AliasEvent):
                self.fail(event, "uses a YAML alias (*); aliases and anchors are not allowed")
            if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
                self.fail(event, f"uses a YAML anchor (&{event.anchor}); anchors are not allowed")
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                done = stack.pop()
                pending_keys.pop()
                if not stack:
                    root = done
                continue
            value: Any
            if isinstance(event, yaml.ScalarEvent):
                value = self.scalar(event)
            elif isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                self.check_tag(event, {"tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"})
                if len(stack) >= MAX_DEPTH:
                    self.fail(event, f"nests deeper than {MAX_DEPTH} levels", TooLargeError)
                value = {} if isinstance(event, yaml.MappingStartEvent) else []
            else:
                continue
            if stack:
                self.attach(event, stack[-1], pending_keys, value)
            elif not isinstance(value, (dict, list)):
                root = value
            if isinstance(value, (dict, list)):
                stack.append(value)
                pending_keys.append(None)
        if documents == 0:
            raise ManifestError(f"{self.what} is empty")
        return root

    def attach(self, event: yaml.Event, parent: Any, keys: list[str | None], value: Any) -> None:
        if isinstance(parent, list):
            parent.append(value)
            return
        key = keys[-1]
        if key is None:
            if not isinstance(value, str):
                self.fail(event, "has a key that is not a plain string")
            if value in parent:
                self.fail(event, f"has the key {value!r} twice")
            keys[-1] = value
            return
        parent[key] = value
        keys[-1] = None

    def scalar(self, event: yaml.ScalarEvent) -> str | None:
        self.check_tag(event, {_STR_TAG})
        value: str = event.value
        if len(value) > MAX_STRING:
            self.fail(
                event,
                f"has a string of {len(value):,} characters (limit {MAX_STRING:,})",
                TooLargeError,
            )
        plain = event.style in (None, "") and event.tag is None
        if plain and value in _NULLS:
            return None
        return value

    def check_tag(self, event: yaml.NodeEvent, allowed: set[str]) -> None:
        tag = getattr(event, "tag", None)
        if tag is not None and tag != "!" and tag not in allowed:
            self.fail(event, f"uses the YAML tag {tag!r}; tags are not allowed")


# ---------------------------------------------------------------------------------------------
# Writing

# Readable order: identity first, then descriptions, dates, relations, visibility, provenance.
_FIRST: Final = (
    "spec_version agent last_updated capabilities visibility_policy id kind name date "
    "session_id type status text instance role_narrative aliases summary cwd project_focus "
    "key_actions files_touched started last_touched valid_from valid_to related_entities "
    "default private_tags team_tags tags visibility machine source known_entities "
    "recent_sessions known_workstreams notes"
).split()
_RANK: Final = {key: i for i, key in enumerate(_FIRST)}

_NEEDS_ESCAPE = re.compile(r"[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_BLOCK_UNSAFE = re.compile(
    r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]"
)


RowCache = dict[int, tuple[Any, list[str]]]

_MEMO_SIZE: Final = 1 << 16  # entries of each memo below, emptied when full
_ORDERS: dict[tuple[Any, ...], list[str]] = {}
_PLAINS: dict[str, bool] = {}


def dump(value: Mapping[str, Any], *, cache: RowCache | None = None) -> bytes:
    """Write a mapping as stable, readable YAML (UTF-8, LF line ends, final newline).

    ``cache`` (any dict the caller keeps) remembers the text of each row of a list by the row's
    identity, so writing a 1,000-row manifest again after a small change only formats what
    changed. Rows must then be treated as immutable, as ``merge`` does.

    >>> dump({"name": "bourdon", "tags": ["git", "memory"]}).decode()
    'name: bourdon\\ntags:\\n  - git\\n  - memory\\n'
    """
    if not value:
        return b"{}\n"
    emitter = _Emitter(cache)
    emitter.mapping(value, 0)
    return ("\n".join(emitter.lines) + "\n").encode("utf-8")


def _ordered(mapping: Mapping[str, Any]) -> list[str]:
    # The rows of a manifest share a few sets of keys: each set is sorted once.
    keys = tuple(mapping)
    found = _ORDERS.get(keys)
    if found is None:
        if len(_ORDERS) >= _MEMO_SIZE:
            _ORDERS.clear()
        found = _ORDERS[keys] = sorted(keys, key=lambda k: (_RANK.get(k, len(_RANK)), k))
    return found


def _plain(text: str) -> bool:
    """``is_plain``, remembered: keys and many values (dates, levels) repeat in every row."""
    if len(text) > 256:  # a long text seldom comes back: not worth keeping
        return is_plain(text)
    found = _PLAINS.get(text)
    if found is None:
        if len(_PLAINS) >= _MEMO_SIZE:
            _PLAINS.clear()
        found = _PLAINS[text] = is_plain(text)
    return found


class _Emitter:
    def __init__(self, cache: RowCache | None) -> None:
        self.lines: list[str] = []
        self.cache = cache

    def mapping(self, mapping: Mapping[str, Any], indent: int, first: str | None = None) -> None:
        pad = " " * indent
        for i, key in enumerate(_ordered(mapping)):
            head = (first if i == 0 and first is not None else pad) + _key(key) + ":"
            self.value(mapping[key], indent, head)

    def value(self, value: Any, indent: int, head: str) -> None:
        if isinstance(value, str):
            self.lines.append(f"{head} {_scalar(value, indent + 2)}")
        elif isinstance(value, (dict, Mapping)) and value:
            self.lines.append(head)
            self.mapping(value, indent + 2)
        elif isinstance(value, list) and value:
            self.lines.append(head)
            self.sequence(value, indent + 2)
        else:
            self.lines.append(f"{head} {_scalar(value, indent + 2)}")

    def sequence(self, items: list[Any], indent: int) -> None:
        pad = " " * indent
        for item in items:
            if isinstance(item, str):
                self.lines.append(f"{pad}- {_scalar(item, indent + 2)}")
            elif isinstance(item, (dict, Mapping)) and item:
                self.row(item, indent, pad)
            elif isinstance(item, list) and item:
                self.lines.append(pad + "-")
                self.sequence(item, indent + 2)
            else:
                self.lines.append(f"{pad}- {_scalar(item, indent + 2)}")

    def row(self, item: Mapping[str, Any], indent: int, pad: str) -> None:
        cache = self.cache
        if cache is None:
            self.mapping(item, indent + 2, first=pad + "- ")
            return
        hit = cache.get(id(item))
        if hit is not None and hit[0] is item and hit[1][0].startswith(pad + "- "):
            self.lines.extend(hit[1])
            return
        start = len(self.lines)
        self.mapping(item, indent + 2, first=pad + "- ")
        cache[id(item)] = (item, self.lines[start:])


def _scalar(value: Any, indent: int) -> str:
    if isinstance(value, str):
        if _plain(value):
            return value
        return _quoted(value, indent)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return _quoted(str(value), indent)


def _key(key: Any) -> str:
    """A mapping key: plain, or double-quoted on one line (a key cannot be a block)."""
    text = str(key)
    return text if _plain(text) else _double_quoted(text)


def _double_quoted(text: str) -> str:
    return _NEEDS_ESCAPE.sub(
        lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False)
    )


def _quoted(text: str, indent: int) -> str:
    if "\n" in text and _is_block(text):
        return _literal(text, indent)
    return _double_quoted(text)


def _is_block(text: str) -> bool:
    if _BLOCK_UNSAFE.search(text):
        return False
    lines = text.split("\n")
    content = [line for line in lines if line]
    if not content or content[0].startswith(" "):
        return False  # a leading space would change the block's detected indentation
    return all(not line.endswith(" ") for line in lines)


def _literal(text: str, indent: int) -> str:
    if not text.endswith("\n"):
        chomp, body = "-", text
    elif text.endswith("\n\n"):
        chomp, body = "+", text[:-1]
    else:
        chomp, body = "", text[:-1]
    pad = " " * indent
    rendered = "\n".join(pad + line if line else "" for line in body.split("\n"))
    return f"|{chomp}\n{rendered}"
