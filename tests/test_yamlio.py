"""Round trip and stability of bourdon's YAML reader and writer (``bourdon.yamlio``).

Properties (hypothesis): what ``dump`` writes, ``load`` reads back as the same value, for valid
manifests and for any JSON-like mapping of strings, lists and mappings; PyYAML, a YAML 1.1
reader, reads the same value too; the bytes depend only on the value, never on dict insertion
order; the digest ignores key order and ``last_updated``. Example tests pin the emitted form.
"""

from __future__ import annotations

import os
import random
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from bourdon.digest import digest
from bourdon.errors import BourdonError, SchemaError
from bourdon.formats import yamlio
from bourdon.formats.schema import validate
from bourdon.merge.twoway import merge
from bourdon.model import AGENT_TYPES

# Shrinking a failure of these large strategies takes minutes, so by default a failure is
# reported as first found; BOURDON_HYPOTHESIS_SHRINK=1 shrinks it to a minimal example.
_SHRINK = os.environ.get("BOURDON_HYPOTHESIS_SHRINK") == "1"
SETTINGS = settings(
    max_examples=300,
    deadline=None,
    database=None,
    derandomize=True,  # the same examples on every run: a failure is never a matter of luck
    phases=tuple(Phase) if _SHRINK else (Phase.explicit, Phase.generate),
    report_multiple_bugs=_SHRINK,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ---------------------------------------------------------------------------------------------
# Strategies

# Characters no manifest can hold: NUL and the other C0 controls except tab, LF and CR.
# (st.characters(codec="utf-8") already leaves out lone surrogates.)
C0_EXCLUDED = [chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"]
# What manifest text additionally may not contain (checks.BAD_TEXT): DEL and two non-characters.
MANIFEST_EXCLUDED = [*C0_EXCLUDED, "\x7f", "\ufffe", "\uffff"]

# fmt: off
YAML_PIECES = [
    # words a YAML 1.1 reader resolves to something other than the string
    "no", "No", "NO", "yes", "y", "n", "on", "off", "true", "False", "null", "Null", "~",
    "0123", "0x1F", "0o17", "1e3", "1_000", ".inf", ".nan", "12:30", "0.1", "-1", "+1",
    "2026-01-05", "2026-01-05T10:00:00Z", "<<", "=",
    # indicators that mean something at the start of a scalar or anywhere in it
    "- x", "-", "? y", "?", ": ", ":", "&a", "*b", "!t", "!!str", "|", ">", "#", " #c", "%", "@",
    "`", "'", '"', "\\", ",", "[", "]", "{", "}", "---", "...",
    # white space and line breaks of every kind, and characters that need escaping
    " ", "  ", "\n", "\n\n", "\t", "\r", "\r\n", "\x85", "\u2028", "\u2029", "\ufeff", "\xa0",
    "\x7f", "\x9f", "\ufffe", "\uffff", "\u3000",
    # ordinary text
    "a", "bourdon", "Straße", "é", "\u0301", "名前", "\U0001f41d", "x-y", "_",
]
# fmt: on


def texts(
    alphabet: st.SearchStrategy[str], pieces: list[str], max_size: int = 40
) -> st.SearchStrategy[str]:
    """Text from a broad alphabet, YAML-significant pieces, and mixtures of the two."""
    mixed = st.lists(st.one_of(st.sampled_from(pieces), st.text(alphabet, max_size=4)), max_size=6)
    return st.one_of(
        st.text(alphabet, max_size=max_size),
        st.sampled_from(pieces),
        mixed.map(lambda parts: "".join(parts)[:max_size]),
    )


any_char = st.characters(codec="utf-8", exclude_characters=C0_EXCLUDED)
any_text = texts(any_char, YAML_PIECES)

json_like = st.recursive(
    st.one_of(st.none(), any_text),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(any_text, children, max_size=4)
    ),
    max_leaves=15,
)
json_like_mappings = st.dictionaries(any_text, json_like, max_size=6)

manifest_char = st.characters(codec="utf-8", exclude_characters=MANIFEST_EXCLUDED)
manifest_pieces = [p for p in YAML_PIECES if not any(c in MANIFEST_EXCLUDED for c in p)]


def mtext(min_size: int = 0, max_size: int = 40) -> st.SearchStrategy[str]:
    strategy = texts(manifest_char, manifest_pieces, max_size)
    return strategy if min_size == 0 else strategy.map(lambda s: s or "x")


def mlist(min_item: int, max_item: int, max_items: int) -> st.SearchStrategy[list[str]]:
    return st.lists(mtext(min_item, max_item), max_size=max_items)


dates = st.dates().map(lambda d: d.isoformat())
offsets = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
date_times = st.builds(
    lambda dt, tz: dt.replace(tzinfo=tz).isoformat(),
    st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2100, 1, 1)),
    offsets,
)
visibilities = st.sampled_from(["public", "team", "private"])
agent_ids = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,63}", fullmatch=True).filter(
    lambda s: s not in {"con", "prn", "aux", "nul"} and not re.fullmatch(r"(com|lpt)[0-9]", s)
)
extension_keys = st.from_regex(r"x-[a-z0-9_-]{1,12}", fullmatch=True)
extension_values = st.recursive(
    mtext(),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(mtext(1, 12), children, max_size=3)
    ),
    max_leaves=6,
)
sources = st.fixed_dictionaries(
    {"kind": st.sampled_from(["reader", "commit", "sync", "sample"]), "name": mtext(1, 40)},
    optional={"machine": mtext(0, 40)},
)


