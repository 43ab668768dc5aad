"""Our answers have every key of the reference's, with its meaning (issue 11, item 4).

The reference's server (over stdio) and ours (in-process, the local operator) get the same
calls on two fresh libraries: commits creating two agents, a merge that updates, a no-op, every
read tool, history, explain of a known and an unknown digest, a stale write, a rollback, the
turn-start tools, the export and the resources. Every key path of each reference answer
(recursively, through the rows of lists) must be in ours, except the few differences written
down in ``ALLOWED`` with their reason. Then the values a reader of the contract would agree on
are compared: counts, found true/false, which rows the rollback restored.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client

from bourdon.access.trust import MemberRegistry
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.testing.serving import child_env, free_port, stop_process, wait_for_port
from tests.interop.harness import Reference, answer_of, call, http_client

pytestmark = pytest.mark.anyio

ALPHA = "alpha-agent"
BETA = "beta-agent"

# Keys whose children are data (agent ids), not names of the contract.
MAPS = {"summaries"}

# Deliberate differences: (call label, key path prefix) -> why ours has no such key.
ALLOWED: dict[tuple[str, str], str] = {
    ("describe_caller", "error"): (
        "the reference refuses to describe an unenrolled stdio caller ('not_configured'); "
        "ours describes the local operator, so there is no error to report"
    ),
    **{
        (f"agent-library://agents/{BETA}/memory", f"{section}[].origin"): (
            "the resource serves the stored manifest; the reference stamps its committed rows "
            "'origin: committed', bourdon stamps them 'source: {kind: commit, ...}' (and keeps an "
            "'origin' it reads from a reference library as it is)"
        )
        for section in ("known_entities", "recent_sessions", "known_workstreams", "notes")
    },
    **{
        ("trace_entity", f"attributions[].{rows}[].origin"): (
            "the trace quotes the stored rows; the reference stamps its committed rows "
            "'origin: committed', bourdon stamps them 'source: {kind: commit, ...}'"
        )
        for rows in ("matching_sessions", "matching_workstreams", "matching_notes")
    },
    **{
        ("compile_codex_turn", key): (
            "the reference's Codex brief (its schema codex-turn-brief/v1) adds its routing "
            "between delivery surfaces, their texts, its scoring diagnostics and trace; ours is "
            "the smaller brief of docs/federation.md (items with the reference's ranking keys, "
            "repo), so it does not claim that schema"
        )
        for key in (
            "schema_version",
            "health",
            "routing",
            "delivery",
            "diagnostics",
            "trace",
        )
    },
}

# Tools of the reference 0.32.2 that are newer than the tool contract (16 tools) bourdon
# follows; they are not part of this comparison.
REFERENCE_ONLY_TOOLS = {
    "capture_clip",
    "get_skill",
    "ingest_meeting",
    "list_skills",
    "propose_consensus",
    "propose_skill",
    "vote_consensus",
}
# bourdon's own additions: the health report, the traversal verbs and forget.
OUR_ONLY_TOOLS = {"memory_status", "expand_neighbors", "fetch_slice", "forget"}

PROMPT = "working on Ledgerline today"
FIRST_ALPHA: dict[str, Any] = {
    "agent_id": ALPHA,
    "agent_type": "code-assistant",
    "entities": [
        {"name": "Ledgerline", "type": "project", "summary": "books", "visibility": "team",
         "aliases": ["ledger-line"]},
        {"name": "secretproj", "summary": "hidden", "visibility": "private"},
    ],
    "sessions": [{"date": "2026-11-20", "cwd": "~/src/ledgerline", "project_focus": ["Ledgerline"],
                  "key_actions": ["split table"], "visibility": "team"}],
    "workstreams": [{"name": "Partition postings", "status": "active",
                     "related_entities": ["Ledgerline"], "visibility": "team"}],
    "notes": [{"date": "2026-11-21", "text": "remember partitions",
               "related_entities": ["Ledgerline"], "visibility": "team"}],
    "session_id": "s-1",
    "transcript_ref": "t/1.jsonl",
}  # fmt: skip
BETA_ROWS: dict[str, Any] = {
    "agent_id": BETA,
    "agent_type": "other",
    "entities": [{"name": "Ledgerline", "summary": "beta view", "visibility": "public"}],
    "workstreams": [{"name": "Partition postings", "status": "active", "visibility": "public"}],
    "sessions": [{"date": "2026-11-22", "cwd": "~/w", "project_focus": ["Ledgerline"],
                  "visibility": "public"}],
    "notes": [{"date": "2026-11-22", "text": "beta note", "visibility": "public"}],
}  # fmt: skip
UPDATE_ALPHA: dict[str, Any] = {
    "agent_id": ALPHA,
    "entities": [{"name": "Ledgerline", "summary": "books v2", "tags": ["go"]},
                 {"name": "newthing", "visibility": "team"}],
    "notes": [{"date": "2026-11-23", "text": "second note", "visibility": "team"}],
}  # fmt: skip
STALE = "sha256:" + "0" * 64
MEMBERS = [("trusty", "trusted"), ("desk-chat", "quarantined")]


@dataclass
class Run:
    """One server's answers, by call label, and its library."""

    library: Path
    answers: dict[str, Any] = field(default_factory=dict)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    resources: set[str] = field(default_factory=set)


