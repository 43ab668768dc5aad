"""The quick reader of bourdon's own YAML reads exactly what the general reader reads.

``yamlio.load`` first tries ``yamlfast`` (the dialect ``yamlio.dump`` writes) and falls back
to libyaml on anything else; ``yamlio.load_general`` is the libyaml way alone, the oracle.
Everything ``dump`` writes is read by the quick path and gives the same value; YAML written
in other styles, or edited by hand, falls back and gives the same value; hostile input gives
the same error, word for word.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from bourdon.errors import BourdonError
from bourdon.formats import yamlfast, yamlio
from tests.test_yamlio import SETTINGS, YAML_PIECES, json_like_mappings, manifests


def quick(text: bytes) -> Any:
    return yamlfast.parse(
        text.decode("utf-8"), max_depth=yamlio.MAX_DEPTH, max_string=yamlio.MAX_STRING
    )


def outcome(read: Any, text: bytes | str) -> tuple[str, Any]:
    """What a reader makes of ``text``: its value, or its error's kind and message."""
    try:
        return ("value", read(text, what="m.yaml"))
    except BourdonError as exc:
        return (type(exc).__name__, exc.message)


def same_both_ways(text: bytes | str) -> tuple[str, Any]:
    found = outcome(yamlio.load, text)
    assert found == outcome(yamlio.load_general, text)
    return found


# -- what bourdon writes --------------------------------------------------------------------


@SETTINGS
@given(manifests)
def test_every_manifest_bourdon_writes_is_read_the_quick_way_with_the_same_value(
    manifest: dict[str, Any],
) -> None:
    text = yamlio.dump(manifest)
    assert quick(text) == yamlio.load_general(text) == manifest


@SETTINGS
@given(json_like_mappings.filter(bool))
def test_any_mapping_bourdon_writes_is_read_the_quick_way_with_the_same_value(
    value: dict[str, Any],
) -> None:
    text = yamlio.dump(value)
    assert quick(text) == yamlio.load_general(text)


def test_a_large_generated_manifest_is_read_the_quick_way() -> None:
    from bourdon.testing import generated_manifest

    data = generated_manifest("agent-00", 300, 100, 0)
    text = yamlio.dump(data)
    assert quick(text) == yamlio.load_general(text) == data


# -- YAML in other styles falls back ----------------------------------------------------------


@SETTINGS
@given(
    json_like_mappings.filter(bool),
    st.sampled_from([None, True, False]),
    st.sampled_from([2, 4, 3]),
    st.booleans(),
)
def test_yaml_in_other_styles_reads_the_same_both_ways(
    value: dict[str, Any], flow: bool | None, indent: int, sort: bool
) -> None:
    text = yaml.safe_dump(
        value, default_flow_style=flow, indent=indent, sort_keys=sort, allow_unicode=True
    )
    same_both_ways(text)


EDITS = [
    "# a comment\n",
    "\n",
    "   \n",
    "\t",
    "  ",
    " ",
    "- ",
    "-",
    "key: value\n",
    "&a ",
    "*a\n",
    "!!str ",
    "? ",
    ": ",
    " #c",
    '"',
    "'",
    "|\n",
    "|2\n",
    ">\n",
    "---\n",
    "...\n",
    "{",
    "[a, b]",
    "\r\n",
    "\x85",
    "\u2028",
    "\ufeff",
    "\x00",
    "\\x41",
    "\\ud83d",
    '\\"',
]


@SETTINGS
@given(
    manifests,
    st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(EDITS + YAML_PIECES)), max_size=4),
)
def test_hand_edits_of_what_bourdon_wrote_read_the_same_both_ways(
    manifest: dict[str, Any], edits: list[tuple[int, str]]
) -> None:
    text = yamlio.dump(manifest).decode("utf-8")
    for where, piece in edits:
        at = where % (len(text) + 1)
        text = text[:at] + piece + text[at:]
    same_both_ways(text)


