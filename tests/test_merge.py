"""Merge semantics (``bourdon.merge``): pure functions from (base, change) to (result, stats).

How rows are matched, how their fields combine, what ``replace`` keeps, which objects survive
unchanged (so validation can skip them), what the counts say, and that list limits agree with
the schema they stand in for.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bourdon.digest import digest
from bourdon.errors import SchemaError
from bourdon.formats.resources import schema_path
from bourdon.formats.schema import validate
from bourdon.merge.floor import keep_floor, lowered
from bourdon.merge.twoway import merge, regenerate
from bourdon.model import LIST_FIELDS, LIST_LIMITS, ROW_SECTIONS, list_limit, row_key
from bourdon.store.changes import regenerating, with_id

SOURCE = {"kind": "commit", "name": "tests"}
SECTION_DEFS = {
    "known_entities": "entity",
    "recent_sessions": "session",
    "known_workstreams": "workstream",
    "notes": "note",
}


def base_manifest(**sections: Any) -> dict[str, Any]:
    return {
        "spec_version": "0.1",
        "agent": {"id": "claude-code", "type": "code-assistant", "instance": "laptop"},
        "last_updated": "2026-01-05T10:00:00Z",
        **sections,
    }


def rows_of(result: dict[str, Any], section: str) -> list[dict[str, Any]]:
    return list(result.get(section) or [])


# ---------------------------------------------------------------------------------------------
# Matching rows


def test_entities_match_by_name_ignoring_case_and_keep_the_first_spelling() -> None:
    base = base_manifest(known_entities=[{"name": "Bourdon", "summary": "old"}])
    result, stats = merge(base, {"known_entities": [{"name": "BOURDON", "summary": "new"}]})
    assert rows_of(result, "known_entities") == [{"name": "Bourdon", "summary": "new"}]
    assert (stats.added["known_entities"], stats.updated["known_entities"]) == (0, 1)


def test_entity_names_match_ignoring_runs_of_white_space() -> None:
    base = base_manifest(known_entities=[{"name": "agent library"}])
    result, _ = merge(base, {"known_entities": [{"name": "  Agent   Library ", "tags": ["x"]}]})
    assert rows_of(result, "known_entities") == [{"name": "agent library", "tags": ["x"]}]


def test_entities_with_different_names_are_different_rows() -> None:
    base = base_manifest(known_entities=[{"name": "bourdon"}])
    result, stats = merge(base, {"known_entities": [{"name": "bourdon-cli"}]})
    assert [r["name"] for r in rows_of(result, "known_entities")] == ["bourdon", "bourdon-cli"]
    assert stats.added["known_entities"] == 1


@pytest.mark.parametrize(
    ("other", "same_row"),
    [
        ({"date": "2026-01-05", "cwd": "/w", "session_id": "s1"}, True),
        ({"date": "2026-01-05", "cwd": "/elsewhere", "session_id": "s1"}, False),
        ({"date": "2026-01-05", "cwd": "/w", "session_id": "s2"}, False),
        ({"date": "2026-01-06", "cwd": "/w", "session_id": "s1"}, False),
        ({"date": "2026-01-05", "cwd": "/w"}, False),
    ],
    ids=["same-date-cwd-id", "other-cwd", "other-session-id", "other-date", "no-session-id"],
)
def test_sessions_match_by_date_cwd_and_session_id(other: dict[str, str], same_row: bool) -> None:
    first = {"date": "2026-01-05", "cwd": "/w", "session_id": "s1", "key_actions": ["a"]}
    base = base_manifest(recent_sessions=[first])
    result, stats = merge(base, {"recent_sessions": [{**other, "key_actions": ["b"]}]})
    sessions = rows_of(result, "recent_sessions")
    if same_row:
        assert sessions == [{**first, "key_actions": ["a", "b"]}]
        assert stats.updated["recent_sessions"] == 1
    else:
        assert sessions == [first, {**other, "key_actions": ["b"]}]
        assert stats.added["recent_sessions"] == 1


def test_sessions_without_cwd_or_id_match_by_date() -> None:
    base = base_manifest(recent_sessions=[{"date": "2026-01-05", "tags": ["a"]}])
    result, _ = merge(base, {"recent_sessions": [{"date": "2026-01-05", "tags": ["b"]}]})
    assert rows_of(result, "recent_sessions") == [{"date": "2026-01-05", "tags": ["a", "b"]}]


def test_workstreams_match_by_name_ignoring_case() -> None:
    base = base_manifest(known_workstreams=[{"name": "Hardening", "status": "active"}])
    result, stats = merge(base, {"known_workstreams": [{"name": "hardening", "status": "done"}]})
    assert rows_of(result, "known_workstreams") == [{"name": "Hardening", "status": "done"}]
    assert stats.updated["known_workstreams"] == 1


@pytest.mark.parametrize(
    ("other", "same_row"),
    [
        ({"date": "2026-01-05", "text": "shipped v1"}, True),
        ({"date": "2026-01-06", "text": "shipped v1"}, False),
        ({"date": "2026-01-05", "text": "shipped v2"}, False),
        ({"date": "2026-01-05", "text": "Shipped v1"}, False),
    ],
    ids=["same-date-and-text", "other-date", "other-text", "text-differs-in-case"],
)
def test_notes_match_by_date_and_text(other: dict[str, str], same_row: bool) -> None:
    first = {"date": "2026-01-05", "text": "shipped v1", "tags": ["release"]}
    base = base_manifest(notes=[first])
    result, _ = merge(base, {"notes": [{**other, "tags": ["ops"]}]})
    if same_row:
        assert rows_of(result, "notes") == [{**first, "tags": ["release", "ops"]}]
    else:
        assert rows_of(result, "notes") == [first, {**other, "tags": ["ops"]}]


# ---------------------------------------------------------------------------------------------
# Combining fields


def test_list_fields_are_unioned_keeping_order_with_new_items_last() -> None:
    base = base_manifest(known_entities=[{"name": "x", "tags": ["b", "a"], "aliases": ["X1"]}])
    change = {"known_entities": [{"name": "x", "tags": ["c", "a", "d", "c"], "aliases": ["X1"]}]}
    result, _ = merge(base, change)
    assert rows_of(result, "known_entities") == [
        {"name": "x", "tags": ["b", "a", "c", "d"], "aliases": ["X1"]}
    ]


def test_list_fields_are_trimmed_to_their_limit_dropping_the_oldest() -> None:
    old = [f"old{i}" for i in range(10)]
    base = base_manifest(recent_sessions=[{"date": "2026-01-05", "key_actions": old}])
    change = {"recent_sessions": [{"date": "2026-01-05", "key_actions": ["new1", "new2"]}]}
    result, _ = merge(base, change)
    assert rows_of(result, "recent_sessions")[0]["key_actions"] == [*old[2:], "new1", "new2"]


@pytest.mark.parametrize(
    ("section", "row", "limit"),
    [
        ("notes", {"date": "2026-01-05", "text": "t"}, 16),
        ("known_workstreams", {"name": "w"}, 32),
    ],
)
def test_related_entities_are_trimmed_to_the_limit_of_their_section(
    section: str, row: dict[str, str], limit: int
) -> None:
    old = [f"e{i}" for i in range(limit)]
    base = base_manifest(**{section: [{**row, "related_entities": old}]})
    result, _ = merge(base, {section: [{**row, "related_entities": ["newest"]}]})
    assert rows_of(result, section)[0]["related_entities"] == [*old[1:], "newest"]
    validate(result)


def test_capabilities_and_policy_tags_are_unioned_and_trimmed() -> None:
    base = base_manifest(
        capabilities=[f"c{i}" for i in range(64)],
        visibility_policy={"default": "team", "private_tags": [f"p{i}" for i in range(32)]},
    )
    change = {"capabilities": ["c0", "fresh"], "visibility_policy": {"private_tags": ["secret"]}}
    result, _ = merge(base, change)
    # The change's own items survive; the oldest items the change does not name make room.
    assert result["capabilities"] == ["c0", *(f"c{i}" for i in range(2, 64)), "fresh"]
    assert result["visibility_policy"] == {
        "default": "team",
        "private_tags": [*(f"p{i}" for i in range(1, 32)), "secret"],
    }
    validate(result)
    again, _ = merge(result, change)
    assert again == result


def test_scalar_fields_are_overwritten() -> None:
    base = base_manifest(
        known_entities=[{"name": "x", "summary": "old", "visibility": "team", "type": "lib"}]
    )
    change = {"known_entities": [{"name": "x", "summary": "new", "visibility": "public"}]}
    result, _ = merge(base, change)
    assert rows_of(result, "known_entities") == [
        {"name": "x", "summary": "new", "visibility": "public", "type": "lib"}
    ]


def test_null_in_a_change_leaves_the_field_alone() -> None:
    base = base_manifest(
        capabilities=["read"],
        known_entities=[{"name": "x", "summary": "keep", "tags": ["t"]}],
        notes=[{"date": "2026-01-05", "text": "n"}],
    )
    change = {
        "agent": {"instance": None, "role_narrative": None},
        "capabilities": None,
        "visibility_policy": None,
        "notes": None,
        "known_entities": [{"name": "x", "summary": None, "tags": None}],
    }
    result, stats = merge(base, change)
    assert result == base
    assert stats.total_updated == 0


@pytest.mark.parametrize("field", ["tags", "aliases"])
def test_a_bare_string_in_a_list_field_of_a_new_row_is_one_item(field: str) -> None:
    result, _ = merge(base_manifest(), {"known_entities": [{"name": "x", field: "infra"}]})
    assert rows_of(result, "known_entities") == [{"name": "x", field: ["infra"]}]


def test_a_bare_string_in_a_list_field_of_an_existing_row_is_one_item() -> None:
    base = base_manifest(recent_sessions=[{"date": "2026-01-05", "files_touched": ["a.py"]}])
    change = {"recent_sessions": [{"date": "2026-01-05", "files_touched": "setup.py"}]}
    result, _ = merge(base, change)
    assert rows_of(result, "recent_sessions")[0]["files_touched"] == ["a.py", "setup.py"]


def test_bare_strings_in_capabilities_and_policy_tags_are_one_item() -> None:
    base = base_manifest(capabilities=["read"])
    change = {"capabilities": "write", "visibility_policy": {"team_tags": "infra"}}
    result, _ = merge(base, change)
    assert result["capabilities"] == ["read", "write"]
    assert result["visibility_policy"] == {"team_tags": ["infra"]}
    validate(result)


def test_the_source_is_stamped_on_rows_that_carry_none() -> None:
    own = {"kind": "reader", "name": "claude-reader"}
    change = {"known_entities": [{"name": "a"}, {"name": "b", "source": own}]}
    result, _ = merge(base_manifest(), change, source=SOURCE)
    assert [r["source"] for r in rows_of(result, "known_entities")] == [SOURCE, own]


def test_an_existing_agent_keeps_its_type_and_unmentioned_fields() -> None:
    result, _ = merge(base_manifest(), {"agent": {"type": "tutor", "role_narrative": "helps"}})
    assert result["agent"] == {
        "id": "claude-code",
        "type": "code-assistant",
        "instance": "laptop",
        "role_narrative": "helps",
    }


def test_a_change_to_a_new_agent_sets_its_identity() -> None:
    result, stats = merge(None, {"agent": {"id": "fresh", "type": "tutor"}, "notes": []})
    assert result["agent"] == {"id": "fresh", "type": "tutor"}
    assert result["spec_version"] == "0.1"
    assert "notes" not in result, "an empty section is not written into a new manifest"
    assert stats.total_added == 0


# ---------------------------------------------------------------------------------------------
# Replace


def test_replace_writes_only_what_is_given_but_keeps_agent_identity() -> None:
    base = base_manifest(
        capabilities=["read"],
        visibility_policy={"default": "public"},
        known_entities=[{"name": "a"}, {"name": "b"}],
        recent_sessions=[{"date": "2026-01-05"}],
        **{"x-tool": "v1"},
    )
    result, stats = merge(
        base, {"notes": [{"date": "2026-01-06", "text": "only this"}]}, mode="replace"
    )
    assert result == {
        "spec_version": "0.1",
        "agent": {"id": "claude-code", "type": "code-assistant", "instance": "laptop"},
        "last_updated": "2026-01-05T10:00:00Z",
        "notes": [{"date": "2026-01-06", "text": "only this"}],
    }
    assert stats.removed == {
        "known_entities": 2,
        "recent_sessions": 1,
        "known_workstreams": 0,
        "notes": 0,
    }
    assert stats.added["notes"] == 1


def test_replace_counts_the_rows_it_removes() -> None:
    base = base_manifest(known_entities=[{"name": "a"}, {"name": "b"}, {"name": "c"}])
    result, stats = merge(base, {"known_entities": [{"name": "B"}]}, mode="replace")
    assert [r["name"] for r in rows_of(result, "known_entities")] == ["B"]
    assert stats.removed["known_entities"] == 2


def test_replace_counts_rows_it_keeps_as_kept_not_added() -> None:
    base = base_manifest(known_entities=[{"name": "a"}, {"name": "b"}])
    result, stats = merge(base, {"known_entities": [{"name": "a"}, {"name": "c"}]}, mode="replace")
    assert [r["name"] for r in rows_of(result, "known_entities")] == ["a", "c"]
    counts = (stats.added["known_entities"], stats.updated["known_entities"])
    assert counts == (1, 0), (
        f"replace reported (added, updated) = {counts} for one new row 'c' and one unchanged "
        "row 'a': every row of a replace is counted as added, so added - removed (2 - 1) no "
        "longer equals the change in the row count (0)"
    )
    assert stats.removed["known_entities"] == 1


# ---------------------------------------------------------------------------------------------
# Identity: what a merge does not touch stays the very same object


def test_rows_the_change_does_not_mention_are_the_same_objects() -> None:
    base = base_manifest(
        known_entities=[{"name": "a"}, {"name": "b"}],
        notes=[{"date": "2026-01-05", "text": "n"}],
    )
    result, _ = merge(base, {"known_entities": [{"name": "c"}]})
    entities = rows_of(result, "known_entities")
    assert entities[0] is base["known_entities"][0]
    assert entities[1] is base["known_entities"][1]
    assert result["notes"] is base["notes"], "an untouched section is the same list"


def test_rows_the_change_repeats_unchanged_are_the_same_objects() -> None:
    base = base_manifest(known_entities=[{"name": "a", "tags": ["x"], "source": SOURCE}])
    change = {"known_entities": [{"name": "A", "tags": "x"}]}
    result, stats = merge(base, change, source=SOURCE)
    assert rows_of(result, "known_entities")[0] is base["known_entities"][0]
    assert stats.total_updated == 0


def test_a_merge_never_changes_its_inputs() -> None:
    base = base_manifest(known_entities=[{"name": "a", "tags": ["x"]}])
    change = {"known_entities": [{"name": "a", "tags": ["y"]}, {"name": "b"}]}
    base_copy, change_copy = copy.deepcopy(base), copy.deepcopy(change)
    merge(base, change, source=SOURCE)
    merge(base, change, mode="replace")
    assert (base, change) == (base_copy, change_copy)


def test_validation_skips_the_rows_a_merge_kept() -> None:
    # A row that is not valid (name over 128 characters) but was trusted when it was written:
    # only the same object is skipped, so only rows the merge kept go unchecked.
    long_name = "n" * 200
    base = base_manifest(known_entities=[{"name": long_name}])
    result, _ = merge(base, {"known_entities": [{"name": "new"}]})
    validate(result, trusted=base)
    with pytest.raises(SchemaError, match="/known_entities/0/name"):
        validate(result)
    rebuilt = {**result, "known_entities": [dict(r) for r in result["known_entities"]]}
    with pytest.raises(SchemaError, match="/known_entities/0/name"):
        validate(rebuilt, trusted=base)


# ---------------------------------------------------------------------------------------------
# Counts


def test_stats_count_added_updated_and_unchanged_rows_per_section() -> None:
    base = base_manifest(
        known_entities=[{"name": "same"}, {"name": "changed", "summary": "old"}],
        notes=[{"date": "2026-01-05", "text": "n"}],
    )
    change = {
        "known_entities": [
            {"name": "same"},
            {"name": "changed", "summary": "new"},
            {"name": "new1"},
            {"name": "new2"},
        ],
        "notes": [{"date": "2026-01-05", "text": "n"}],
        "recent_sessions": [{"date": "2026-01-05"}],
    }
    _, stats = merge(base, change)
    assert stats.added == {
        "known_entities": 2,
        "recent_sessions": 1,
        "known_workstreams": 0,
        "notes": 0,
    }
    assert stats.updated == {
        "known_entities": 1,
        "recent_sessions": 0,
        "known_workstreams": 0,
        "notes": 0,
    }
    assert stats.removed == dict.fromkeys(ROW_SECTIONS, 0)
    assert (stats.total_added, stats.total_updated, stats.total_removed) == (3, 1, 0)


def test_a_row_added_and_then_repeated_in_one_change_counts_as_one_added() -> None:
    change = {"known_entities": [{"name": "x", "tags": ["a"]}, {"name": "X", "tags": ["b"]}]}
    result, stats = merge(base_manifest(), change)
    assert rows_of(result, "known_entities") == [{"name": "x", "tags": ["a", "b"]}]
    assert (stats.added["known_entities"], stats.updated["known_entities"]) == (1, 0)


def test_a_row_updated_twice_in_one_change_counts_as_one_updated_row() -> None:
    base = base_manifest(known_entities=[{"name": "x"}])
    change = {"known_entities": [{"name": "x", "summary": "one"}, {"name": "X", "summary": "two"}]}
    result, stats = merge(base, change)
    assert rows_of(result, "known_entities") == [{"name": "x", "summary": "two"}]
    assert stats.updated["known_entities"] == 1, (
        f"one row changed, but MergeStats.updated says {stats.updated['known_entities']}: "
        "_merge_rows counts every change row that alters an existing row, not each row once"
    )


# ---------------------------------------------------------------------------------------------
# Re-merging the same rows changes nothing


def test_re_merging_the_same_change_keeps_the_digest() -> None:
    change = {
        "agent": {"id": "claude-code", "type": "code-assistant"},
        "capabilities": ["read", "write"],
        "visibility_policy": {"default": "team", "private_tags": "secret"},
        "known_entities": [{"name": "Bourdon", "tags": ["git"], "summary": "memory"}],
        "recent_sessions": [{"date": "2026-01-05", "cwd": "/w", "key_actions": ["a", "b"]}],
        "known_workstreams": [{"name": "ship", "status": "active"}],
        "notes": [{"date": "2026-01-05", "text": "n", "tags": "release"}],
    }
    base, _ = merge(None, change, source=SOURCE)
    base["last_updated"] = "2026-01-05T10:00:00Z"
    validate(base)
    again = json.loads(json.dumps(change))
    again["known_entities"][0]["name"] = "BOURDON"
    result, stats = merge(base, again, source=SOURCE)
    assert digest(result) == digest(base)
    assert result == base
    assert (stats.total_added, stats.total_updated, stats.total_removed) == (0, 0, 0)


def test_re_merging_a_list_longer_than_its_limit_keeps_the_digest() -> None:
    actions = [f"step {i}" for i in range(12)]  # a reader re-sends all of a long session
    row = {"date": "2026-01-05", "session_id": "s1", "key_actions": actions[:10]}
    base = base_manifest(recent_sessions=[row])
    change = {
        "recent_sessions": [{"date": "2026-01-05", "session_id": "s1", "key_actions": actions}]
    }
    once, _ = merge(base, change)
    twice, stats = merge(once, change)
    kept = [once["recent_sessions"][0]["key_actions"], twice["recent_sessions"][0]["key_actions"]]
    assert digest(twice) == digest(once), (
        "re-merging the same session changed it: key_actions went from "
        f"{kept[0]} to {kept[1]}; items trimmed as the oldest come back as new on every merge"
    )
    assert stats.total_updated == 0


names = st.sampled_from(["alpha", "Alpha", "ALPHA ", "beta", "gamma"])
items = st.lists(st.sampled_from([f"t{i}" for i in range(40)]), max_size=12)
change_rows = st.fixed_dictionaries(
    {
        "known_entities": st.lists(
            st.fixed_dictionaries(
                {"name": names},
                optional={"tags": items, "summary": st.sampled_from(["s1", "s2", None])},
            ),
            max_size=4,
        ),
        "notes": st.lists(
            st.fixed_dictionaries(
                {"date": st.sampled_from(["2026-01-05", "2026-01-06"]), "text": names},
                optional={"related_entities": items},
            ),
            max_size=3,
        ),
    }
)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(change_rows)
def test_re_merging_any_change_keeps_the_digest(change: dict[str, Any]) -> None:
    once, _ = merge(base_manifest(), change, source=SOURCE)
    twice, stats = merge(once, change, source=SOURCE)
    assert digest(twice) == digest(once), "re-merging the same change altered the manifest"
    assert stats.total_added == stats.total_updated == 0, (
        f"re-merging changed nothing, yet MergeStats says added={stats.added}, "
        f"updated={stats.updated}: updates are counted per change row against the row as the "
        "previous change row left it, not per row against the base"
    )


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(change_rows, change_rows)
def test_stats_agree_with_the_row_counts(first: dict[str, Any], second: dict[str, Any]) -> None:
    base, _ = merge(base_manifest(), first)
    for mode in ("merge", "replace"):
        result, stats = merge(base, second, mode=mode)
        for section in ("known_entities", "notes"):
            before, after = len(rows_of(base, section)), len(rows_of(result, section))
            added, removed, updated = (
                stats.added[section],
                stats.removed[section],
                stats.updated[section],
            )
            assert added - removed == after - before, (
                f"{mode} of {section}: {before} rows became {after}, but the stats say "
                f"added {added}, removed {removed}"
            )
            assert updated <= min(before, after), (
                f"{mode} of {section}: {updated} rows updated, but only {min(before, after)} "
                "rows were there before and after"
            )


# ---------------------------------------------------------------------------------------------
# List limits and the schema they mirror


def _schema() -> dict[str, Any]:
    with open(schema_path(), encoding="utf-8") as handle:
        loaded: dict[str, Any] = json.load(handle)
    return loaded


def _string_list_fields(properties: dict[str, Any]) -> dict[str, int]:
    """Fields of a schema object that are arrays of strings, with their maxItems."""
    return {
        key: spec["maxItems"]
        for key, spec in properties.items()
        if spec.get("type") == "array" and spec.get("items", {}).get("type") == "string"
    }


def _list_fields_by_place() -> dict[str | None, dict[str, int]]:
    schema = _schema()
    places: dict[str | None, dict[str, int]] = {
        section: _string_list_fields(schema["$defs"][definition]["properties"])
        for section, definition in SECTION_DEFS.items()
    }
    top = _string_list_fields(schema["properties"])
    top.update(_string_list_fields(schema["properties"]["visibility_policy"]["properties"]))
    places[None] = top
    return places


@pytest.mark.parametrize("place", [*SECTION_DEFS, None], ids=[*SECTION_DEFS, "top-level"])
def test_list_limits_agree_with_the_schema_max_items(place: str | None) -> None:
    fields = _list_fields_by_place()[place]
    assert fields, f"no list fields found for {place}"
    for key, max_items in fields.items():
        assert key in LIST_FIELDS, f"{place}.{key} is a list in the schema but not in LIST_FIELDS"
        assert list_limit(place, key) == max_items, (
            f"{place}.{key}: list_limit says {list_limit(place, key)}, the schema {max_items}"
        )


def test_every_merge_list_field_is_a_list_in_the_schema_with_its_default_limit() -> None:
    places = _list_fields_by_place()
    for key, limit in LIST_LIMITS.items():
        found = {place: fields[key] for place, fields in places.items() if key in fields}
        assert found, f"LIST_LIMITS names {key}, which no schema object holds as a list"
        assert limit in found.values(), f"{key}: LIST_LIMITS says {limit}, the schema {found}"
    assert set(LIST_LIMITS) == set(LIST_FIELDS)


def test_row_sections_are_the_schema_row_lists() -> None:
    schema = _schema()
    for section, definition in SECTION_DEFS.items():
        assert schema["properties"][section]["items"] == {"$ref": f"#/$defs/{definition}"}
    assert set(ROW_SECTIONS) == set(SECTION_DEFS)


# -- visibility only goes up, and a sync names its conflicts (issue 13) --------------------


def test_a_remote_cannot_lower_a_row_even_through_the_policy_default() -> None:
    from bourdon.merge.threeway import merge3

    policy = {"default": "private"}
    ours = {
        "visibility_policy": policy,
        "known_entities": [{"name": "quiet", "summary": "kept here"}],
    }
    base = {"visibility_policy": policy, "known_entities": []}
    theirs = {
        "visibility_policy": {"default": "public"},
        "known_entities": [{"name": "quiet", "visibility": "public", "last_touched": "2099-01-01"}],
    }
    merged = merge3(base, ours, theirs)
    assert merged["known_entities"][0]["visibility"] == "private"
    assert merged["known_entities"][0]["summary"] == "kept here"


def test_merge3_names_each_conflict_its_fields_and_its_winner() -> None:
    from bourdon.merge.threeway import Conflict, merge3

    row = {"name": "x", "summary": "v1", "type": "project", "tags": ["a"]}
    base = {"known_entities": [row], "notes": [{"date": "2026-01-01", "text": "n"}]}
    ours = {
        "known_entities": [
            {**row, "summary": "ours", "tags": ["a", "b"], "last_touched": "2026-02-01"}
        ],
        "notes": [],
    }
    theirs = {
        "known_entities": [
            {**row, "summary": "theirs", "type": "library", "last_touched": "2026-03-01"}
        ],
        "notes": [{"date": "2026-01-01", "text": "n", "tags": ["edited"]}],
    }
    found: list[Conflict] = []
    merged = merge3(base, ours, theirs, found)
    assert [c.to_dict() for c in found] == [
        {"section": "known_entities", "row": "x", "fields": ["summary"], "winner": "remote"},
        {"section": "notes", "row": "2026-01-01 | n", "fields": ["(removed)"], "winner": "remote"},
    ]
    assert merged["known_entities"][0]["summary"] == "theirs"
    assert merged["notes"] == theirs["notes"]


# -- a regeneration's floor and reuse ----------------------------------------------------------
# The write path floors and reuses in whichever order looks at fewer rows; whatever the order,
# the result must be the plain composition: the floor over the regenerated rows, then every row
# equal to a current one given back as that very object (the caches key rows by identity).

READER = {"kind": "reader", "name": "claude-code", "machine": "laptop"}
OTHER = {"kind": "reader", "name": "claude-code", "machine": "desktop"}
LEVEL = st.sampled_from([None, "public", "team", "private"])
entity_rows = st.fixed_dictionaries(
    {"name": st.sampled_from(["orbit", "Orbit", "harbor", "quartz"]), "visibility": LEVEL},
    optional={"summary": st.sampled_from(["a parser", "the index"])},
)
note_rows = st.fixed_dictionaries(
    {"date": st.sampled_from(["2026-01-02", "2026-01-03"]), "text": st.sampled_from(["x", "y"])},
    optional={"visibility": LEVEL},
)
policies = st.one_of(
    st.none(), st.fixed_dictionaries({"default": st.sampled_from(["public", "team", "private"])})
)


def drop_none(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if v is not None}


@st.composite
def regenerations(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    def rows(strategy: Any, with_source: bool) -> list[dict[str, Any]]:
        out = [drop_none(r) for r in draw(st.lists(strategy, max_size=5))]
        if with_source:
            for row in out:
                row["source"] = draw(st.sampled_from([READER, OTHER]))
        return out

    current = base_manifest(known_entities=rows(entity_rows, True), notes=rows(note_rows, True))
    fresh = base_manifest(known_entities=rows(entity_rows, False), notes=rows(note_rows, False))
    # Some fresh rows are copies of current ones, as a reader gives back what it saw; some of
    # those come back with their visibility lowered or gone, for the floor to raise again.
    for section in ("known_entities", "notes"):
        for row in current[section]:
            how = draw(st.sampled_from(["none", "copy", "public", "unset"]))
            if row["source"] == READER and how != "none":
                copied = {k: v for k, v in row.items() if k not in ("source", "visibility")}
                if how == "copy" and "visibility" in row:
                    copied["visibility"] = row["visibility"]
                elif how == "public":
                    copied["visibility"] = "public"
                fresh[section].append(copied)
    for manifest, policy in ((current, draw(policies)), (fresh, draw(policies))):
        if policy is not None:
            manifest["visibility_policy"] = policy
    return current, fresh


@settings(max_examples=300, deadline=None)
@given(regenerations())
def test_a_regeneration_floors_then_reuses_whatever_order_it_takes(
    case: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    def dumps(row: object) -> str:
        return json.dumps(row, sort_keys=True)

    current, fresh = case
    current_rows = ("known_entities", "notes")
    kept = copy.deepcopy(current)
    result, _ = regenerating("claude-code", fresh, READER)(current)
    plain, _ = regenerate(kept, with_id(fresh, "claude-code"), READER)
    plain = keep_floor(plain, kept)
    assert dumps(result) == dumps(plain)
    if all(len({row_key(s, r) for r in current[s]}) == len(current[s]) for s in current_rows):
        assert lowered(current, result) == []  # (with keys held twice, whose floor is moot)
    for section in current_rows:
        for row in result.get(section, []):
            same = [old for old in current[section] if dumps(old) == dumps(row)]
            assert not same or any(old is row for old in same), (section, row)
