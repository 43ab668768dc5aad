"""Hostile input: manifests and agent ids that try to break, trick or exhaust bourdon.

Every case is data: bytes (or text) handed to ``bourdon.schema.load_manifest``, the error class
it must raise and words its message must contain, so a case that would pass with any message is
impossible to write. Cases come from small generator functions, one per kind of attack.

Parsing that could take the interpreter down (alias bombs, deep nesting, huge scalars, size
limits) runs in one child process that loops over those cases and prints one JSON line each, so
a segfault, a ``RecursionError`` or a ``MemoryError`` fails the tests instead of the test run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bourdon.cli import main as cli
from bourdon.errors import BourdonError, InputError, ManifestError, SchemaError, TooLargeError
from bourdon.formats import yamlio
from bourdon.formats.schema import load_manifest
from bourdon.model import check_agent_id
from bourdon.store.library import Library

ROOT = Path(__file__).resolve().parents[1]
WHAT = "hostile.yaml"  # the name load_manifest puts at the front of every message
HEADER = (
    'spec_version: "0.1"\n'
    "agent:\n"
    "  id: hostile-test\n"
    "  type: code-assistant\n"
    'last_updated: "2026-01-05T10:00:00Z"\n'
)  # five lines; a case appended to it starts on line 6
NUL = b"\x00"
DROP = object()  # marks a field a case removes from an otherwise valid manifest


@dataclass(frozen=True)
class Bad:
    """Input that must be refused with exactly ``error`` and a message holding every needle."""

    id: str
    raw: bytes | str
    error: type[BourdonError]
    needles: tuple[str, ...]
    heavy: bool = False  # parse in the child process
    why: str = ""  # what a failure of this case means, where it is not obvious


@dataclass(frozen=True)
class Good:
    """Input that must load; ``expect`` maps a path in the manifest to the value found there."""

    id: str
    raw: bytes | str
    expect: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    heavy: bool = False


# ---------------------------------------------------------------------------------------------
# Building manifests


def manifest(**top: Any) -> dict[str, Any]:
    """A valid manifest with ``top`` merged in; a value of ``DROP`` removes that key."""
    data: dict[str, Any] = {
        "spec_version": "0.1",
        "agent": {"id": "hostile-test", "type": "code-assistant"},
        "last_updated": "2026-01-05T10:00:00Z",
    }
    for key, value in top.items():
        if value is DROP:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def _row(defaults: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    row = dict(defaults)
    for key, value in fields.items():
        if value is DROP:
            row.pop(key, None)
        else:
            row[key] = value
    return row


def entity(**fields: Any) -> dict[str, Any]:
    return _row({"name": "bourdon"}, fields)


def session(**fields: Any) -> dict[str, Any]:
    return _row({"date": "2026-01-05"}, fields)


def workstream(**fields: Any) -> dict[str, Any]:
    return _row({"name": "hardening"}, fields)


def note(**fields: Any) -> dict[str, Any]:
    return _row({"date": "2026-01-05", "text": "a note"}, fields)


def as_json(data: Any) -> str:
    """JSON is YAML: schema cases are written without going through bourdon's own dumper.

    ``ensure_ascii`` turns every control character into a ``\\uXXXX`` escape, so the value reaches
    the schema check instead of stopping at the YAML reader.
    """
    return json.dumps(data, ensure_ascii=True)


def agent_with(agent_id: Any) -> dict[str, Any]:
    return manifest(agent={"id": agent_id, "type": "code-assistant"})


# ---------------------------------------------------------------------------------------------
# Generators of refused input


def billion_laughs(levels: int) -> str:
    lines = ['lol0: &lol0 "lol"']
    for level in range(1, levels + 1):
        refs = ", ".join([f"*lol{level - 1}"] * 10)
        lines.append(f"lol{level}: &lol{level} [{refs}]")
    return "\n".join(lines) + "\n"


def alias_cases() -> Iterator[Bad]:
    for levels in (6, 9):
        yield Bad(
            f"alias/billion-laughs-{levels}-levels",
            billion_laughs(levels),
            ManifestError,
            ("anchor (&lol0)", "not allowed", "line 1, column 7"),
            heavy=True,
        )
    yield Bad(
        "alias/billion-laughs-after-a-valid-header",
        HEADER
        + "x-bomb:\n"
        + "".join("  " + line + "\n" for line in billion_laughs(9).splitlines()),
        ManifestError,
        ("anchor (&lol0)", "line 7"),
        heavy=True,
    )
    yield Bad(
        "alias/quadratic-blowup-one-anchor-many-aliases",
        "a: &a [" + ",".join(["x"] * 1000) + "]\nb: [" + ",".join(["*a"] * 10000) + "]\n",
        ManifestError,
        ("anchor (&a)", "line 1"),
        heavy=True,
    )
    yield Bad(
        "alias/single-anchor-on-a-scalar",
        HEADER + "known_entities:\n  - name: &n bourdon\n",
        ManifestError,
        ("anchor (&n)", "anchors are not allowed", "line 7"),
    )
    yield Bad(
        "alias/single-anchor-on-a-mapping",
        'spec_version: "0.1"\nagent: &who\n  id: hostile-test\n  type: other\n',
        ManifestError,
        ("anchor (&who)", "line 2"),
    )
    yield Bad(
        "alias/single-anchor-on-a-sequence",
        HEADER + "capabilities: &caps\n  - read\n",
        ManifestError,
        ("anchor (&caps)", "line 6"),
    )
    yield Bad(
        "alias/alias-without-anchor",
        HEADER + "capabilities: *caps\n",
        ManifestError,
        ("alias (*)", "line 6"),
    )
    yield Bad("alias/alias-as-a-key", "*x : 1\n", ManifestError, ("alias (*)", "line 1"))
    yield Bad("alias/merge-key", "<<: *base\nname: x\n", ManifestError, ("alias (*)", "line 1"))


def nesting_cases() -> Iterator[Bad]:
    for depth in (1_000, 30_000, 100_000):
        yield Bad(
            f"nesting/flow-sequence-{depth}-deep",
            "[" * depth + "]" * depth,
            TooLargeError,
            ("nests deeper than 32 levels", "line 1"),
            heavy=True,
        )
        yield Bad(
            f"nesting/flow-sequence-{depth}-deep-unclosed",
            "[" * depth,
            TooLargeError,
            ("nests deeper than 32 levels", "line 1"),
            heavy=True,
        )
        yield Bad(
            f"nesting/flow-mapping-{depth}-deep",
            "{a: " * depth + "x" + "}" * depth,
            TooLargeError,
            ("nests deeper than 32 levels", "line 1"),
            heavy=True,
        )
        yield Bad(
            f"nesting/block-sequence-{depth}-deep",
            "- " * depth + "x\n",
            TooLargeError,
            ("nests deeper than 32 levels", "line 1"),
            heavy=True,
        )
    yield Bad(
        "nesting/block-mapping-1000-deep",
        "".join(" " * level + "a:\n" for level in range(1_000)) + " " * 1_000 + "x\n",
        TooLargeError,
        ("nests deeper than 32 levels", "line 33"),
        heavy=True,
    )
    yield Bad(
        "nesting/inside-an-extension-of-a-valid-manifest",
        HEADER + "x-deep: " + "[" * 30_000 + "]" * 30_000 + "\n",
        TooLargeError,
        ("nests deeper than 32 levels", "line 6"),
        heavy=True,
    )
    yield Bad(
        "nesting/33-levels-one-past-the-limit",
        HEADER + "x-deep: " + "[" * 32 + "]" * 32 + "\n",
        TooLargeError,
        ("nests deeper than 32 levels", "line 6"),
    )


def size_cases() -> Iterator[Bad]:
    ten_mb = b"name: " + b"x" * (10 * 1024 * 1024)
    yield Bad(
        "size/10-MB-string-scalar",
        ten_mb,
        TooLargeError,
        (f"{len(ten_mb):,} bytes", f"limit is {yamlio.MAX_BYTES:,}"),
        heavy=True,
    )
    over = HEADER.encode() + b"#" * (yamlio.MAX_BYTES + 1 - len(HEADER))
    yield Bad(
        "size/one-byte-over-4-MiB",
        over,
        TooLargeError,
        (f"{yamlio.MAX_BYTES + 1:,} bytes", f"limit is {yamlio.MAX_BYTES:,}"),
        heavy=True,
    )
    seventy_kb = 70 * 1024
    for style, scalar in (
        ("plain", "x" * seventy_kb),
        ("double-quoted", '"' + "x" * seventy_kb + '"'),
        ("single-quoted", "'" + "x" * seventy_kb + "'"),
        ("literal-block", "|-\n  " + "x" * seventy_kb),
    ):
        yield Bad(
            f"size/70-KB-{style}-scalar",
            HEADER + "x-blob: " + scalar + "\n",
            TooLargeError,
            (f"string of {seventy_kb:,} characters", f"limit {yamlio.MAX_STRING:,}", "line 6"),
            heavy=True,
        )
    yield Bad(
        "size/one-character-over-the-string-limit",
        HEADER + "x-blob: " + "x" * (yamlio.MAX_STRING + 1) + "\n",
        TooLargeError,
        (f"string of {yamlio.MAX_STRING + 1:,} characters", "line 6"),
        heavy=True,
    )
    yield Bad(
        "size/70-KB-list-item",
        HEADER + "capabilities:\n  - " + "y" * seventy_kb + "\n",
        TooLargeError,
        (f"string of {seventy_kb:,} characters", "line 7"),
        heavy=True,
    )
    five_mb_text = "name: " + "é" * (2_500_000)  # 2 bytes each: over the limit in bytes, not chars
    yield Bad(
        "size/5-MB-given-as-text-counts-utf8-bytes",
        five_mb_text,
        TooLargeError,
        (f"{len(five_mb_text.encode()):,} bytes",),
    )


def encoding_cases() -> Iterator[Bad]:
    patterns = {
        "byte-ff": b"\xff",
        "byte-fe": b"\xfe",
        "lone-continuation-byte": b"\x80",
        "truncated-two-byte-sequence": b"\xc3",
        "bad-continuation": b"\xc3\x28",
        "overlong-slash": b"\xc0\xaf",
        "overlong-three-byte": b"\xe0\x80\xaf",
        "encoded-surrogate": b"\xed\xa0\x80",
        "above-u10ffff": b"\xf4\x90\x80\x80",
        "five-byte-form": b"\xf8\x88\x80\x80\x80",
        "latin-1-cafe": b"caf\xe9",
    }
    prefix = HEADER.encode() + b"known_entities:\n  - name: "
    for name, pattern in patterns.items():
        raw = prefix + pattern + b"\n"
        offset = len(prefix) + next(i for i in range(len(pattern)) if _bad_at(pattern, i))
        yield Bad(
            f"encoding/invalid-utf8-{name}",
            raw,
            ManifestError,
            ("not valid UTF-8", f"byte {offset} ", f"{raw[offset]:#04x}"),
        )
    yield Bad(
        "encoding/utf16-le-with-its-bom",
        b"\xff\xfe" + HEADER.encode("utf-16-le"),
        ManifestError,
        ("not valid UTF-8", "byte 0 ", "0xff"),
    )
    yield Bad(
        "encoding/utf8-bom-bytes",
        b"\xef\xbb\xbf" + HEADER.encode(),
        ManifestError,
        ("byte-order mark", "without BOM"),
    )
    yield Bad(
        "encoding/utf8-bom-as-text",
        "\ufeff" + HEADER,
        ManifestError,
        ("byte-order mark", "without BOM"),
    )
    yield Bad("encoding/bom-only", b"\xef\xbb\xbf", ManifestError, ("byte-order mark",))
    for where, raw in (
        ("at-start", b"\x00" + HEADER.encode()),
        ("in-a-value", HEADER.encode() + b"x-a: a\x00b\n"),
        ("at-end", HEADER.encode() + b"\x00"),
    ):
        yield Bad(
            f"encoding/nul-byte-{where}",
            raw,
            ManifestError,
            ("NUL character", f"offset {raw.index(NUL)}"),
        )
    yield Bad(
        "encoding/nul-in-text",
        HEADER + "x-a: a\x00b\n",
        ManifestError,
        ("NUL character", f"offset {len(HEADER) + 6}"),
    )


def _bad_at(pattern: bytes, i: int) -> bool:
    """Whether UTF-8 decoding of ``pattern`` fails at byte ``i`` (the first bad byte)."""
    try:
        pattern.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start == i
    return False


def control_character_cases() -> Iterator[Bad]:
    # Raw control characters never get past the YAML reader.
    for char in ("\x1b", "\x07", "\x08", "\x0c", "\x7f", "\x9b"):
        yield Bad(
            f"control/raw-{ord(char):#04x}-in-a-plain-scalar",
            HEADER + f"known_entities:\n  - name: a{char}b\n",
            ManifestError,
            (f"#x{ord(char):04x}", "control characters are not allowed"),
        )
    # Escaped in a double-quoted string they load, and the schema check names the field.
    for escape, char in (
        ("\\e", "\x1b"),
        ("\\a", "\x07"),
        ("\\0", "\x00"),
        ("\\b", "\x08"),
        ("\\v", "\x0b"),
        ("\\x7f", "\x7f"),
        ("\\uffff", "\uffff"),
    ):
        yield Bad(
            f"control/escaped-{ord(char):#04x}-in-an-entity-name",
            HEADER + f'known_entities:\n  - name: "a{escape}b"\n',
            SchemaError,
            ("/known_entities/0/name", "control character", repr(char)),
        )
    for where, data, path in (
        (
            "summary",
            manifest(known_entities=[entity(summary="ok\x1b[31mred")]),
            "/known_entities/0/summary",
        ),
        ("tag", manifest(known_entities=[entity(tags=["a", "b\x07"])]), "/known_entities/0/tags/1"),
        (
            "agent-instance",
            manifest(agent={"id": "a", "type": "other", "instance": "x\x1b"}),
            "/agent/instance",
        ),
        (
            "session-cwd",
            manifest(recent_sessions=[session(cwd="/tmp/\x1b]0;pwn\x07")]),
            "/recent_sessions/0/cwd",
        ),
        ("note-text", manifest(notes=[note(text="bell\x07")]), "/notes/0/text"),
        ("extension-value", manifest(**{"x-tool": {"deep": ["ok", "esc\x1b"]}}), "/x-tool/deep/1"),
    ):
        yield Bad(
            f"control/escape-sequence-in-{where}",
            as_json(data),
            SchemaError,
            (path, "control character"),
        )


def duplicate_key_cases() -> Iterator[Bad]:
    yield Bad(
        "duplicate/top-level-agent",
        HEADER + "agent:\n  id: other\n  type: other\n",
        ManifestError,
        ("the key 'agent' twice", "line 6"),
    )
    yield Bad(
        "duplicate/top-level-spec-version",
        HEADER + 'spec_version: "0.2"\n',
        ManifestError,
        ("the key 'spec_version' twice", "line 6"),
    )
    yield Bad(
        "duplicate/name-inside-a-row",
        HEADER + "known_entities:\n  - name: a\n    summary: s\n    name: b\n",
        ManifestError,
        ("the key 'name' twice", "line 9"),
    )
    yield Bad(
        "duplicate/id-inside-agent",
        'spec_version: "0.1"\nagent:\n  id: a\n  type: other\n  id: b\n',
        ManifestError,
        ("the key 'id' twice", "line 5"),
    )
    yield Bad(
        "duplicate/quoted-and-plain-spelling",
        HEADER + '"last_updated": "2026-01-06T10:00:00Z"\n',
        ManifestError,
        ("the key 'last_updated' twice", "line 6"),
    )
    yield Bad(
        "duplicate/in-a-flow-mapping",
        HEADER + "known_entities: [{name: a, name: b}]\n",
        ManifestError,
        ("the key 'name' twice", "line 6"),
    )


def tag_cases() -> Iterator[Bad]:
    tags = {
        "python-object-os-system": (
            "!!python/object:os.system {}",
            "tag:yaml.org,2002:python/object:os.system",
        ),
        "python-object-apply": (
            '!!python/object/apply:os.system ["echo pwned"]',
            "tag:yaml.org,2002:python/object/apply:os.system",
        ),
        "python-object-new": (
            "!!python/object/new:os.system [x]",
            "tag:yaml.org,2002:python/object/new:os.system",
        ),
        "python-name": ("!!python/name:os.system ''", "tag:yaml.org,2002:python/name:os.system"),
        "binary": ("!!binary aGVsbG8=", "tag:yaml.org,2002:binary"),
        "timestamp": ("!!timestamp 2026-01-05", "tag:yaml.org,2002:timestamp"),
        "int": ("!!int 12", "tag:yaml.org,2002:int"),
        "bool": ("!!bool yes", "tag:yaml.org,2002:bool"),
        "null": ("!!null ''", "tag:yaml.org,2002:null"),
        "set": ("!!set {a: null}", "tag:yaml.org,2002:set"),
        "omap": ("!!omap [{a: b}]", "tag:yaml.org,2002:omap"),
        "custom-local": ("!secret value", "!secret"),
        "verbatim": ("!<tag:example.com,2026:x> value", "tag:example.com,2026:x"),
    }
    for name, (text, tag) in tags.items():
        yield Bad(
            f"tag/{name}",
            HEADER + f"x-payload: {text}\n",
            ManifestError,
            (f"YAML tag {tag!r}", "tags are not allowed", "line 6"),
        )
    yield Bad(
        "tag/declared-with-a-percent-tag-directive",
        "%TAG !e! tag:example.com,2026:\n---\n" + HEADER + "x-payload: !e!thing 1\n",
        ManifestError,
        ("YAML tag 'tag:example.com,2026:thing'", "line 8"),
    )


def document_shape_cases() -> Iterator[Bad]:
    yield Bad(
        "document/two-documents",
        HEADER + "---\n" + HEADER,
        ManifestError,
        ("more than one YAML document", "line 6"),
    )
    yield Bad(
        "document/second-document-after-end-marker",
        HEADER + "...\n--- x\n",
        ManifestError,
        ("more than one YAML document", "line 7"),
    )
    yield Bad("document/empty-file", b"", ManifestError, (f"{WHAT} is empty",))
    yield Bad("document/only-whitespace", "  \n\n   \n", ManifestError, (f"{WHAT} is empty",))
    yield Bad("document/only-a-comment", "# nothing here\n", ManifestError, (f"{WHAT} is empty",))
    yield Bad(
        "document/only-a-start-marker", "---\n", SchemaError, ("must be a mapping", "got nothing")
    )
    yield Bad(
        "document/top-level-list", "- a\n- b\n", SchemaError, ("must be a mapping", "got list")
    )
    yield Bad("document/top-level-flow-list", "[]", SchemaError, ("must be a mapping", "got list"))
    yield Bad(
        "document/top-level-scalar", "bourdon\n", SchemaError, ("must be a mapping", "got str")
    )
    yield Bad(
        "document/top-level-null", "null\n", SchemaError, ("must be a mapping", "got nothing")
    )
    yield Bad(
        "document/null-key",
        HEADER + "null: x\n",
        ManifestError,
        ("key that is not a plain string", "line 6"),
    )
    yield Bad(
        "document/sequence-as-key",
        HEADER + "? [a, b]\n: x\n",
        ManifestError,
        ("key that is not a plain string", "line 6"),
    )
    yield Bad(
        "document/tab-indentation",
        'spec_version: "0.1"\nagent:\n\tid: a\n',
        ManifestError,
        ("YAML error at line 3", "cannot start any token"),
    )
    yield Bad(
        "document/unclosed-quote",
        HEADER + 'x-a: "never closed\n',
        ManifestError,
        ("YAML error at line 7", "end of stream"),
    )
    yield Bad(
        "document/surrogate-pair-escape",
        HEADER + 'x-a: "\\ud83d\\ude00"\n',
        ManifestError,
        ("YAML error at line 6", "escape"),
    )


def required_field_cases() -> Iterator[Bad]:
    for key in ("spec_version", "agent", "last_updated"):
        yield Bad(
            f"required/top-level-{key}",
            as_json(manifest(**{key: DROP})),
            SchemaError,
            (f"/: '{key}' is a required property",),
        )
    for key in ("id", "type"):
        agent = {"id": "hostile-test", "type": "other"}
        del agent[key]
        yield Bad(
            f"required/agent-{key}",
            as_json(manifest(agent=agent)),
            SchemaError,
            (f"/agent: '{key}' is a required property",),
        )
    for section, row, key in (
        ("known_entities", entity(name=DROP, summary="s"), "name"),
        ("recent_sessions", session(date=DROP, cwd="/w"), "date"),
        ("known_workstreams", workstream(name=DROP), "name"),
        ("notes", note(text=DROP), "text"),
        ("notes", note(date=DROP), "date"),
    ):
        yield Bad(
            f"required/{section}-row-{key}",
            as_json(manifest(**{section: [row]})),
            SchemaError,
            (f"/{section}/0: '{key}' is a required property",),
        )
    yield Bad(
        "required/source-kind",
        as_json(manifest(known_entities=[entity(source={"name": "reader"})])),
        SchemaError,
        ("/known_entities/0/source: 'kind' is a required property",),
    )


def wrong_type_cases() -> Iterator[Bad]:
    cases: list[tuple[str, dict[str, Any], str, str]] = [
        ("agent-as-string", manifest(agent="hostile-test"), "/agent", "object"),
        ("agent-id-as-list", manifest(agent={"id": ["a"], "type": "other"}), "/agent/id", "string"),
        ("spec-version-null", manifest(spec_version=None), "/spec_version", "string"),
        (
            "last-updated-as-list",
            manifest(last_updated=["2026-01-05T10:00:00Z"]),
            "/last_updated",
            "string",
        ),
        ("entities-as-mapping", manifest(known_entities={"name": "x"}), "/known_entities", "array"),
        ("entities-as-string", manifest(known_entities="bourdon"), "/known_entities", "array"),
        (
            "entity-row-as-string",
            manifest(known_entities=["bourdon"]),
            "/known_entities/0",
            "object",
        ),
        (
            "entity-name-as-list",
            manifest(known_entities=[entity(name=["x"])]),
            "/known_entities/0/name",
            "string",
        ),
        (
            "entity-tags-as-string",
            manifest(known_entities=[entity(tags="infra")]),
            "/known_entities/0/tags",
            "array",
        ),
        (
            "entity-tag-as-list",
            manifest(known_entities=[entity(tags=[["a"]])]),
            "/known_entities/0/tags/0",
            "string",
        ),
        (
            "summary-as-mapping",
            manifest(known_entities=[entity(summary={"a": "b"})]),
            "/known_entities/0/summary",
            "string",
        ),
        (
            "capabilities-as-mapping",
            manifest(capabilities={"read": "yes"}),
            "/capabilities",
            "array",
        ),
        ("policy-as-list", manifest(visibility_policy=["team"]), "/visibility_policy", "object"),
        (
            "key-action-as-mapping",
            manifest(recent_sessions=[session(key_actions=[{"a": "b"}])]),
            "/recent_sessions/0/key_actions/0",
            "string",
        ),
        ("note-text-null", manifest(notes=[note(text=None)]), "/notes/0/text", "string"),
    ]
    for name, data, path, kind in cases:
        yield Bad(
            f"type/{name}", as_json(data), SchemaError, (path + ":", f"is not of type '{kind}'")
        )


def enum_cases() -> Iterator[Bad]:
    cases = [
        ("agent-type", manifest(agent={"id": "a", "type": "robot"}), "/agent/type", "'robot'"),
        (
            "agent-type-wrong-case",
            manifest(agent={"id": "a", "type": "Code-Assistant"}),
            "/agent/type",
            "'Code-Assistant'",
        ),
        ("agent-type-empty", manifest(agent={"id": "a", "type": ""}), "/agent/type", "''"),
        (
            "entity-visibility",
            manifest(known_entities=[entity(visibility="secret")]),
            "/known_entities/0/visibility",
            "'secret'",
        ),
        (
            "policy-default",
            manifest(visibility_policy={"default": "everyone"}),
            "/visibility_policy/default",
            "'everyone'",
        ),
        (
            "workstream-status",
            manifest(known_workstreams=[workstream(status="finished")]),
            "/known_workstreams/0/status",
            "'finished'",
        ),
        (
            "source-kind",
            manifest(notes=[note(source={"kind": "human", "name": "x"})]),
            "/notes/0/source/kind",
            "'human'",
        ),
    ]
    for name, data, path, _value in cases:
        # The value is never quoted (it may be private): the path and the rule say what is wrong.
        yield Bad(f"enum/{name}", as_json(data), SchemaError, (path + ":", "is not one of"))


def date_cases() -> Iterator[Bad]:
    for value, reason in (
        ("2026-02-31", "day is out of range"),
        ("2025-02-29", "day is out of range"),
        ("2026-13-01", "month must be in 1..12"),
        ("yesterday", "is not a 'date'"),
        ("2026-1-5", "is not a 'date'"),
        ("26-01-05", "is not a 'date'"),
        ("2026-01-05T10:00:00Z", "is not a 'date'"),
        ("2026-01-05\n", "is not a 'date'"),
        ("\uff12\uff10\uff12\uff16-01-05", "is not a 'date'"),
    ):
        yield Bad(
            f"date/last-touched-{ascii(value).strip(chr(39))}",
            as_json(manifest(known_entities=[entity(last_touched=value)])),
            SchemaError,
            ("/known_entities/0/last_touched:", reason),
        )
    for section, row, path in (
        ("recent_sessions", session(date="2026-02-31"), "/recent_sessions/0/date"),
        ("notes", note(date="yesterday"), "/notes/0/date"),
        ("known_workstreams", workstream(started="2026-02-30"), "/known_workstreams/0/started"),
        ("known_entities", entity(valid_to="2026-04-31"), "/known_entities/0/valid_to"),
    ):
        yield Bad(
            f"date/{path.strip('/').replace('/', '-')}",
            as_json(manifest(**{section: [row]})),
            SchemaError,
            (path + ":", "is not a 'date'"),
        )
    for value, reason in (
        ("2026-01-05T10:00:00", "needs a time zone offset"),
        ("2026-01-05", "needs a 'T'"),
        ("now", "needs a 'T'"),
        ("yesterday", "needs a time zone offset"),
        ("2026-01-05T10:00:00+2", "needs a time zone offset"),
        ("2026-01-05T25:00:00Z", "hour must be in 0..23"),
        ("2026-02-30T10:00:00Z", "day is out of range for month"),
        ("2026-01-05T10:00:00Z\n", "use RFC 3339"),
        # RFC 3339 (the schema's "date-time") has no basic or week-date form and needs seconds.
        ("20260105T100000Z", "use RFC 3339"),
        ("2026-W02-1T10:00:00Z", "use RFC 3339"),
        ("2026-01-05T10:00Z", "use RFC 3339"),
        ("2026-01-05 10:00:00Z", "needs a 'T'"),
        ("\uff12\uff10\uff12\uff16-01-05T10:00:00Z", "use RFC 3339"),
    ):
        yield Bad(
            f"date/last-updated-{ascii(value).strip(chr(39))}",
            as_json(manifest(last_updated=value)),
            SchemaError,
            ("/last_updated:", "is not a valid date-time", reason),
        )
    for value in ("one", "1", "0.1.0", "v0.1"):
        yield Bad(
            f"version/spec-version-{value}",
            as_json(manifest(spec_version=value)),
            SchemaError,
            ("/spec_version:", "does not match"),
        )


def count_limit_cases() -> Iterator[Bad]:
    yield Bad(
        "count/1001-entities",
        as_json(manifest(known_entities=[entity(name=f"e{i}") for i in range(1001)])),
        SchemaError,  # a limit the schema states names the field (errors.py)
        ("/known_entities:", "1001 rows", "limit is 1000"),
    )
    yield Bad(
        "count/501-sessions",
        as_json(manifest(recent_sessions=[session(session_id=f"s{i}") for i in range(501)])),
        SchemaError,
        ("/recent_sessions:", "501 rows", "limit is 500"),
    )
    lists = [
        ("key-actions", "recent_sessions", "key_actions", 10),
        ("aliases", "known_entities", "aliases", 16),
        ("tags", "known_entities", "tags", 32),
        ("files-touched", "recent_sessions", "files_touched", 50),
        ("note-related-entities", "notes", "related_entities", 16),
        ("workstream-related-entities", "known_workstreams", "related_entities", 32),
    ]
    makers = {
        "recent_sessions": session,
        "known_entities": entity,
        "notes": note,
        "known_workstreams": workstream,
    }
    for name, section, key, limit in lists:
        row = makers[section](**{key: [f"item {i}" for i in range(limit + 1)]})
        yield Bad(
            f"count/{limit + 1}-{name}",
            as_json(manifest(**{section: [row]})),
            SchemaError,
            (f"/{section}/0/{key}:", f"has {limit + 1} items; the limit is {limit}"),
        )
    for key, limit in (("capabilities", 64),):
        yield Bad(
            f"count/{limit + 1}-{key}",
            as_json(manifest(**{key: [f"c{i}" for i in range(limit + 1)]})),
            SchemaError,
            (f"/{key}:", f"has {limit + 1} items; the limit is {limit}"),
        )
    yield Bad(
        "count/33-private-tags",
        as_json(manifest(visibility_policy={"private_tags": [f"p{i}" for i in range(33)]})),
        SchemaError,
        ("/visibility_policy/private_tags:", "has 33 items; the limit is 32"),
    )


def length_limit_cases() -> Iterator[Bad]:
    cases = [
        (
            "entity-name",
            manifest(known_entities=[entity(name="n" * 129)]),
            "/known_entities/0/name",
            128,
        ),
        (
            "summary",
            manifest(known_entities=[entity(summary="s" * 2001)]),
            "/known_entities/0/summary",
            2000,
        ),
        ("note", manifest(notes=[note(text="t" * 4001)]), "/notes/0/text", 4000),
        ("tag", manifest(known_entities=[entity(tags=["t" * 65])]), "/known_entities/0/tags/0", 64),
        (
            "cwd",
            manifest(recent_sessions=[session(cwd="/" + "d" * 512)]),
            "/recent_sessions/0/cwd",
            512,
        ),
        (
            "role-narrative",
            manifest(agent={"id": "a", "type": "other", "role_narrative": "r" * 501}),
            "/agent/role_narrative",
            500,
        ),
        (
            "file-touched",
            manifest(recent_sessions=[session(files_touched=["f" * 1025])]),
            "/recent_sessions/0/files_touched/0",
            1024,
        ),
    ]
    for name, data, path, limit in cases:
        yield Bad(
            f"length/{limit + 1}-char-{name}",
            as_json(data),
            SchemaError,
            (path + ":", f"is {limit + 1:,} characters long; the limit is {limit:,}"),
        )
    for name, data, path in (
        ("empty-entity-name", manifest(known_entities=[entity(name="")]), "/known_entities/0/name"),
        ("empty-tag", manifest(known_entities=[entity(tags=[""])]), "/known_entities/0/tags/0"),
        ("empty-note-text", manifest(notes=[note(text="")]), "/notes/0/text"),
    ):
        yield Bad(f"length/{name}", as_json(data), SchemaError, (path + ":", "should be non-empty"))


def unknown_key_cases() -> Iterator[Bad]:
    cases = [
        ("top-level", manifest(owner="mallory"), "/:", "'owner'"),
        (
            "in-agent",
            manifest(agent={"id": "a", "type": "other", "email": "x@y"}),
            "/agent:",
            "'email'",
        ),
        (
            "in-entity",
            manifest(known_entities=[entity(owner="m")]),
            "/known_entities/0:",
            "'owner'",
        ),
        (
            "in-session",
            manifest(recent_sessions=[session(command="rm -rf /")]),
            "/recent_sessions/0:",
            "'command'",
        ),
        (
            "in-source",
            manifest(notes=[note(source={"kind": "commit", "name": "x", "pid": "1"})]),
            "/notes/0/source:",
            "'pid'",
        ),
        (
            "in-policy",
            manifest(visibility_policy={"everyone": "yes"}),
            "/visibility_policy:",
            "'everyone'",
        ),
        ("upper-case-extension", manifest(**{"X-tool": "x"}), "/:", "'X-tool'"),
        ("bare-extension-prefix", manifest(**{"x-": "x"}), "/:", "'x-'"),
        ("extension-with-a-slash", manifest(**{"x-a/b": "x"}), "/:", "'x-a/b'"),
        # "$" in the schema's pattern also matches before a final newline; the agent id pattern
        # guards against that with (?!\n), the x- extension patterns do not.
        ("extension-with-a-trailing-newline", manifest(**{"x-a\n": "x"}), "/:", "'x-a\\n'"),
        (
            "row-extension-with-a-trailing-newline",
            manifest(known_entities=[entity(**{"x-a\n": "x"})]),
            "/known_entities/0:",
            "'x-a\\n'",
        ),
    ]
    for name, data, path, shown in cases:
        why = (
            "the x- patternProperties '^x-[a-z0-9_-]+$' match before a final newline; such a key "
            "then makes yamlio.dump write YAML that does not load"
            if "newline" in name
            else ""
        )
        yield Bad(f"unknown-key/{name}", as_json(data), SchemaError, (path, shown), why=why)


BAD_AGENT_IDS: list[tuple[str, Any, str]] = [
    ("parent-traversal", "../x", "is not a slug"),
    ("trailing-newline", "abc\n", "is not a slug"),
    ("leading-newline", "\nabc", "is not a slug"),
    ("carriage-return", "agent\r", "is not a slug"),
    ("slash", "a/b", "is not a slug"),
    ("backslash", "a\\b", "is not a slug"),
    ("colon", "c:x", "is not a slug"),
    ("upper-case", "A", "is not a slug"),
    ("mixed-case", "Agent", "is not a slug"),
    ("leading-dash", "-x", "is not a slug"),
    ("leading-underscore", "_x", "is not a slug"),
    ("empty", "", "is empty"),
    ("65-chars", "a" * 65, "is 65 characters; the limit is 64"),
    ("300-chars", "a" * 300, "is 300 characters; the limit is 64"),
    ("fullwidth", "\uff41\uff47\uff45\uff4e\uff54", "non-ASCII"),
    ("cyrillic-a", "\u0430gent", "non-ASCII"),
    ("zero-width-space", "agent\u200b", "non-ASCII"),
    ("accented", "agent\u00e9", "non-ASCII"),
    ("windows-con", "con", "reserved device name"),
    ("windows-nul", "nul", "reserved device name"),
    ("windows-com1", "com1", "reserved device name"),
    ("windows-lpt9", "lpt9", "reserved device name"),
    ("windows-prn", "prn", "reserved device name"),
    ("windows-aux", "aux", "reserved device name"),
    ("leading-space", " agent", "is not a slug"),
    ("trailing-space", "agent ", "is not a slug"),
    ("inner-space", "my agent", "is not a slug"),
    ("tab", "a\tb", "is not a slug"),
    ("nul", "a\x00b", "is not a slug"),
    ("double-dot", "a..b", "is not a slug"),
    ("single-dot", "a.b", "is not a slug"),
    ("dot", ".", "is not a slug"),
    ("dot-dot", "..", "is not a slug"),
    ("star", "*", "is not a slug"),
]
NON_STRING_AGENT_IDS: list[tuple[str, Any, str]] = [
    ("int", 5, "got int"),
    ("none", None, "got NoneType"),
    ("bytes", b"agent", "got bytes"),
    ("list", ["agent"], "got list"),
]
GOOD_AGENT_IDS = [
    "a",
    "0",
    "a" * 64,
    "claude-code",
    "a_b",
    "0-9",
    "com10",
    "con1",
    "nul-x",
    "lpt10",
    "x--y__z",
]


def manifest_agent_id_cases() -> Iterator[Bad]:
    for name, value, reason in BAD_AGENT_IDS:
        shown = (ascii(value[:77]),) if value else ()
        yield Bad(
            f"agent-id/{name}",
            as_json(agent_with(value)),
            SchemaError,
            ("/agent/id: agent id", *shown, reason),
        )


def bad_cases() -> list[Bad]:
    generators = (
        alias_cases,
        nesting_cases,
        size_cases,
        encoding_cases,
        control_character_cases,
        duplicate_key_cases,
        tag_cases,
        document_shape_cases,
        required_field_cases,
        wrong_type_cases,
        enum_cases,
        date_cases,
        count_limit_cases,
        length_limit_cases,
        unknown_key_cases,
        manifest_agent_id_cases,
    )
    cases = [case for generate in generators for case in generate()]
    ids = [case.id for case in cases]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    return cases


# ---------------------------------------------------------------------------------------------
# Input that must be accepted: the boundaries of every limit and YAML that only looks typed


def good_cases() -> list[Good]:
    cases = [
        Good("accept/minimal-manifest", HEADER, {("agent", "id"): "hostile-test"}),
        Good(
            "accept/64-char-agent-id",
            as_json(agent_with("a" * 64)),
            {("agent", "id"): "a" * 64},
        ),
        Good(
            "accept/exactly-1000-entities",
            as_json(manifest(known_entities=[entity(name=f"e{i}") for i in range(1000)])),
            {("known_entities", 999, "name"): "e999"},
        ),
        Good(
            "accept/10-key-actions",
            as_json(manifest(recent_sessions=[session(key_actions=[f"a{i}" for i in range(10)])])),
            {("recent_sessions", 0, "key_actions", 9): "a9"},
        ),
        Good(
            "accept/128-char-entity-name",
            as_json(manifest(known_entities=[entity(name="n" * 128)])),
            {("known_entities", 0, "name"): "n" * 128},
        ),
        Good(
            "accept/2000-char-summary",
            as_json(manifest(known_entities=[entity(summary="s" * 2000)])),
            {("known_entities", 0, "summary"): "s" * 2000},
        ),
        Good(
            "accept/4000-char-note",
            as_json(manifest(notes=[note(text="t" * 4000)])),
            {("notes", 0, "text"): "t" * 4000},
        ),
        Good(
            "accept/plain-spec-version-0.1-is-the-string-0.1",
            HEADER.replace('"0.1"', "0.1"),
            {("spec_version",): "0.1"},
        ),
        Good(
            "accept/plain-spec-version-10.20-keeps-its-zero",
            HEADER.replace('"0.1"', "10.20"),
            {("spec_version",): "10.20"},
        ),
        Good(
            "accept/yaml-1.1-keywords-and-numbers-stay-strings",
            HEADER
            + "known_entities:\n  - name: no\n    aliases: [yes, on, off, 'y', n, true, False]\n"
            + "    tags: [0123, 0x1F, 1e3, .inf, .NaN, 1_000, '12:30', 0o17]\n    summary: 0.1\n",
            {
                ("known_entities", 0, "name"): "no",
                ("known_entities", 0, "aliases"): ["yes", "on", "off", "y", "n", "true", "False"],
                ("known_entities", 0, "tags"): [
                    "0123",
                    "0x1F",
                    "1e3",
                    ".inf",
                    ".NaN",
                    "1_000",
                    "12:30",
                    "0o17",
                ],
                ("known_entities", 0, "summary"): "0.1",
            },
        ),
        Good(
            "accept/plain-dates-stay-strings",
            HEADER.replace('"2026-01-05T10:00:00Z"', "2026-01-05T10:00:00Z")
            + "recent_sessions:\n  - date: 2026-01-05\n",
            {
                ("last_updated",): "2026-01-05T10:00:00Z",
                ("recent_sessions", 0, "date"): "2026-01-05",
            },
        ),
        Good(
            "accept/session-without-a-date-uses-empty-string",
            HEADER + 'recent_sessions:\n  - date: ""\n',
            {("recent_sessions", 0, "date"): ""},
        ),
        Good(
            "accept/leap-day",
            as_json(manifest(known_entities=[entity(last_touched="2024-02-29")])),
            {("known_entities", 0, "last_touched"): "2024-02-29"},
        ),
        Good(
            "accept/last-updated-with-offset",
            as_json(manifest(last_updated="2026-01-05T10:00:00+02:00")),
            {("last_updated",): "2026-01-05T10:00:00+02:00"},
        ),
        Good(
            "accept/str-and-non-specific-tags",
            HEADER + "known_entities:\n  - name: !!str 0123\n    summary: ! 12\n",
            {("known_entities", 0, "name"): "0123", ("known_entities", 0, "summary"): "12"},
        ),
        Good(
            "accept/extensions-everywhere",
            as_json(
                manifest(
                    agent={"id": "a", "type": "other", "x-host": "box"},
                    known_entities=[entity(**{"x-score": "7", "x-deep": {"k": ["v"]}})],
                    **{"x-tool": {"version": "1"}},
                )
            ),
            {("x-tool", "version"): "1", ("known_entities", 0, "x-deep", "k", 0): "v"},
        ),
        Good(
            "accept/32-levels-the-depth-limit",
            HEADER + "x-deep: " + "[" * 31 + "]" * 31 + "\n",
            {},
        ),
        Good(
            "accept/tab-newline-and-unicode-in-text",
            as_json(
                manifest(
                    known_entities=[
                        entity(name="\uff22ourdon \u0431", summary="a\tb\r\nc \u2028 \u00e9")
                    ]
                )
            ),
            {("known_entities", 0, "summary"): "a\tb\r\nc \u2028 \u00e9"},
        ),
        Good(
            "accept/emoji-in-block-yaml",
            HEADER + "known_entities:\n  - name: bourdon \U0001f41d\n",
            {("known_entities", 0, "name"): "bourdon \U0001f41d"},
        ),
        Good(
            "accept/a-string-of-exactly-the-string-limit",
            HEADER + "x-blob: " + "x" * yamlio.MAX_STRING + "\n",
            {},
            heavy=True,
        ),
        Good(
            # the densest valid input within the size cap: ~700,000 one-character list items
            "accept/4-MiB-of-tiny-list-items-in-bounded-time",
            HEADER + "x-many:\n" + "  - a\n" * ((yamlio.MAX_BYTES - len(HEADER) - 8) // 6),
            {},
            heavy=True,
        ),
        Good(
            "accept/exactly-4-MiB",
            HEADER.encode() + b"#" * (yamlio.MAX_BYTES - len(HEADER)),
            {},
            heavy=True,
        ),
    ]
    cases += [
        Good(
            f"accept/agent-id-{value[:16]}-len{len(value)}",
            as_json(agent_with(value)),
            {("agent", "id"): value},
        )
        for value in GOOD_AGENT_IDS
    ]
    return cases


BAD = bad_cases()
GOOD = good_cases()


def _raw_bytes(raw: bytes | str) -> bytes:
    return raw if isinstance(raw, bytes) else raw.encode("utf-8")


def _dig(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def check_refusal(case: Bad, error: str, message: str) -> None:
    assert error == case.error.__name__, (
        f"{case.id}: expected {case.error.__name__}, got {error}: {message}. {case.why}"
    )
    assert message.startswith(WHAT), f"{case.id}: the message does not name the input: {message!r}"
    assert len(message.splitlines()) == 1, f"{case.id}: the message is not one line: {message!r}"
    for needle in case.needles:
        assert needle in message, (
            f"{case.id}: message {message!r} does not say {needle!r}. {case.why}"
        )


# ---------------------------------------------------------------------------------------------
# In-process cases


@pytest.mark.parametrize("case", [c for c in BAD if not c.heavy], ids=lambda c: c.id)
def test_hostile_manifest_is_refused_with_a_message_that_names_the_problem(case: Bad) -> None:
    try:
        load_manifest(case.raw, what=WHAT)
    except BourdonError as exc:
        check_refusal(case, type(exc).__name__, exc.message)
    else:
        pytest.fail(
            f"{case.id}: accepted; expected {case.error.__name__} saying {case.needles}. {case.why}"
        )


@pytest.mark.parametrize("case", [c for c in GOOD if not c.heavy], ids=lambda c: c.id)
def test_boundary_manifest_is_accepted_with_values_as_written(case: Good) -> None:
    loaded = load_manifest(case.raw, what=WHAT)
    for path, value in case.expect.items():
        assert _dig(loaded.data, path) == value, f"{case.id}: {path} is {_dig(loaded.data, path)!r}"


def test_the_corpus_holds_at_least_a_hundred_distinct_cases() -> None:
    total = (
        len(BAD) + len(GOOD) + len(BAD_AGENT_IDS) + len(NON_STRING_AGENT_IDS) + len(GOOD_AGENT_IDS)
    )
    assert total >= 100, total


def test_schema_errors_list_every_problem_with_the_input_name() -> None:
    data = manifest(
        agent={"id": "Bad Id", "type": "robot"},
        known_entities=[entity(name=""), entity(last_touched="2026-02-31")],
    )
    with pytest.raises(SchemaError) as caught:
        load_manifest(as_json(data), what=WHAT)
    problems = caught.value.problems
    assert all(p.startswith(f"{WHAT}: /") for p in problems), problems
    assert problems[0].startswith(f"{WHAT}: /agent/id: agent id 'Bad Id' is not a slug"), problems
    joined = "\n".join(problems)
    for path in ("/agent/type", "/known_entities/0/name", "/known_entities/1/last_touched"):
        assert path in joined, joined
    assert caught.value.message.endswith(f"(and {len(problems) - 1} more)"), (
        "load_manifest drops the '(and N more)' that validate() puts on the message: "
        + caught.value.message
    )


# ---------------------------------------------------------------------------------------------
# Agent ids: the one rule every surface (CLI arguments, MCP requests, manifests) goes through


@pytest.mark.parametrize(
    ("value", "reason"), [(v, r) for _, v, r in BAD_AGENT_IDS], ids=[n for n, _, _ in BAD_AGENT_IDS]
)
def test_bad_agent_id_is_refused_showing_the_id_with_ascii_escapes(value: str, reason: str) -> None:
    with pytest.raises(InputError) as caught:
        check_agent_id(value)
    assert type(caught.value) is InputError, type(caught.value)
    message = caught.value.message
    assert reason in message, message
    assert len(message.splitlines()) == 1, message
    assert message.isascii(), message
    if value:
        shown = ascii(value) if len(value) <= 80 else ascii(value[:77]) + "..."
        assert shown in message, f"{message!r} does not show {shown!r}"
        assert len(message) < 200, message


def test_agent_id_with_a_newline_is_shown_escaped() -> None:
    with pytest.raises(InputError) as caught:
        check_agent_id("abc\n")
    assert "'abc\\n'" in caught.value.message, caught.value.message
    assert "\n" not in caught.value.message


def test_check_agent_id_names_what_it_checks() -> None:
    with pytest.raises(InputError) as caught:
        check_agent_id("../etc", what="--agent")
    assert caught.value.message.startswith("--agent '../etc' is not a slug"), caught.value.message


@pytest.mark.parametrize(
    ("value", "reason"),
    [(v, r) for _, v, r in NON_STRING_AGENT_IDS],
    ids=[n for n, _, _ in NON_STRING_AGENT_IDS],
)
def test_non_string_agent_id_is_refused_naming_its_type(value: Any, reason: str) -> None:
    with pytest.raises(InputError) as caught:
        check_agent_id(value)
    assert type(caught.value) is InputError
    assert caught.value.message == f"agent id must be a string, {reason}"


@pytest.mark.parametrize("value", GOOD_AGENT_IDS)
def test_good_agent_id_is_returned_unchanged(value: str) -> None:
    assert check_agent_id(value) == value


@pytest.mark.parametrize(
    "value", [v for _, v, _ in BAD_AGENT_IDS], ids=[n for n, _, _ in BAD_AGENT_IDS]
)
def test_manifest_agent_id_errors_reuse_the_check_agent_id_wording(value: str) -> None:
    with pytest.raises(InputError) as expected:
        check_agent_id(value)
    with pytest.raises(SchemaError) as caught:
        load_manifest(as_json(agent_with(value)), what=WHAT)
    assert caught.value.problems[0] == f"{WHAT}: /agent/id: {expected.value.message}"


CLI_BAD_IDS = [
    "abc\n",
    "../x",
    "\uff41\uff47\uff45\uff4e\uff54",
    "\u0430gent",
    "con",
    "A",
    "a" * 65,
    "",
]


@pytest.fixture(scope="module")
def cli_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli") / "lib"
    Library.init(root).close()
    return root


@pytest.mark.parametrize(
    "value", CLI_BAD_IDS, ids=[ascii(v)[1:-1][:20] or "empty" for v in CLI_BAD_IDS]
)
@pytest.mark.parametrize("command", ["history", "show"])
def test_cli_refuses_a_bad_agent_id_with_the_check_agent_id_message(
    cli_library: Path, capsys: pytest.CaptureFixture[str], command: str, value: str
) -> None:
    with pytest.raises(InputError) as expected:
        check_agent_id(value)
    code = cli.main(["--library", str(cli_library), command, value])
    err = capsys.readouterr().err
    assert code == InputError.exit_code, err
    assert err == f"bourdon: {expected.value.message}\n"


# ---------------------------------------------------------------------------------------------
# Cases that could take the interpreter down: one child process parses them all

_RUNNER = r"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # a bomb that expands fails fast
from bourdon.errors import BourdonError
from bourdon.formats.schema import load_manifest
what, paths = sys.argv[1], sys.argv[2:]
for path in paths:
    with open(path, "rb") as handle:
        raw = handle.read()
    start = time.perf_counter()
    try:
        load_manifest(raw, what=what)
        error, message = None, ""
    except BourdonError as exc:
        error, message = type(exc).__name__, exc.message
    except Exception as exc:  # RecursionError, MemoryError, anything that is not ours
        error, message = "UNEXPECTED " + type(exc).__name__, str(exc)[:500]
    seconds = time.perf_counter() - start
    print(json.dumps({"path": path, "error": error, "message": message, "seconds": seconds}), flush=True)
"""
HEAVY: list[Bad | Good] = [c for c in (*BAD, *GOOD) if c.heavy]
CASE_SECONDS = 10.0


