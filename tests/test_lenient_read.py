"""Every manifest the Bourdon L5 schema accepts is served, and a bad row hides only itself.

Issue 11, item 3. The manifests below are written by hand the way other Bourdon writers write
them (the reference implementation 0.32.2 stamps ``origin: committed``, quotes its dates, leaves
empty sections as ``[]``; other writers put ``source`` as a string). Each is checked against the
reference's own schema file (the ``reference_schema`` fixture: the real package's
``L5_schema.json``), then served from a real library: the index over the files, the MCP server in-process, ``bourdon status`` / ``doctor`` in-process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from mcp import Client

from bourdon.cli.main import main
from bourdon.errors import SchemaError
from bourdon.formats import reading, schema
from bourdon.merge.threeway import merge3
from bourdon.model import Visibility, row_visibility
from bourdon.query.index import Index
from bourdon.serve.server import create_server
from bourdon.store.git.process import run_git
from bourdon.store.library import Library
from bourdon.store.manifestcache import ManifestCache, content_id

# What the reference server wrote for two commits of alpha-agent (a row of each kind).
REFERENCE_WRITTEN = """\
spec_version: '0.1'
agent:
  id: alpha-agent
  type: code-assistant
last_updated: '2026-12-01T13:59:28.728347+00:00'
recent_sessions:
- date: '2026-11-20'
  cwd: ~/src/ledgerline
  key_actions:
  - split table
  origin: committed
known_entities:
- name: Ledgerline
  type: project
  summary: books
  visibility: team
  aliases:
  - ledger-line
  origin: committed
- name: secretproj
  summary: hidden
  visibility: private
  origin: committed
known_workstreams: []
notes:
- date: '2026-11-21'
  text: remember partitions
  origin: committed
"""

HEAD = """\
spec_version: '0.1'
agent:
  id: alpha-agent
  type: code-assistant
last_updated: '2026-12-01T13:59:28+00:00'
"""

# (id, manifest text, expected served rows: entity names, session count, workstreams, notes)
ACCEPTED: list[tuple[str, str, dict[str, Any]]] = [
    (
        "reference-commit-output",
        REFERENCE_WRITTEN,
        {"entities": ["Ledgerline", "secretproj"], "sessions": 1, "workstreams": [], "notes": 1},
    ),
    (
        "source-as-a-string",
        HEAD
        + """known_entities:
- name: Quartz
  source: some-writer
recent_sessions:
- date: '2026-11-02'
  source: some-writer
notes:
- date: '2026-11-03'
  text: kept
  source: some-writer
""",
        {"entities": ["Quartz"], "sessions": 1, "workstreams": [], "notes": 1},
    ),
    (
        "skills-supersedes-and-spec-version-compat",
        """\
spec_version: '0.1'
agent:
  id: alpha-agent
  type: code-assistant
  spec_version_compat: '>=0.1'
last_updated: '2026-12-01T13:59:28Z'
skills:
- name: release-checklist
  description: Steps to cut a release
  content_sha256: abababababababababababababababababababababababababababababababab
  scope: user
  path_hint: ~/.claude/skills/release-checklist
known_entities:
- name: Orchard
  supersedes:
  - Lantern
- name: Lantern
  superseded_by: Orchard
""",
        {"entities": ["Orchard", "Lantern"], "sessions": 0, "workstreams": [], "notes": 0},
    ),
    (
        "unknown-fields-everywhere",
        HEAD
        + """producer: elsewhere
visibility_policy:
  default: team
  reviewed_by: ada
known_entities:
- name: Basalt
  confidence: high
  extra:
    nested:
    - one
known_workstreams:
- name: Migrate
  status: active
  owner: ada