@SETTINGS
@given(manifests, st.data())
def test_reindented_or_shuffled_lines_read_the_same_both_ways(
    manifest: dict[str, Any], data: st.DataObject
) -> None:
    lines = yamlio.dump(manifest).decode("utf-8").split("\n")
    i = data.draw(st.integers(0, len(lines) - 1))
    change = data.draw(st.sampled_from(["indent", "dedent", "drop", "double", "swap"]))
    if change == "indent":
        lines[i] = " " + lines[i]
    elif change == "dedent":
        lines[i] = lines[i][1:]
    elif change == "drop":
        del lines[i]
    elif change == "double":
        lines.insert(i, lines[i])
    elif i + 1 < len(lines):
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    same_both_ways("\n".join(lines))


# -- hostile input: the same errors -------------------------------------------------------------

HOSTILE = {
    "anchor and alias": "a: &x v\nb: *x\n",
    "anchor on a row": "rows:\n  - &r name: x\n",
    "python tag": "a: !!python/object:os.system x\n",
    "str tag": "a: !!str x\n",
    "local tag": "a: !t x\n",
    "duplicate key": "a: x\nb: y\na: z\n",
    "duplicate key in a row": "rows:\n  - name: x\n    name: y\n",
    "duplicate quoted key": 'a: x\n"a": y\n',
    "two documents": "a: x\n---\nb: y\n",
    "document end then more": "a: x\n...\nb: y\n",
    "bom": "\ufeffa: x\n",
    "nul": "a: x\x00\n",
    "cr line ends": "a: x\r\nb: y\r\n",
    "tab indent": "a:\n\tb: x\n",
    "huge string": "a: " + "x" * (yamlio.MAX_STRING + 1) + "\n",
    "huge quoted string": 'a: "' + "x" * (yamlio.MAX_STRING + 1) + '"\n',
    "huge block": "a: |\n" + ("  " + "x" * 1000 + "\n") * 70,
    "huge key": "x" * 2000 + ": v\n",
    "deep nesting": "".join("  " * d + f"k{d}:\n" for d in range(40)) + "  " * 40 + "v: x\n",
    "deep sequences": "".join("  " * d + "-\n" for d in range(40)) + "  " * 40 + "- x\n",
    "deep at the limit": "".join("  " * d + f"k{d}:\n" for d in range(31)) + "  " * 31 + "v: x\n",
    "null key": "null: x\n",
    "empty key": ": x\n",
    "plain continued on the next line": "a: one\n  two\n",
    "indentless sequence": "a:\n- x\n- y\n",
    "key without value at the end": "a: x\nb:\n",
    "block with indentation indicator": "a: |2\n   x\n",
    "block with a deeper first line": "a: |\n    x\n  y\n",
    "empty block": "a: |\nb: x\n",
    "surrogate escape": 'a: "\\ud800"\n',
    "surrogate pair escape": 'a: "\\ud83d\\udc1d"\n',
    "yaml-only escape": 'a: "\\x41\\N"\n',
    "bad escape": 'a: "\\q"\n',
    "unclosed quote": 'a: "x\n',
    "flow mapping": "a: {b: c}\n",
    "flow sequence": "a: [b, c]\n",
    "only a scalar": "just text\n",
    "a sequence at the top": "- a\n- b\n",
    "empty": "",
    "blank": "\n",
    "comment only": "# nothing\n",
    "no final line break": "a: x",
    "yes and no": "a: yes\nb: No\nc: ~\nd: Null\n",
    "numbers and dates": "a: 0123\nb: 1e3\nc: 2026-01-05\nd: 12:30\n",
    "merge key": "a: x\n<<: y\n",
    "complex key": "? a\n: b\n",
    "value after a block key": "a:\n  b: x\n c: y\n",
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_gives_the_same_answer_both_ways(text: str) -> None:
    same_both_ways(text)
    same_both_ways(text.encode("utf-8", "surrogatepass"))


def test_hostile_input_is_refused_with_the_general_readers_own_errors() -> None:
    # A sample of the above, to show the answers compared are errors, not two equal values.
    for name in ("anchor and alias", "duplicate key", "huge string", "deep nesting", "bom"):
        kind, _ = same_both_ways(HOSTILE[name])
        assert kind in ("ManifestError", "TooLargeError"), name


def test_the_quick_path_leaves_outside_text_to_the_general_one() -> None:
    for name in ("flow mapping", "yes and no", "indentless sequence", "cr line ends"):
        assert quick(HOSTILE[name].encode()) is None, name