def row(required: dict[str, Any], optional: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    common = {"tags": mlist(1, 64, 5), "visibility": visibilities, "source": sources}
    base = st.fixed_dictionaries(required, optional={**optional, **common})
    extra = st.dictionaries(extension_keys, extension_values, max_size=2)
    return st.builds(lambda r, x: {**r, **x}, base, extra)


entities = row(
    {"name": mtext(1, 128)},
    {
        "type": mtext(0, 64),
        "aliases": mlist(1, 128, 4),
        "summary": mtext(0, 200),
        "last_touched": dates,
        "valid_from": dates,
        "valid_to": dates,
    },
)
sessions = row(
    {"date": st.one_of(dates, st.just(""))},
    {
        "session_id": mtext(0, 128),
        "cwd": mtext(0, 200),
        "project_focus": mlist(1, 256, 4),
        "key_actions": mlist(1, 256, 10),
        "files_touched": mlist(1, 200, 5),
    },
)
workstreams = row(
    {"name": mtext(1, 128)},
    {
        "status": st.sampled_from(["active", "paused", "done", "archived"]),
        "summary": mtext(0, 200),
        "started": dates,
        "last_touched": dates,
        "related_entities": mlist(1, 128, 5),
    },
)
notes = row({"date": dates, "text": mtext(1, 200)}, {"related_entities": mlist(1, 128, 5)})

manifests = st.builds(
    lambda core, extra: {**core, **extra},
    st.fixed_dictionaries(
        {
            "spec_version": st.one_of(
                st.just("0.1"), st.from_regex(r"[0-9]{1,3}\.[0-9]{1,3}", fullmatch=True)
            ),
            "agent": st.fixed_dictionaries(
                {"id": agent_ids, "type": st.sampled_from(AGENT_TYPES)},
                optional={"instance": mtext(0, 128), "role_narrative": mtext(0, 500)},
            ),
            "last_updated": date_times,
        },
        optional={
            "capabilities": mlist(1, 128, 6),
            "visibility_policy": st.fixed_dictionaries(
                {},
                optional={
                    "default": visibilities,
                    "private_tags": mlist(1, 64, 4),
                    "team_tags": mlist(1, 64, 4),
                },
            ),
            "known_entities": st.lists(entities, max_size=3),
            "recent_sessions": st.lists(sessions, max_size=3),
            "known_workstreams": st.lists(workstreams, max_size=2),
            "notes": st.lists(notes, max_size=2),
        },
    ),
    st.dictionaries(extension_keys, extension_values, max_size=2),
)


seeds = st.integers(0, 2**32 - 1)  # a seeded random.Random shuffles keys cheaply


def shuffled(value: Any, rnd: random.Random) -> Any:
    """The same value with every mapping rebuilt in a random key order."""
    if isinstance(value, dict):
        keys = list(value)
        rnd.shuffle(keys)
        return {key: shuffled(value[key], rnd) for key in keys}
    if isinstance(value, list):
        return [shuffled(item, rnd) for item in value]
    return value


def read_back(out: bytes) -> Any:
    try:
        return yamlio.load(out)
    except BourdonError as exc:
        pytest.fail(f"dump wrote YAML that load refuses ({exc.message}):\n{out.decode()}")


# ---------------------------------------------------------------------------------------------
# Properties


@SETTINGS
@given(manifests)
def test_a_valid_manifest_survives_dump_and_load_and_pyyaml_reads_the_same_value(
    data: dict[str, Any],
) -> None:
    validate(data)  # the strategy makes only valid manifests
    out = yamlio.dump(data)
    back = read_back(out)
    assert back == data, out.decode()
    validate(back)
    assert yaml.safe_load(out) == data, out.decode()
    assert yaml.load(out, Loader=yaml.CSafeLoader) == data, out.decode()


@SETTINGS
@given(json_like_mappings)
def test_load_inverts_dump_for_any_json_like_mapping(data: dict[str, Any]) -> None:
    out = yamlio.dump(data)
    assert read_back(out) == data, out.decode()


@SETTINGS
@given(json_like_mappings)
def test_pyyaml_reads_any_dumped_mapping_as_the_same_value(data: dict[str, Any]) -> None:
    # A YAML 1.1 reader resolves plain scalars such as no, 0123 or 2026-01-05 to other types;
    # the dumper must quote every such string, so the values are equal.
    out = yamlio.dump(data)
    assert yaml.safe_load(out) == data, out.decode()
    assert yaml.load(out, Loader=yaml.CSafeLoader) == data, out.decode()


@SETTINGS
@given(json_like_mappings, seeds)
def test_dump_is_deterministic_ignores_insertion_order_and_writes_utf8_lf_lines(
    data: dict[str, Any], seed: int
) -> None:
    out = yamlio.dump(data)
    assert yamlio.dump(data) == out
    assert yamlio.dump(shuffled(data, random.Random(seed))) == out
    text = out.decode("utf-8")
    assert text.endswith("\n")
    assert "\r" not in text, "a CR must be written as an escape"
    assert not text.startswith("\ufeff")


@SETTINGS
@given(manifests, seeds, date_times, mtext(1, 40))
def test_digest_ignores_key_order_and_last_updated_but_not_content(
    data: dict[str, Any], seed: int, other_time: str, name: str
) -> None:
    same = shuffled(data, random.Random(seed))
    same["last_updated"] = other_time
    assert digest(same) == digest(data)
    assert digest(yamlio.load(yamlio.dump(data))) == digest(data)
    changed = {**data, "known_entities": [*data.get("known_entities", []), {"name": name}]}
    assert digest(changed) != digest(data)


@SETTINGS
@given(manifests, mtext(1, 40))
def test_row_caches_give_the_same_bytes_and_digest_as_no_cache(
    data: dict[str, Any], name: str
) -> None:
    yaml_cache: yamlio.RowCache = {}
    digest_cache: dict[int, Any] = {}
    for _ in range(2):  # the second round is served from the caches
        assert yamlio.dump(data, cache=yaml_cache) == yamlio.dump(data)
        assert digest(data, digest_cache) == digest(data)
    # A merge keeps untouched rows as the same objects; only the new row is formatted afresh.
    changed, _ = merge(data, {"known_entities": [{"name": name}]})
    assert yamlio.dump(changed, cache=yaml_cache) == yamlio.dump(changed)
    assert digest(changed, digest_cache) == digest(changed)


def test_digest_is_sha256_of_64_hex() -> None:
    value = digest({"spec_version": "0.1", "agent": {"id": "a", "type": "other"}})
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", value), value


# ---------------------------------------------------------------------------------------------
# The emitted form


def test_a_plain_word_is_written_plain() -> None:
    assert yamlio.dump({"name": "bourdon"}) == b"name: bourdon\n"


def test_multi_line_text_is_a_literal_block() -> None:
    out = yamlio.dump({"summary": "line one\nline two\n"})
    assert out == b"summary: |\n  line one\n  line two\n"
    assert yamlio.dump({"summary": "one\ntwo"}) == b"summary: |-\n  one\n  two\n"
    assert yamlio.dump({"summary": "one\n\n"}) == b"summary: |+\n  one\n\n"


@pytest.mark.parametrize(
    "word",
    ["no", "No", "yes", "on", "off", "true", "null", "y", "n", "~", "", "0123", "0.1", "1e3"],
)
def test_a_word_a_yaml_reader_would_retype_is_quoted(word: str) -> None:
    assert yamlio.dump({"name": word}) == f'name: "{word}"\n'.encode()


def test_a_date_is_quoted() -> None:
    assert yamlio.dump({"date": "2026-01-05"}) == b'date: "2026-01-05"\n'


@pytest.mark.parametrize(
    "text",
    ["- x", "? y", "&a", "*b", "!t", "|", ">", "a: b", "a #b", "#c", "%x", "@x", " lead", "trail "],
)
def test_text_with_yaml_indicators_is_quoted(text: str) -> None:
    out = yamlio.dump({"name": text})
    assert out.startswith(b'name: "'), out
    assert yamlio.load(out) == {"name": text}


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("a\tb", "a\\tb"),
        ("a\rb", "a\\rb"),
        ("a\x85b", "a\\u0085b"),
        ("a\u2028b", "a\\u2028b"),
        ("a\u2029b", "a\\u2029b"),
        ("\ufeffa", "\\ufeffa"),
        ("a\x7fb", "a\\u007fb"),
        ('"hi"', '\\"hi\\"'),
    ],
)
def test_invisible_and_line_breaking_characters_are_escaped(text: str, escaped: str) -> None:
    assert yamlio.dump({"name": text}) == f'name: "{escaped}"\n'.encode()