""",
        {"entities": ["Basalt"], "sessions": 0, "workstreams": ["Migrate"], "notes": 0},
    ),
    (
        "bounds-the-bourdon-schema-does-not-set",
        HEAD
        + "visibility_policy:\n  private_tags:\n"
        + "".join(f"  - p{i}\n" for i in range(40))
        + "known_entities:\n- name: Wide\n  aliases:\n  - "
        + "a" * 200
        + "\n  tags:\n"
        + "".join(f"  - t{i}\n" for i in range(40))
        + "  - ''\n"
        + "recent_sessions:\n- date: ''\n  session_id: "
        + "s" * 300
        + "\n  key_actions:\n  - ''\n  project_focus:\n"
        + "".join(f"  - f{i}\n" for i in range(20))
        + "  files_touched:\n  - "
        + "d/" * 700
        + "\nnotes:\n- date: '2026-11-04'\n  text: ''\n  related_entities:\n  - "
        + "r" * 300
        + "\ncapabilities:\n- ''\n",
        {"entities": ["Wide"], "sessions": 1, "workstreams": [], "notes": 1},
    ),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def lib(tmp_path: Path) -> Iterator[Library]:
    library = Library.init(tmp_path / "lib")
    yield library
    library.close()


def put(library: Library, text: str, agent_id: str = "alpha-agent", *, commit: bool = True) -> Path:
    """Write a manifest as another tool would: the file, then (optionally) a plain git commit."""
    path = library.root / "agents" / f"{agent_id}.l5.yaml"
    path.write_text(text, encoding="utf-8")
    if commit:
        run_git(library.root, "add", "--", str(path))
        run_git(
            library.root,
            "-c",
            "user.name=Other Writer",
            "-c",
            "user.email=other@example.com",
            "commit",
            "-qm",
            f"write {agent_id}",
        )
    return path


def served(library: Library) -> Index:
    index = Index(library.root)
    index.refresh()
    return index


def test_reference_fields_and_string_sources_are_described_by_the_read_rules() -> None:
    read = reading.read_schema()
    entity = read["$defs"]["entity"]["properties"]
    assert entity["origin"] == {"enum": ["committed"]}
    assert {"supersedes", "superseded_by"} <= set(entity)
    assert "skills" in read["properties"]
    # The write rules stay strict: what bourdon produces is unchanged.
    assert schema.schema()["$defs"]["entity"]["additionalProperties"] is False
    assert "origin" not in schema.schema()["$defs"]["entity"]["properties"]


@pytest.mark.parametrize(("case", "text", "expected"), ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_a_manifest_the_bourdon_schema_accepts_is_served_whole(
    lib: Library, reference_schema: Path, case: str, text: str, expected: dict[str, Any]
) -> None:
    import jsonschema

    reference = json.loads(reference_schema.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(reference, format_checker=jsonschema.FormatChecker()).validate(
        yaml.safe_load(text)
    )
    put(lib, text)
    index = served(lib)
    assert index.problems == {}
    assert index.row_problems == {}, index.row_warnings(2)
    view = index.agents["alpha-agent"]
    assert [e.name for e in view.entities] == expected["entities"]
    assert len(view.sessions) == expected["sessions"]
    assert [w.name for w in view.workstreams] == expected["workstreams"]
    assert len(view.notes) == expected["notes"]
    # The library reads it too (writes and history start from this), with every row.
    assert lib.read("alpha-agent").data == yaml.safe_load(text)
    assert lib.read_problems("alpha-agent") == ()


def bad_row_manifest() -> str:
    return (
        HEAD
        + """known_entities:
- name: Alder
  summary: first
- name: Birch
  last_touched: yesterday
- name: Cedar
  visibility: private
  valid_to: 2026-13-45
- name: Dogwood
  visibility: privat