@dataclass
class ChildRun:
    returncode: int
    stderr: str
    results: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def child_run(tmp_path_factory: pytest.TempPathFactory) -> ChildRun:
    folder = tmp_path_factory.mktemp("hostile")
    paths: dict[str, str] = {}
    for i, case in enumerate(HEAVY):
        path = folder / f"case-{i:03d}.yaml"
        path.write_bytes(_raw_bytes(case.raw))
        paths[str(path)] = case.id
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", _RUNNER, WHAT, *paths],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=env,
        check=False,
    )
    results = {}
    for line in done.stdout.splitlines():
        record = json.loads(line)
        results[paths[record["path"]]] = record
    return ChildRun(done.returncode, done.stderr, results)


def test_the_parser_process_survives_every_crash_attempt(child_run: ChildRun) -> None:
    assert child_run.returncode == 0, (
        f"the parsing process died with exit code {child_run.returncode}: {child_run.stderr[-2000:]}"
    )
    missing = [case.id for case in HEAVY if case.id not in child_run.results]
    assert not missing, f"no result for {missing}"


def _heavy_result(child_run: ChildRun, case: Bad | Good) -> dict[str, Any]:
    record = child_run.results.get(case.id)
    assert record is not None, (
        f"{case.id}: no result; the child exited {child_run.returncode}: {child_run.stderr[-2000:]}"
    )
    assert not str(record["error"]).startswith("UNEXPECTED"), f"{case.id}: {record}"
    assert record["seconds"] < CASE_SECONDS, f"{case.id} took {record['seconds']:.1f} s"
    return record


@pytest.mark.parametrize("case", [c for c in HEAVY if isinstance(c, Bad)], ids=lambda c: c.id)
def test_crash_attempt_is_refused_quickly_without_harming_the_process(
    child_run: ChildRun, case: Bad
) -> None:
    record = _heavy_result(child_run, case)
    check_refusal(case, str(record["error"]), record["message"])


@pytest.mark.parametrize("case", [c for c in HEAVY if isinstance(c, Good)], ids=lambda c: c.id)
def test_input_at_the_size_limits_is_accepted(child_run: ChildRun, case: Good) -> None:
    record = _heavy_result(child_run, case)
    assert record["error"] is None, f"{case.id}: {record['error']}: {record['message']}"