def test_non_ascii_text_is_written_as_utf8_not_escaped() -> None:
    assert yamlio.dump({"name": "Straße 名前"}) == "name: Straße 名前\n".encode()


def test_keys_follow_the_readable_order_and_unknown_keys_come_last_sorted() -> None:
    data = {
        "x-zeta": "z",
        "notes": [],
        "known_entities": [{"tags": ["a"], "summary": "s", "name": "bourdon"}],
        "last_updated": "2026-01-05T10:00:00Z",
        "agent": {"type": "other", "id": "a"},
        "spec_version": "0.1",
        "x-alpha": "a",
    }
    assert yamlio.dump(data).decode() == (
        'spec_version: "0.1"\n'
        "agent:\n"
        "  id: a\n"
        "  type: other\n"
        'last_updated: "2026-01-05T10:00:00Z"\n'
        "known_entities:\n"
        "  - name: bourdon\n"
        "    summary: s\n"
        "    tags:\n"
        "      - a\n"
        "notes: []\n"
        "x-alpha: a\n"
        "x-zeta: z\n"
    )


def test_empty_containers_and_null_are_written_inline() -> None:
    assert yamlio.dump({"a": [], "b": {}, "c": None}) == b"a: []\nb: {}\nc: null\n"


def test_load_reads_every_plain_scalar_as_a_string_and_only_null_words_as_null() -> None:
    text = "a: no\nb: 0123\nc: 2026-01-05\nd: 0.1\ne: ~\nf: null\ng:\nh: 'null'\ni: .inf\n"
    assert yamlio.load(text) == {
        "a": "no",
        "b": "0123",
        "c": "2026-01-05",
        "d": "0.1",
        "e": None,
        "f": None,
        "g": None,
        "h": "null",
        "i": ".inf",
    }