async def drive(client: Client, run: Run) -> None:
    """The same calls, in the same order, to either server."""

    async def ask(label: str, tool: str, **args: Any) -> Any:
        run.answers[label] = answer_of(await client.call_tool(tool, args))
        return run.answers[label]

    first = await ask("commit alpha", "commit_to_federation", **FIRST_ALPHA)
    await ask("commit beta", "commit_to_federation", **BETA_ROWS)
    updated = await ask("commit update", "commit_to_federation", **UPDATE_ALPHA)
    await ask("commit no-op", "commit_to_federation", **UPDATE_ALPHA)
    await ask("list_agents", "list_agents")
    await ask("find_entity team", "find_entity", name="ledgerline", access_level="team")
    await ask("find_entity public", "find_entity", name="ledgerline")
    await ask("query_agent_memory", "query_agent_memory", agent=ALPHA, topic="ledgerline",
              access_level="team")  # fmt: skip
    await ask("get_cross_agent_summary", "get_cross_agent_summary", project="Ledgerline",
              access_level="team")  # fmt: skip
    await ask("list_recent_work", "list_recent_work", since="2026-11-01", access_level="team")
    await ask("list_workstreams", "list_workstreams", access_level="team")
    await ask("list_notes", "list_notes", since="2026-11-01", access_level="team")
    versions = await ask("list_memory_versions", "list_memory_versions", agent_id=ALPHA)
    await ask("explain known", "explain_memory_change", agent_id=ALPHA, digest=first["digest"])
    await ask("explain unknown", "explain_memory_change", agent_id=ALPHA, digest="deadbeef")
    await ask("stale write", "commit_to_federation", agent_id=ALPHA, entities=[{"name": "x"}],
              expected_digest=STALE)  # fmt: skip
    # The state the update replaced: the version whose digest is the first commit's.
    wanted = first["digest"].removeprefix("sha256:")[:8]
    chosen = next(v for v in versions["versions"] if v["digest8"] == wanted)
    run.answers["chosen version"] = chosen["version_id"]
    run.answers["update digest"] = updated["digest"]
    await ask("rollback", "rollback_agent_memory", agent_id=ALPHA, version_id=chosen["version_id"])
    await ask("list_memory_versions after", "list_memory_versions", agent_id=ALPHA)
    await ask("find_entity after", "find_entity", name="newthing", access_level="team")
    await ask("prepare_recognition_context", "prepare_recognition_context", prompt=PROMPT)
    await ask("get_deeper_context", "get_deeper_context", prompt=PROMPT)
    await ask("compile_codex_turn", "compile_codex_turn", prompt=PROMPT, cwd="/src/ledgerline")
    await ask("search_federation", "search_federation", query="ledgerline partitions")
    await ask("trace_entity", "trace_entity", entity="Ledgerline")
    await ask("compile_turn", "compile_turn", prompt=PROMPT, cwd="/src/ledgerline")
    await ask("export_agents", "export_agents")
    await ask("describe_caller", "describe_caller")

    for t in (await client.list_tools()).tools:
        hints = t.annotations.model_dump(exclude_none=True) if t.annotations else {}
        run.tools[t.name] = hints
        run.schemas[t.name] = t.input_schema
    run.resources = {str(r.uri) for r in (await client.list_resources()).resources} | {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    for uri in ("agent-library://agents", f"agent-library://agents/{BETA}/memory"):
        read = await client.read_resource(uri)
        run.answers[uri] = yaml.safe_load(getattr(read.contents[0], "text", "null"))


@dataclass
class Both:
    ref: Run
    ours: Run


@pytest.fixture(scope="module")
def both(reference: Reference, tmp_path_factory: pytest.TempPathFactory) -> Both:
    tmp = tmp_path_factory.mktemp("answers")
    home = tmp / "home"
    home.mkdir()
    ref, ours = Run(tmp / "ref-lib"), Run(tmp / "our-lib")
    Library.init(ours.library).close()

    async def main() -> None:
        async with Client(reference.stdio(ref.library, home)) as client:
            await drive(client, ref)
        server = create_server(ours.library, watch=False, home=home / ".bourdon-ours")
        async with Client(server) as client:
            await drive(client, ours)

    with pytest.MonkeyPatch.context() as env:  # neither server may see the real home
        env.setenv("HOME", str(home))
        env.setenv("BOURDON_HOME", str(home / ".bourdon-ours"))
        env.setenv("BOURDON_LIBRARY", str(ours.library))
        anyio.run(main)
    return Both(ref, ours)


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path of an answer: ``a.b``, ``rows[].name``, ``summaries.*`` for a map."""
    found: set[str] = set()
    if isinstance(value, Mapping):
        for key, child in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if prefix.rsplit(".", 1)[-1].removesuffix("[]") in MAPS:
                path = f"{prefix}.*"
            found.add(path)
            found |= key_paths(child, path)
    elif isinstance(value, list):
        for child in value:
            found |= key_paths(child, f"{prefix}[]")
    return found


def allowed(label: str, path: str) -> bool:
    return any(
        path == key or path.startswith((f"{key}.", f"{key}[]"))
        for (where, key) in ALLOWED
        if where == label
    )


LABELS = [
    "commit alpha", "commit beta", "commit update", "commit no-op", "list_agents",
    "find_entity team", "find_entity public", "query_agent_memory", "get_cross_agent_summary",
    "list_recent_work", "list_workstreams", "list_notes", "list_memory_versions",
    "explain known", "explain unknown", "stale write", "rollback", "list_memory_versions after",
    "find_entity after", "prepare_recognition_context", "get_deeper_context",
    "compile_codex_turn", "search_federation", "trace_entity", "compile_turn", "export_agents",
    "describe_caller",
    "agent-library://agents", f"agent-library://agents/{BETA}/memory",
]  # fmt: skip


def test_every_key_of_the_reference_answers_is_in_ours(both: Both) -> None:
    missing = {
        label: sorted(
            p
            for p in key_paths(both.ref.answers[label]) - key_paths(both.ours.answers[label])
            if not allowed(label, p)
        )
        for label in LABELS
    }
    assert {label: paths for label, paths in missing.items() if paths} == {}
    # The allow-list stays honest: every entry still names a key the reference has and we lack.
    for label, key in ALLOWED:
        lacking = key_paths(both.ref.answers[label]) - key_paths(both.ours.answers[label])
        assert any(p == key or p.startswith((f"{key}.", f"{key}[]")) for p in lacking), (
            f"ALLOWED names {label}: {key}, which is no longer missing"
        )


def test_the_comparison_covers_every_shared_tool_and_resource(both: Both) -> None:
    ref_tools, our_tools = set(both.ref.tools), set(both.ours.tools)
    assert ref_tools - our_tools == REFERENCE_ONLY_TOOLS
    assert our_tools - ref_tools == OUR_ONLY_TOOLS
    called = {"list_memory_versions", "explain_memory_change", "rollback_agent_memory",
              "commit_to_federation"} | {label.split()[0] for label in LABELS}  # fmt: skip
    assert ref_tools & our_tools <= called
    assert both.ref.resources == both.ours.resources
    # Annotations as the reference gives them, describe_caller (read-only, idempotent) too.
    for name in ref_tools & our_tools:
        assert both.ours.tools[name] == both.ref.tools[name], name


def test_the_newer_tools_take_every_parameter_of_the_reference_with_its_default(
    both: Both,
) -> None:
    for name in ("search_federation", "trace_entity", "compile_turn"):
        ref, ours = both.ref.schemas[name], both.ours.schemas[name]
        ours_props = ours.get("properties", {})
        for param, prop in ref.get("properties", {}).items():
            assert param in ours_props, f"{name} lacks {param}"
            assert ours_props[param].get("default") == prop.get("default"), f"{name}.{param}"
        assert set(ours.get("required", [])) == set(ref.get("required", [])), name


def test_search_trace_and_turn_brief_agree_with_the_reference_on_what_they_found(
    both: Both,
) -> None:
    for run in (both.ref, both.ours):
        search = run.answers["search_federation"]
        assert search["total_matches"] == len(search["results"]) > 0
        assert {hit["metadata"]["agent"] for hit in search["results"]} <= {ALPHA, BETA}
        assert "secretproj" not in str(search)
        trace = run.answers["trace_entity"]
        assert trace["matched"] is True and trace["name"] == "Ledgerline"
        assert set(trace["known_by"]) == {ALPHA, BETA}
        assert "hidden" not in str(trace)
        brief = run.answers["compile_turn"]
        assert any(item["name"] == "Ledgerline" for item in brief["items"])
    # Both find alpha's note, which names both words ("remember partitions", about Ledgerline).
    for run in (both.ref, both.ours):
        notes = [hit["doc_id"] for hit in run.answers["search_federation"]["results"]]
        assert any(d.startswith(f"note:{ALPHA}:2026-11-21") for d in notes), notes


def test_commit_counts_are_the_reference_counts(both: Both) -> None:
    counts = [f"{s}_{k}" for s in ("entities", "sessions", "workstreams", "notes")
              for k in ("added", "updated")] + [
        f"total_{s}" for s in ("entities", "sessions", "workstreams", "notes")]  # fmt: skip
    for label in ("commit alpha", "commit beta", "commit update", "commit no-op"):
        ref, ours = both.ref.answers[label], both.ours.answers[label]
        assert {k: ours[k] for k in counts} == {k: ref[k] for k in counts}, label
        assert (ours["agent_id"], ours["mode"]) == (ref["agent_id"], ref["mode"])
        assert ours.get("no_op") == ref.get("no_op"), label
        # For the local operator, path is the manifest's absolute path, as in the reference.
        assert Path(ours["path"]) == both.ours.library / "agents" / f"{ref['agent_id']}.l5.yaml"
        assert Path(ref["path"]).relative_to(both.ref.library) == Path(ours["path"]).relative_to(
            both.ours.library
        )
    update = both.ours.answers["commit update"]
    assert (update["entities_added"], update["entities_updated"], update["total_entities"]) == (
        1, 1, 3)  # fmt: skip


def test_history_explain_and_stale_write_answer_as_the_reference(both: Both) -> None:
    stamp = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    for run in (both.ref, both.ours):
        versions = run.answers["list_memory_versions"]
        assert versions["count"] == len(versions["versions"])
        for row in versions["versions"]:
            assert row["agent_id"] == ALPHA and stamp.fullmatch(row["taken_at"])
            assert isinstance(row["size_bytes"], int) and row["size_bytes"] > 0
    # Ours lists the current state too (docs/mcp-tools.md#list_memory_versions).
    assert both.ours.answers["list_memory_versions"]["count"] == (
        both.ref.answers["list_memory_versions"]["count"] + 1
    )

    ref, ours = both.ref.answers["explain known"], both.ours.answers["explain known"]
    assert ours["found"] is ref["found"] is True
    same = ("op", "caller", "session_id", "transcript_ref", "taint_floor", "base_digest", "counts")
    assert {k: ours["write"][k] for k in same} == {k: ref["write"][k] for k in same}
    assert ours["write"]["counts"] == {"entities_added": 2, "sessions_added": 1,
                                       "workstreams_added": 1, "notes_added": 1}  # fmt: skip

    ref, ours = both.ref.answers["explain unknown"], both.ours.answers["explain unknown"]
    assert ours["found"] is ref["found"] is False
    assert (ours["digest"], ours["detail"]) == (ref["digest"], ref["detail"]) == (
        "deadbeef", "no recorded write produced that state")  # fmt: skip

    for run in (both.ref, both.ours):
        stale = run.answers["stale write"]
        assert stale["current_digest"] == run.answers["update digest"]
        assert (stale["expected_digest"], stale["agent_id"], stale["mode"]) == (
            STALE, ALPHA, "merge")  # fmt: skip


def rows_of(library: Path, agent: str) -> dict[str, Any]:
    """An agent's rows as either implementation stores them, without their provenance."""
    data = yaml.safe_load((library / "agents" / f"{agent}.l5.yaml").read_text(encoding="utf-8"))

    def drop(row: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in row.items() if k not in ("source", "origin")}

    return {
        section: sorted((drop(r) for r in data.get(section) or []), key=repr)
        for section in ("known_entities", "recent_sessions", "known_workstreams", "notes")
    }


def test_a_plain_rollback_restores_the_same_rows_in_both(both: Both) -> None:
    for run in (both.ref, both.ours):
        done = run.answers["rollback"]
        assert done["restored_version"] == run.answers["chosen version"]
        assert done["replaced_digest"] == run.answers["update digest"]
        assert done["digest"] == run.answers["commit alpha"]["digest"]
        assert done["path"] == f"agents/{ALPHA}.l5.yaml"
        assert run.answers["find_entity after"]["matches"] == []
    assert rows_of(both.ours.library, ALPHA) == rows_of(both.ref.library, ALPHA)
    names = [e["name"] for e in rows_of(both.ours.library, ALPHA)["known_entities"]]
    assert sorted(names) == ["Ledgerline", "secretproj"]


def test_reads_agree_on_what_they_return(both: Both) -> None:
    ref, ours = both.ref.answers, both.ours.answers
    assert ours["list_agents"]["agents"] == ref["list_agents"]["agents"] == [ALPHA, BETA]
    for label in ("find_entity team", "find_entity public"):
        (r,), (o,) = ref[label]["matches"], ours[label]["matches"]
        assert (o["name"], sorted(o["agents"]), o["summaries"]) == (
            r["name"], sorted(r["agents"]), r["summaries"])  # fmt: skip

    def sessions(answer: dict[str, Any], key: str = "sessions") -> list[tuple[str, str]]:
        return [(s["agent"], s["date"]) for s in answer[key]]

    assert sessions(ours["list_recent_work"]) == sessions(ref["list_recent_work"])
    assert sessions(ours["get_cross_agent_summary"], "recent_sessions") == sessions(
        ref["get_cross_agent_summary"], "recent_sessions"
    )
    notes = [(n["agent"], n["date"], n["text"]) for n in ours["list_notes"]["notes"]]
    assert notes == [(n["agent"], n["date"], n["text"]) for n in ref["list_notes"]["notes"]]
    (r,), (o,) = ref["list_workstreams"]["workstreams"], ours["list_workstreams"]["workstreams"]
    assert (o["name"], o["status"], sorted(o["agents"])) == (
        r["name"], r["status"], sorted(r["agents"]))  # fmt: skip
    recognised = ours["prepare_recognition_context"], ref["prepare_recognition_context"]
    assert [m["name"] for m in recognised[0]["matched_entities"]] == ["Ledgerline"]
    assert [m["name"] for m in recognised[1]["matched_entities"]] == ["Ledgerline"]
    assert recognised[0]["confidence"] == recognised[1]["confidence"] == "medium"
    exported = {a["id"]: a["session_count"] for a in ours["export_agents"]["agents"]}
    assert exported == {a["id"]: a["session_count"] for a in ref["export_agents"]["agents"]}
    assert ours["agent-library://agents"] == ref["agent-library://agents"] == [ALPHA, BETA]


@contextlib.contextmanager
def our_http_server(library: Path, home: Path) -> Iterator[str]:
    """Our ``bourdon serve --transport http`` on 127.0.0.1; yields its MCP URL."""
    port = free_port()
    log = home / f"serve-{port}.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bourdon", "--library", str(library), "serve",
             "--transport", "http", "--host", "127.0.0.1", "--port", str(port), "--no-watch"],
            env=child_env(home), stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    try:
        wait_for_port(proc, port, timeout=60, log=log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


async def member_answers(url: str, trusted: str, quarantined: str) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    async with http_client(url, trusted) as client:
        answers["trusted commit"] = await call(
            client, "commit_to_federation", agent_id="trusty", agent_type="other",
            entities=[{"name": "shared-row", "visibility": "team"}])  # fmt: skip
    async with http_client(url, quarantined) as client:
        answers["staged commit"] = await call(
            client, "commit_to_federation", agent_id="desk-chat", agent_type="other",
            entities=[{"name": "waits", "visibility": "team"}])  # fmt: skip
    return answers


async def test_members_over_http_get_the_reference_keys_and_no_server_path(
    reference: Reference, tmp_path: Path
) -> None:
    ref_home, our_home = tmp_path / "ref-home", tmp_path / "our-home"
    ref_home.mkdir()
    our_home.mkdir()
    ref_lib, our_lib = tmp_path / "ref-lib", tmp_path / "our-lib"
    Library.init(our_lib).close()
    ref_tokens = [reference.add_member(ref_home, n, t) for n, t in MEMBERS]
    registry = MemberRegistry(our_home / ".bourdon")
    our_tokens = [registry.add(n, t) for n, t in MEMBERS]
    with reference.serve_http(ref_lib, ref_home) as url:
        ref = await member_answers(url, *ref_tokens)
    with our_http_server(our_lib, our_home) as url:
        ours = await member_answers(url, *our_tokens)

    for label in ("trusted commit", "staged commit"):
        assert key_paths(ref[label]) - key_paths(ours[label]) == set(), label
        assert ours[label]["agent_id"] == ref[label]["agent_id"]
    assert ours["staged commit"]["staged"] is ref["staged commit"]["staged"] is True
    assert ours["staged commit"]["path"] == ref["staged commit"]["path"] == (
        "staging/desk-chat/desk-chat.l5.yaml")  # fmt: skip
    # The reference shows a member its absolute server path; ours never does.
    assert Path(ref["trusted commit"]["path"]).is_absolute()
    assert ours["trusted commit"]["path"] == "agents/trusty.l5.yaml"
    counts = ("entities_added", "entities_updated", "total_entities")
    assert [ours["trusted commit"][k] for k in counts] == [
        ref["trusted commit"][k] for k in counts] == [1, 0, 1]  # fmt: skip
