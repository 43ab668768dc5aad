"""The compiled row check gives jsonschema's verdict (the oracle) on every row, valid or not,
and a manifest read with it reports exactly the problems it reports without it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bourdon.formats import checks, fastcheck, reading
from tests.test_yamlio import SETTINGS, entities, manifests, notes, sessions, workstreams

pytestmark = pytest.mark.skipif(not fastcheck.available(), reason="jsonschema_rs not installed")

VALID_ROWS = {
    "known_entities": entities,
    "recent_sessions": sessions,
    "known_workstreams": workstreams,
    "notes": notes,
}
FIELDS = {
    "known_entities": ["name", "type", "aliases", "summary", "last_touched", "valid_from",
                       "valid_to", "tags", "visibility", "source", "origin", "supersedes",
                       "superseded_by"],
    "recent_sessions": ["date", "session_id", "cwd", "project_focus", "key_actions",
                        "files_touched", "tags", "visibility", "source", "origin"],
    "known_workstreams": ["name", "status", "summary", "started", "last_touched",
                          "related_entities", "tags", "visibility", "source"],
    "notes": ["date", "text", "related_entities", "tags", "visibility", "source"],
}  # fmt: skip
# Values that break one rule or another, or only look as if they might.
ODD_VALUES = st.one_of(
    st.sampled_from(
        [
            "", "x" * 129, "x" * 2001, "x" * 4001, "2026-02-30", "2026-1-5", "2026-01-05T10:00:00Z",
            "2026-01-05\n", "\uff12026-01-05", "20260105", "public ", "Private", "committed",
            "active", "a\x01b", "a\x7fb", "\ufffe", "\ud800", "tab\tand\nline", [], {}, [""],
            ["x" * 300], ["a"] * 17, ["a"] * 51, [1], [None], {"kind": "x"}, 1, 1.5, True,
        ]
    ),
    st.text(max_size=5),
    st.lists(st.text(max_size=3), max_size=3),
)  # fmt: skip
ODD_KEYS = st.sampled_from(["x" * 256, "x" * 257, "k\x02", "k\ud800", "", "x-extra", 3])


def oracle(section: str, row: Any) -> bool:
    errors = list(reading._read_row_validator(section).iter_errors(row))
    return not errors and not checks.text_problems(row, "")


@st.composite
def rows(draw: st.DrawFn) -> tuple[str, Any]:
    section = draw(st.sampled_from(sorted(VALID_ROWS)))
    row = dict(draw(VALID_ROWS[section]))
    for _ in range(draw(st.integers(0, 3))):
        action = draw(st.sampled_from(["set", "drop", "key", "nest"]))
        if action == "set":
            row[draw(st.sampled_from(FIELDS[section]))] = draw(ODD_VALUES)
        elif action == "drop" and row:
            row.pop(draw(st.sampled_from(list(row))))
        elif action == "key":
            row[draw(ODD_KEYS)] = draw(ODD_VALUES)
        else:
            row["source"] = {draw(ODD_KEYS): draw(ODD_VALUES)}
    return section, row


@SETTINGS
@given(rows())
def test_the_compiled_check_gives_jsonschemas_verdict_on_every_row(found: tuple[str, Any]) -> None:
    section, row = found
    check = fastcheck.row_check(section)
    assert check is not None
    assert check(row) == oracle(section, row)


def test_the_generated_rows_hold_both_verdicts() -> None:
    # The property above would hold trivially if every row were valid (or every one not).
    seen: set[bool] = set()

    @SETTINGS
    @given(rows())
    def collect(found: tuple[str, Any]) -> None:
        seen.add(oracle(*found))

    collect()
    assert seen == {True, False}


@SETTINGS
@given(manifests, st.lists(rows(), max_size=4))
def test_a_manifest_reports_the_same_problems_with_and_without_the_compiled_check(
    manifest: dict[str, Any], extra: list[tuple[str, Any]]
) -> None:
    data = {**manifest}
    for section, row in extra:
        data[section] = [*data.get(section, []), row]
    fast = reading.read_data(data)
    slow = _without_compiled_check(lambda: reading.read_data(data))
    assert fast == slow


def test_without_jsonschema_rs_rows_are_judged_by_jsonschema(monkeypatch: Any) -> None:
    monkeypatch.setattr(fastcheck, "jsonschema_rs", None)
    fastcheck.row_check.cache_clear()
    try:
        assert fastcheck.row_check("known_entities") is None
        bad = {"name": "x", "last_touched": "2026-02-30"}
        problems = reading.read_data(
            {
                "spec_version": "0.1",
                "agent": {"id": "a", "type": "other"},
                "last_updated": "2026-01-05T10:00:00Z",
                "known_entities": [{"name": "ok"}, bad],
            }
        ).problems
        assert [(p.row, p.field) for p in problems] == [(1, "last_touched")]
    finally:
        fastcheck.row_check.cache_clear()


def _without_compiled_check(run: Any) -> Any:
    saved = fastcheck.jsonschema_rs
    fastcheck.jsonschema_rs = None
    fastcheck.row_check.cache_clear()
    try:
        return run()
    finally:
        fastcheck.jsonschema_rs = saved
        fastcheck.row_check.cache_clear()