# ---------------------------------------------------------------------------------------------
# Values the writer gets wrong (each is a bug in yamlio.dump; see the assertion messages)


def test_an_empty_mapping_survives_dump_and_load() -> None:
    out = yamlio.dump({})
    assert yaml.safe_load(out) == {}, f"dump({{}}) wrote {out!r}, an empty YAML stream"
    assert read_back(out) == {}


@pytest.mark.parametrize("key", ["a\nb", "x-a\n", "\n"])
def test_a_key_with_a_line_break_survives_dump_and_load(key: str) -> None:
    out = yamlio.dump({key: "v"})
    assert not out.startswith(b"|"), (
        f"dump wrote the key as a literal block, which YAML cannot read: {out!r}"
    )
    assert read_back(out) == {key: "v"}


def test_a_valid_manifest_with_a_multi_line_key_in_an_extension_survives_dump_and_load() -> None:
    # Extension values are free-form ({} in the schema), so their keys may hold line breaks.
    data = {
        "spec_version": "0.1",
        "agent": {"id": "a", "type": "other"},
        "last_updated": "2026-01-05T10:00:00Z",
        "x-tool": {"first line\nsecond line": "v"},
    }
    validate(data)
    out = yamlio.dump(data)
    back = read_back(out)
    assert back == data, (
        "dump wrote the key as a literal block and load silently read back a different value "
        f"({back['x-tool']!r}); the digest changes with it:\n{out.decode()}"
    )


def test_a_key_longer_than_yaml_readers_accept_is_refused_before_it_is_written() -> None:
    # libyaml and PyYAML read implicit keys of at most 1,024 characters: a longer key would be
    # written in a form no reader loads back, so validation refuses it first.
    key = "x-" + "a" * 1100
    data = {
        "spec_version": "0.1",
        "agent": {"id": "a", "type": "other"},
        "last_updated": "2026-01-05T10:00:00Z",
        key: "v",
    }
    with pytest.raises(SchemaError, match="key longer than 256 characters"):
        validate(data)
    nested = {**data, key: None, "x-tool": {"k" * 300: "v"}}
    del nested[key]
    with pytest.raises(SchemaError, match="/x-tool: has a key longer than 256"):
        validate(nested)


@pytest.mark.parametrize("text", ["a\ufffe", "a\uffffb"])
def test_a_noncharacter_after_a_letter_is_escaped(text: str) -> None:
    out = yamlio.dump({"name": text})
    assert out != f"name: {text}\n".encode(), (
        f"dump wrote {text!r} plain: yamlio._PLAIN lets U+FFFE/U+FFFF through (they are escaped "
        "only in quoted strings), and YAML readers refuse them unescaped"
    )
    assert read_back(out) == {"name": text}