- name: Elm
"""
    )


def test_a_bad_row_is_left_out_and_named_and_the_rest_of_the_manifest_serves(
    lib: Library,
) -> None:
    put(lib, bad_row_manifest())
    index = served(lib)
    assert index.problems == {}
    view = index.agents["alpha-agent"]
    assert [e.name for e in view.entities] == ["Alder", "Elm"]
    assert [r["name"] for r in view.served_data["known_entities"]] == ["Alder", "Elm"]
    assert len(view.data["known_entities"]) == 5  # the file's content, as digests count it
    assert index.row_warnings(int(Visibility.PRIVATE)) == [
        "agents/alpha-agent.l5.yaml: known_entities[1] (name 'Birch'): field 'last_touched': "
        "is not a valid date (YYYY-MM-DD) (left out; the rest of the file is served)",
        # Private rows: no name, and the value is never quoted.
        "agents/alpha-agent.l5.yaml: known_entities[2]: field 'valid_to': "
        "is not a valid date (YYYY-MM-DD) (left out; the rest of the file is served)",
        "agents/alpha-agent.l5.yaml: known_entities[3]: field 'visibility': "
        "must be one of public, team, private (left out; the rest of the file is served)",
    ]
    # A caller who may not see private rows is not told about them, not even as a count.
    assert index.row_warnings(int(Visibility.TEAM)) == index.row_warnings(2)[:1]
    assert index.row_warnings(int(Visibility.PUBLIC)) == []


def test_a_typo_in_visibility_never_shares_a_row_wider() -> None:
    assert row_visibility({"visibility": "privat"}, {"default": "public"}) is Visibility.PRIVATE
    assert row_visibility({"tags": [{"a": 1}]}, {"private_tags": ["a"]}) is Visibility.PRIVATE
    assert row_visibility({"visibility": "team"}, {"default": "public"}) is Visibility.TEAM


def test_a_broken_top_level_still_skips_the_whole_manifest(lib: Library) -> None:
    put(lib, HEAD.replace("code-assistant", "robot"), commit=False)
    put(lib, "agent: [broken\n", "beta-agent", commit=False)
    index = served(lib)
    assert index.agents == {}
    assert sorted(index.problems) == ["alpha-agent.l5.yaml", "beta-agent.l5.yaml"]
    assert "/agent/type" in index.problems["alpha-agent.l5.yaml"]


def test_a_bad_last_updated_is_reported_but_the_agent_is_served(lib: Library) -> None:
    put(lib, HEAD.replace("2026-12-01T13:59:28+00:00", "last tuesday") + "notes: []\n")
    index = served(lib)
    assert "alpha-agent" in index.agents
    assert index.row_warnings(1) == [
        "agents/alpha-agent.l5.yaml: field 'last_updated': is not an RFC 3339 date-time such as "
        "'2026-11-30T09:15:00Z' (left out; the rest of the file is served)"
    ]


def test_the_parsed_cache_keeps_the_problems_of_the_rows_it_does_not_serve(
    tmp_path: Path,
) -> None:
    raw = bad_row_manifest().encode()
    first = ManifestCache(tmp_path / "cache").read(raw, what="agents/alpha-agent.l5.yaml")
    again = ManifestCache(tmp_path / "cache").get(content_id(raw))
    assert again is not None
    assert again == first
    assert [p.row for p in again.problems] == [1, 2, 3]


# -- writes keep what they do not change ----------------------------------------------------


def test_a_commit_into_a_reference_manifest_keeps_origin_on_the_old_rows(lib: Library) -> None:
    put(lib, REFERENCE_WRITTEN)
    before = yaml.safe_load(REFERENCE_WRITTEN)
    lib.commit("alpha-agent", {"known_entities": [{"name": "Ledgerline", "summary": "books v2"}]})
    after = lib.read("alpha-agent").data
    ledgerline, secret = after["known_entities"]
    assert ledgerline["origin"] == "committed" and ledgerline["summary"] == "books v2"
    assert secret == before["known_entities"][1]
    assert after["recent_sessions"] == before["recent_sessions"]
    assert after["notes"] == before["notes"]
    text = lib.read_bytes("alpha-agent").decode()
    assert text.count("\n    origin: committed\n") == 4  # every old row, the updated one too


def test_a_caller_still_cannot_send_fields_bourdon_does_not_write(lib: Library) -> None:
    put(lib, REFERENCE_WRITTEN)
    with pytest.raises(SchemaError, match="origin"):
        lib.commit("alpha-agent", {"known_entities": [{"name": "New", "origin": "committed"}]})
    with pytest.raises(SchemaError, match="origin"):
        lib.commit("alpha-agent", {"known_entities": [{"name": "Ledgerline", "origin": "forged"}]})
    with pytest.raises(SchemaError, match="skills"):
        lib.commit("alpha-agent", {"skills": []})


def test_a_bad_row_on_disk_is_neither_deleted_nor_blocking_a_later_write(lib: Library) -> None:
    put(lib, bad_row_manifest())
    index = served(lib)  # loaded before the write, as a running server is
    bad = lib.read("alpha-agent").data["known_entities"][1:4]
    done = lib.commit("alpha-agent", {"known_entities": [{"name": "Fir"}, {"name": "Birch"}]})
    assert not done.no_op
    rows = lib.read("alpha-agent").data["known_entities"]
    assert [r["name"] for r in rows] == ["Alder", "Birch", "Cedar", "Dogwood", "Elm", "Fir"]
    assert rows[2:4] == bad[1:]
    assert rows[1]["last_touched"] == "yesterday"  # the change touched it; the typo is the user's
    index.refresh()
    names = [e.name for e in index.agents["alpha-agent"].entities]
    assert names == ["Alder", "Elm", "Fir"]
    assert [p.row for p in index.row_problems["alpha-agent.l5.yaml"]] == [1, 2, 3]


def test_regeneration_keeps_committed_rows_of_every_writer(lib: Library) -> None:
    mine = {"kind": "reader", "name": "claude-code", "machine": lib.machine}
    put(
        lib,
        yamlio_dump(
            {
                "spec_version": "0.1",
                "agent": {"id": "claude-code", "type": "code-assistant"},
                "last_updated": "2026-12-01T13:59:28Z",
                "known_entities": [
                    {"name": "Committed", "origin": "committed"},
                    # A reader later updated a committed row: it stays committed.
                    {"name": "Touched", "origin": "committed", "source": mine},
                    {"name": "Named", "source": "claude-code"},
                    {"name": "Stale", "source": mine},
                ],
            }
        ),
        "claude-code",
    )
    lib.regenerate("claude-code", {"known_entities": [{"name": "Fresh"}]}, reader="claude-code")
    rows = lib.read("claude-code").data["known_entities"]
    assert [r["name"] for r in rows] == ["Committed", "Touched", "Named", "Fresh"]
    assert rows[2]["source"] == "claude-code"  # a string source is written back as it is


def test_a_rollback_writes_the_old_bytes_with_their_unknown_fields(lib: Library) -> None:
    put(lib, REFERENCE_WRITTEN)
    first = lib.history("alpha-agent")[0].version_id
    original = lib.read_bytes("alpha-agent")
    lib.commit("alpha-agent", {"notes": [{"date": "2026-11-30", "text": "later"}]})
    lib.rollback("alpha-agent", first)
    assert lib.read_bytes("alpha-agent") == original


def test_an_import_takes_a_reference_manifest_as_written(tmp_path: Path, lib: Library) -> None:
    text = ACCEPTED[2][1].replace("Lantern\n- name", "Lantern\n  last_touched: soon\n- name", 1)
    lib.import_manifest(text.encode(), what="alpha.yaml")
    data = lib.read("alpha-agent").data
    assert data["skills"] == yaml.safe_load(text)["skills"]
    assert data["agent"]["spec_version_compat"] == ">=0.1"
    assert [r["name"] for r in data["known_entities"]] == ["Orchard", "Lantern"]
    [problem] = lib.read_problems("alpha-agent")
    assert (problem.section, problem.row, problem.field) == ("known_entities", 0, "last_touched")


def test_a_sync_merge_keeps_unknown_fields_and_validates_as_a_write() -> None:
    base = yaml.safe_load(REFERENCE_WRITTEN)
    base["skills"] = [{"name": "x"}]
    ours = json.loads(json.dumps(base))
    ours["known_entities"][0]["summary"] = "ours"
    theirs = json.loads(json.dumps(base))
    theirs["known_entities"][0]["tags"] = ["theirs"]
    merged = merge3(base, ours, theirs)
    assert merged["skills"] == [{"name": "x"}]
    row = merged["known_entities"][0]
    assert (row["origin"], row["summary"], row["tags"]) == ("committed", "ours", ["theirs"])
    schema.validate(merged, trusted=ours, also=theirs)


# -- every surface names the file, the row and the field -----------------------------------


def test_status_and_doctor_list_every_skipped_row_with_its_fix(
    lib: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    put(lib, bad_row_manifest())
    assert main(["--library", str(lib.root), "status", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    agent = report["agents"]["agents"]["alpha-agent"]
    assert agent["rows"]["known_entities"] == 2  # only the rows served are counted
    assert [(s["section"], s["row"], s["name"], s["field"]) for s in agent["skipped_rows"]] == [
        ("known_entities", 1, "Birch", "last_touched"),
        ("known_entities", 2, None, "valid_to"),
        ("known_entities", 3, None, "visibility"),
    ]
    skipped = [p for p in report["problems"] if p["code"] == "row_skipped"]
    assert len(skipped) == 3
    assert skipped[0]["message"].startswith(
        "agents/alpha-agent.l5.yaml: known_entities[1] (name 'Birch'): field 'last_touched': "
    )
    assert skipped[0]["fix"].startswith("${EDITOR:-vi} ")

    assert main(["--library", str(lib.root), "status"]) == 0
    out = capsys.readouterr().out
    assert "No problem found" not in out
    assert "known_entities[2]: field 'valid_to'" in out

    main(["--library", str(lib.root), "doctor"])
    out = capsys.readouterr().out
    assert "row_skipped: agents/alpha-agent.l5.yaml: known_entities[3]: field 'visibility'" in out
    assert f"git -C {lib.root} commit -m 'fix alpha-agent' -- agents/alpha-agent.l5.yaml" in out


@pytest.mark.anyio
async def test_memory_status_and_answers_name_the_row_the_caller_may_see(lib: Library) -> None:
    put(lib, bad_row_manifest())
    async with Client(create_server(lib.root)) as client:
        status = (await client.call_tool("memory_status", {})).structured_content
        assert status is not None
        rows = status["agents"]["agents"]["alpha-agent"]["skipped_rows"]
        assert [(r["row"], r["field"]) for r in rows] == [
            (1, "last_touched"),
            (2, "valid_to"),
            (3, "visibility"),
        ]
        assert {p["code"] for p in status["problems"]} >= {"row_skipped"}
        found = (
            await client.call_tool("find_entity", {"name": "alder", "access_level": "team"})
        ).structured_content
        assert found is not None
        assert [m["name"] for m in found["matches"]] == ["Alder"]
        assert found["meta"]["warnings"] == [
            "agents/alpha-agent.l5.yaml: known_entities[1] (name 'Birch'): field "
            "'last_touched': is not a valid date (YYYY-MM-DD) (left out; the rest of the file "
            "is served)"
        ]


def yamlio_dump(data: dict[str, Any]) -> str:
    from bourdon.formats import yamlio

    return yamlio.dump(data).decode()


def test_a_hand_edit_that_brings_a_bad_row_is_served_without_it_but_not_committed(
    lib: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    from bourdon.errors import LibraryError

    put(lib, REFERENCE_WRITTEN)
    head = lib.head()
    path = put(
        lib,
        REFERENCE_WRITTEN.replace(
            "  summary: books\n", "  summary: books\n  valid_from: someday\n"
        ),
        commit=False,
    )
    index = served(lib)
    assert [e.name for e in index.agents["alpha-agent"].entities] == ["secretproj"]
    # The user is there to fix what they just typed: the write says where, and waits.
    with pytest.raises(LibraryError, match=r"known_entities\[0\] \(name 'Ledgerline'\): field "):
        lib.commit("alpha-agent", {"notes": [{"date": "2026-11-30", "text": "later"}]})
    assert lib.head() == head
    main(["--library", str(lib.root), "doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    [problem] = [p for p in report["problems"] if p["code"] == "hand_edit_invalid"]
    assert "field 'valid_from'" in problem["message"]
    assert problem["fix"] == f"git -C {lib.root} checkout -- agents/alpha-agent.l5.yaml"
    assert path.exists()


def test_control_characters_leave_the_row_out_and_are_named_without_the_text(
    lib: Library,
) -> None:
    put(
        lib,
        HEAD
        + 'notes:\n- date: "2026-11-05"\n  text: "red \\e[31m alert"\n- date: "2026-11-06"\n  text: fine\n',
    )
    index = served(lib)
    assert [n.text for n in index.agents["alpha-agent"].notes] == ["fine"]
    [problem] = index.row_problems["alpha-agent.l5.yaml"]
    assert (problem.section, problem.row, problem.field) == ("notes", 0, "text")
    assert "alert" not in problem.message("x") and "\\x1b" in problem.reason


def test_status_looks_at_the_files_the_server_serves_not_only_at_head(
    lib: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    put(lib, REFERENCE_WRITTEN)
    put(lib, bad_row_manifest().replace("alpha-agent", "beta-agent"), "beta-agent", commit=False)
    assert main(["--library", str(lib.root), "status"]) == 0
    out = capsys.readouterr().out
    assert "No problem found" not in out
    assert "hand_edit_invalid: agents/beta-agent.l5.yaml was edited by hand" in out
    assert "known_entities[1] (name 'Birch'): field 'last_touched'" in out


def test_a_sync_carries_a_reference_manifest_to_another_machine_as_written(
    tmp_path: Path,
) -> None:
    from bourdon.replicate.remotes import add_remote
    from bourdon.replicate.sync import sync
    from bourdon.testing.remotes import bare_repository

    remote = bare_repository(tmp_path / "remote.git")
    laptop = Library.init(tmp_path / "laptop", machine="laptop")
    desktop = Library.init(tmp_path / "desktop", machine="desktop")
    try:
        for library in (laptop, desktop):
            add_remote(library, "origin", str(remote))
        text = REFERENCE_WRITTEN.replace("  summary: books\n", "  summary: books\n  x: 1\n")
        put(laptop, text.replace("  aliases:", "  last_touched: soon\n  aliases:"))
        sync(laptop, "origin")
        sync(desktop, "origin")
        on_laptop = laptop.read("alpha-agent").data
        got = desktop.read("alpha-agent").data
        # Team rows travel with every field they carry; the private row stays on the laptop.
        assert got["known_entities"] == on_laptop["known_entities"][:1]
        assert got["recent_sessions"] == on_laptop["recent_sessions"]
        assert got["known_entities"][0]["origin"] == "committed"
        [problem] = desktop.read_problems("alpha-agent")
        assert (problem.row, problem.field) == (0, "last_touched")
        # Both sides change the manifest; the three-way merge keeps every unknown field.
        laptop.commit("alpha-agent", {"notes": [{"date": "2026-11-30", "text": "from laptop"}]})
        desktop.commit("alpha-agent", {"known_entities": [{"name": "Ledgerline", "tags": ["d"]}]})
        sync(laptop, "origin")
        sync(desktop, "origin")
        sync(laptop, "origin")
        row = laptop.read("alpha-agent").data["known_entities"][0]
        assert (row["origin"], row["x"], row["tags"]) == ("committed", "1", ["d"])
        assert [n["text"] for n in desktop.read("alpha-agent").data["notes"]] == [
            "remember partitions",
            "from laptop",
        ]
    finally:
        laptop.close()
        desktop.close()


def test_empty_values_read_as_absent_fields(lib: Library) -> None:
    put(
        lib,
        HEAD + "capabilities:\nnotes:\nknown_entities:\n- name: Hollow\n  valid_to:\n  tags:\n",
    )
    index = served(lib)
    assert index.problems == {} and index.row_problems == {}
    [row] = index.agents["alpha-agent"].entities
    assert (row.name, row.tags, row.visibility) == ("Hollow", (), Visibility.TEAM)
    lib.commit("alpha-agent", {"notes": [{"date": "2026-11-30", "text": "one"}]})
    data = lib.read("alpha-agent").data
    assert data["known_entities"] == [{"name": "Hollow", "valid_to": None, "tags": None}]
    assert [n["text"] for n in data["notes"]] == ["one"]


# -- a property: whatever the reference's schema accepts, every row of it is served -----------

_TEXT = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\ufffe\uffff"),
    max_size=40,
)
_DATE = st.dates(min_value=date(2000, 1, 1), max_value=date(2099, 12, 31)).map(str)
_LIST = st.lists(_TEXT, max_size=40)
_VISIBILITY = st.sampled_from(["public", "team", "private"])
_UNKNOWN = st.dictionaries(
    st.sampled_from(["confidence", "weight", "x-tool", "producer"]), _TEXT, max_size=2
)


def _row(required: dict[str, Any], optional: dict[str, Any]) -> Any:
    return st.fixed_dictionaries(
        required, optional={**optional, "visibility": _VISIBILITY, "origin": st.just("committed")}
    ).flatmap(lambda row: _UNKNOWN.map(lambda extra: {**extra, **row}))


_ENTITY = _row(
    {
        "name": st.text(min_size=1, max_size=128).filter(
            lambda s: s.strip() == s and s.isprintable()
        )
    },
    {
        "type": st.text(max_size=64).filter(str.isprintable),
        "aliases": st.lists(_TEXT, max_size=16),
        "summary": _TEXT,
        "last_touched": _DATE,
        "tags": _LIST,
        # A new object each time: PyYAML writes one object met twice as an anchor, which
        # bourdon's reader refuses whole (alias bombs), whatever the schema says.
        "source": st.one_of(_TEXT, st.builds(lambda: {"kind": "reader", "name": "elsewhere"})),
        "supersedes": st.lists(
            st.text(min_size=1, max_size=20).filter(str.isprintable), max_size=3
        ),
    },
)
_SESSION = _row(
    {"date": st.one_of(_DATE, st.just(""))},
    {
        "cwd": _TEXT,
        "key_actions": st.lists(_TEXT, max_size=10),
        "files_touched": st.lists(_TEXT, max_size=50),
        "project_focus": _LIST,
    },
)
_NOTE = _row({"date": _DATE, "text": _TEXT}, {"related_entities": st.lists(_TEXT, max_size=16)})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entities=st.lists(_ENTITY, max_size=4, unique_by=lambda r: r["name"].casefold()),
    sessions=st.lists(_SESSION, max_size=3),
    notes=st.lists(_NOTE, max_size=3),
    private_tags=_LIST,
)
def test_every_row_of_a_manifest_the_reference_schema_accepts_is_served(
    reference_schema: Path,
    entities: list[dict[str, Any]],
    sessions: list[dict[str, Any]],
    notes: list[dict[str, Any]],
    private_tags: list[str],
) -> None:
    import jsonschema

    manifest = {
        "spec_version": "0.1",
        "agent": {"id": "alpha-agent", "type": "code-assistant"},
        "last_updated": "2026-12-01T13:59:28.728347+00:00",
        "visibility_policy": {"private_tags": private_tags},
        "known_entities": entities,
        "recent_sessions": sessions,
        "notes": notes,
    }
    reference = json.loads(reference_schema.read_text(encoding="utf-8"))
    checker = jsonschema.Draft202012Validator(reference, format_checker=jsonschema.FormatChecker())
    assume(checker.is_valid(manifest))
    text = yaml.safe_dump(manifest, allow_unicode=True, sort_keys=False)
    found = reading.read_manifest(text.encode(), what="agents/alpha-agent.l5.yaml")
    assert found.problems == ()
    assert found.data == yaml.safe_load(text)
