"""The library, the staging area and the member registry against a simple model (hypothesis).

Acceptance point: a state machine over merge, replace, rollback, stage, promote, reject, revoke,
rotate and reads keeps the library equal to a simple model after every step.

Everything is real: a git-backed library in a temporary folder per example, a member registry in
a temporary ``BOURDON_HOME``, and the MCP server reached through the SDK's in-process client
(kept open for the whole run on a blocking portal). Writes go in three ways: the operator
straight through ``Library.commit``, the operator through the MCP tool, and a trusted member
through the MCP tool; quarantined members stage through the MCP tool under their own agent id,
and only after their token authenticates, as the HTTP front door would check it.

The model is deliberately small: per agent its type, whether it has a ``known_entities`` section
at all, and its entity rows in order (name as first spelled, summary, tags, the name of the
caller whose write last touched the row). Merge, replace, stage and promote are written out
here from the documented merge rules (docs/manifest-format.md), not taken from ``bourdon.merge``.

Each write in the library takes a timestamp (``last_updated``, to the second). To make every
run reproducible the library's clock is replaced by one that ticks a second per write, so a
write never lands "in the same second" as the one before it by chance.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from mcp import Client
from mcp.types import TextResourceContents

from bourdon.access.callers import Caller
from bourdon.access.trust import MemberRegistry
from bourdon.digest import digest
from bourdon.errors import NotFoundError
from bourdon.model import Visibility, fold
from bourdon.query import reads
from bourdon.query.index import Index
from bourdon.serve import httpgate
from bourdon.serve.server import create_server
from bourdon.store import writes as writes_module
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance

AGENTS = ("alpha", "beta", "bot1", "bot2")
TYPES = ("code-assistant", "note-capture", "other")
QUARANTINED = ("bot1", "bot2")  # members that stage under their own agent id
TRUSTED = ("lead",)  # a member whose writes are live
MEMBERS = QUARANTINED + TRUSTED
# Names that collide ignoring case and spacing, so merges match rows by their folded name.
NAMES = ("orbit", "Orbit", "harbor", "HARBOR", "falcon", "ledger line", "Ledger  Line")
SUMMARIES = ("first summary", "second summary", "third summary")
TAGS = ("infra", "docs", "ops", "ui")
# How a live write reaches the library: who writes (the row's source) and by which path.
WRITERS = ("operator", "operator-mcp", "lead")

EXAMPLES = 40
STEPS = 20
# As in test_yamlio: the same examples on every run, and a failure reported as first found
# (shrinking a failing run takes minutes); BOURDON_HYPOTHESIS_SHRINK=1 shrinks it.
_SHRINK = os.environ.get("BOURDON_HYPOTHESIS_SHRINK") == "1"

RUN_STATS = {"examples": 0, "steps": 0}
RULES_RUN: Counter[str] = Counter()


# -- the model ---------------------------------------------------------------------------


@dataclass
class Content:
    """What the model knows of one manifest (live or staged)."""

    type: str
    has_section: bool = False  # whether 'known_entities' is in the manifest at all
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)  # folded name -> row, in order

    def copy(self) -> Content:
        return Content(self.type, self.has_section, {k: dict(v) for k, v in self.rows.items()})

    def frozen(self) -> tuple[Any, ...]:
        return (self.type, self.has_section, tuple(_frozen_row(r) for r in self.rows.values()))


def _frozen_row(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in row.items()))


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def model_row(raw: dict[str, Any], source: str | None) -> dict[str, Any]:
    """A row as the merge rules store it: nulls dropped, lists without repeats, source set."""
    row: dict[str, Any] = {"name": raw["name"], "visibility": raw["visibility"]}
    if raw.get("summary") is not None:
        row["summary"] = raw["summary"]
    if raw.get("tags") is not None:
        row["tags"] = _dedupe(list(raw["tags"]))
    row["source"] = raw.get("source", source)
    return row


def merge_rows(
    rows: dict[str, dict[str, Any]], given: list[dict[str, Any]], source: str | None
) -> dict[str, dict[str, Any]]:
    """The documented merge of entity rows: match by folded name, union tags, overwrite scalars,
    keep the first spelling of the name, append new rows at the end."""
    out = {k: dict(v) for k, v in rows.items()}
    for raw in given:
        row = model_row(raw, source)
        key = fold(row["name"])
        if key not in out:
            out[key] = row
            continue
        merged = dict(out[key])
        for name, value in row.items():
            if name == "name":
                continue
            if name == "tags":
                merged["tags"] = _dedupe([*out[key].get("tags", []), *value])
            else:
                merged[name] = value
        out[key] = merged
    return out


def model_merge(
    current: Content | None, agent_type: str, rows: list[dict[str, Any]], source: str | None
) -> Content:
    base = current or Content(agent_type)
    merged = merge_rows(base.rows, rows, source)
    return Content(base.type, base.has_section or bool(merged), merged)


def model_replace(
    current: Content | None, agent_type: str, rows: list[dict[str, Any]], source: str
) -> Content:
    kept_type = current.type if current else agent_type
    return Content(kept_type, True, merge_rows({}, rows, source))


def model_promote(current: Content | None, staged: Content) -> Content:
    if current is None:
        return staged.copy()
    if not staged.has_section:
        return current.copy()
    return model_merge(current, current.type, list(staged.rows.values()), None)


@dataclass
class MemberState:
    token: str
    tier: str
    active: bool = True
    old_tokens: list[str] = field(default_factory=list)


# -- strategies --------------------------------------------------------------------------


@st.composite
def entity_rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    rows = []
    for _ in range(draw(st.integers(0, 4))):
        row: dict[str, Any] = {"name": draw(st.sampled_from(NAMES)), "visibility": "public"}
        summary = draw(st.none() | st.sampled_from(SUMMARIES))
        if summary is not None:
            row["summary"] = summary
        tags = draw(st.none() | st.lists(st.sampled_from(TAGS), max_size=3))
        if tags is not None:
            row["tags"] = tags
        rows.append(row)
    return rows


def ticking_clock() -> Any:
    """A stand-in for the library's clock: one second later on every call."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    ticks = itertools.count()

    def now() -> str:
        moment = start + timedelta(seconds=next(ticks))
        return moment.isoformat().replace("+00:00", "Z")

    return now


# -- the machine -------------------------------------------------------------------------


class LibraryMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        RUN_STATS["examples"] += 1
        self.tmp = Path(tempfile.mkdtemp(prefix="bourdon-sm-"))
        self.home = self.tmp / "home"
        self.library = Library.init(self.tmp / "lib")
        self.root = self.library.root
        self.index = Index(self.root)

        # Members: written through one registry object, checked through another one created
        # before any change (it must see revoke and rotate on its next authenticate).
        self.registry = MemberRegistry(self.home)
        self.members: dict[str, MemberState] = {}
        for member_id in MEMBERS:
            tier = "trusted" if member_id in TRUSTED else "quarantined"
            self.members[member_id] = MemberState(self.registry.add(member_id, tier), tier)
        self.checker = MemberRegistry(self.home)
        self.checker.members()

        # The model.
        self.live: dict[str, Content] = {}
        self.versions: dict[str, list[tuple[str, str, Content]]] = {}  # (version, op, content)
        self.staged: dict[tuple[str, str], Content] = {}

        # One MCP client for the whole run.
        self._stack = contextlib.ExitStack()
        try:
            self.portal: BlockingPortal = self._stack.enter_context(
                start_blocking_portal("asyncio")
            )
            server = create_server(self.root, watch=False, home=self.home)
            self.client: Client = self._stack.enter_context(
                self.portal.wrap_async_context_manager(Client(server, cache=None))
            )
        except BaseException:
            self._stack.close()
            raise

    def teardown(self) -> None:
        try:
            self._stack.close()
        finally:
            self.library.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers -------------------------------------------------------------------------

    def step(self) -> None:
        RUN_STATS["steps"] += 1
        RULES_RUN[sys._getframe(1).f_code.co_name] += 1

    async def _call(self, caller: Caller | None, tool: str, args: dict[str, Any]) -> Any:
        reset = httpgate._CALLER.set(caller) if caller is not None else None
        try:
            return await self.client.call_tool(tool, args)
        finally:
            if reset is not None:
                httpgate._CALLER.reset(reset)

    def call(self, caller: Caller | None, tool: str, **args: Any) -> Any:
        return self.portal.call(self._call, caller, tool, args)

    async def _read(self, uri: str) -> Any:
        content = (await self.client.read_resource(uri)).contents[0]
        assert isinstance(content, TextResourceContents)
        return json.loads(content.text)

    def read_resource(self, uri: str) -> Any:
        return self.portal.call(self._read, uri)

    def authenticated(self, member_id: str) -> Caller | None:
        """The caller the HTTP front door would let in with the member's token, or None."""
        state = self.members[member_id]
        member = self.checker.authenticate(state.token)
        if not state.active:
            assert member is None, f"revoked member {member_id} still authenticates"
            return None
        assert member is not None and member.id == member_id, f"{member_id} does not authenticate"
        return Caller(member.id, member.tier, frozenset(member.grants), "http")

    def record(self, agent: str, version: str | None, op: str, content: Content) -> None:
        """A write the model expects to have committed ``content`` (or to be a no-op)."""
        before = self.live.get(agent)
        changed = before is None or before.frozen() != content.frozen()
        if not changed:
            assert version is None, f"{op} of {agent} changed nothing but committed {version}"
            return
        assert version is not None, f"{op} of {agent} changed the content but was a no-op"
        self.live[agent] = content
        self.versions.setdefault(agent, []).append((version, op, content.copy()))

    # -- live writes ---------------------------------------------------------------------

    def write(
        self, writer: str, agent: str, agent_type: str, rows: list[dict[str, Any]], mode: str
    ) -> None:
        current = self.live.get(agent)
        source = "lead" if writer == "lead" else "operator"
        if mode == "merge":
            expected = model_merge(current, agent_type, rows, source)
        else:
            expected = model_replace(current, agent_type, rows, source)
        if writer == "operator":
            change = {"agent": {"type": agent_type}, "known_entities": rows}
            result = self.library.commit(agent, change, mode=mode)
            version = result.version
            assert result.no_op == (version is None)
        else:
            caller = None if writer == "operator-mcp" else self.authenticated(writer)
            if writer != "operator-mcp" and caller is None:
                return  # refused at the front door (401): nothing may change
            answer = self.call(
                caller,
                "commit_to_federation",
                agent_id=agent,
                agent_type=agent_type,
                entities=rows,
                mode=mode,
            )
            assert not answer.is_error, answer.structured_content
            body = answer.structured_content
            assert body["staged"] is False
            version = body["version_id"]
            assert body.get("no_op", False) == (version is None)
        self.record(agent, version, mode, expected)

    @rule(
        writer=st.sampled_from(WRITERS),
        agent=st.sampled_from(AGENTS),
        agent_type=st.sampled_from(TYPES),
        rows=entity_rows(),
    )
    def merge(self, writer: str, agent: str, agent_type: str, rows: list[dict[str, Any]]) -> None:
        self.step()
        self.write(writer, agent, agent_type, rows, "merge")

    @rule(
        writer=st.sampled_from(WRITERS),
        agent=st.sampled_from(AGENTS),
        agent_type=st.sampled_from(TYPES),
        rows=entity_rows(),
    )
    def replace(self, writer: str, agent: str, agent_type: str, rows: list[dict[str, Any]]) -> None:
        self.step()
        self.write(writer, agent, agent_type, rows, "replace")

    @precondition(lambda self: bool(self.versions))
    @rule(data=st.data(), through_mcp=st.booleans())
    def rollback(self, data: st.DataObject, through_mcp: bool) -> None:
        self.step()
        agent = data.draw(st.sampled_from(sorted(self.versions)), label="agent")
        version, _, content = data.draw(st.sampled_from(self.versions[agent]), label="version")
        if through_mcp:
            answer = self.call(
                None, "rollback_agent_memory", agent_id=agent, version_id=version, confirm=True
            )
            assert not answer.is_error, answer.structured_content
            new_version = answer.structured_content["new_version_id"]
            assert answer.structured_content["rolled_back"] == (new_version is not None)
        else:
            new_version = self.library.rollback(agent, version).version
        self.record(agent, new_version, "rollback", content.copy())
        assert self.live[agent].frozen() == content.frozen()
        if new_version is not None:
            assert self.library.read_bytes(agent) == self.library.read_bytes(agent, version)

    # -- staging -------------------------------------------------------------------------

    def _stage(self, member: str, agent_type: str, rows: list[dict[str, Any]]) -> None:
        """A quarantined member writes under its own agent id: the write waits in staging."""
        caller = self.authenticated(member)
        if caller is None:
            return
        key = (member, member)
        current = self.staged.get(key)
        expected = model_merge(current, agent_type, rows, member)
        answer = self.call(
            caller,
            "commit_to_federation",
            agent_id=member,
            agent_type=agent_type,
            entities=rows,
        )
        assert not answer.is_error, answer.structured_content
        body = answer.structured_content
        assert body["staged"] is True
        changed = current is None or current.frozen() != expected.frozen()
        assert (body["version_id"] is not None) == changed, body
        self.staged[key] = expected

    def _promote(self, caller: str, agent: str) -> None:
        staged = self.staged.pop((caller, agent))
        expected = model_promote(self.live.get(agent), staged)
        result = self.library.promote(caller, agent)
        # A promote always commits (it clears the staged file), but the agent gains a version
        # only if its content changed: the invariant compares the agent's history.
        assert result.version is not None
        changed = agent not in self.live or self.live[agent].frozen() != expected.frozen()
        self.record(agent, result.version if changed else None, "promote", expected)

    def _reject(self, caller: str, agent: str) -> None:
        del self.staged[(caller, agent)]
        assert self.library.reject(caller, agent)

    def _promoted_rows(self, member: str) -> list[dict[str, Any]]:
        live = self.live.get(member)
        rows = live.rows.values() if live else []
        return [
            {k: v for k, v in r.items() if k != "source"} for r in rows if r["source"] == member
        ]

    @initialize(agent_type=st.sampled_from(TYPES), first=entity_rows(), second=entity_rows())
    def members_have_contributed_before(
        self, agent_type: str, first: list[dict[str, Any]], second: list[dict[str, Any]]
    ) -> None:
        """Start where a federation usually is: each member's first write was promoted."""
        self.step()
        for member, rows in zip(QUARANTINED, (first, second), strict=True):
            self._stage(member, agent_type, rows)
            self._promote(member, member)

    @rule(
        member=st.sampled_from(QUARANTINED), agent_type=st.sampled_from(TYPES), rows=entity_rows()
    )
    def stage(self, member: str, agent_type: str, rows: list[dict[str, Any]]) -> None:
        self.step()
        self._stage(member, agent_type, rows)

    @precondition(lambda self: any(self._promoted_rows(m) for m in QUARANTINED))
    @rule(data=st.data())
    def stage_again_what_was_promoted(self, data: st.DataObject) -> None:
        """Agents resend what they know: a member stages rows identical to its live ones."""
        self.step()
        member = data.draw(
            st.sampled_from([m for m in QUARANTINED if self._promoted_rows(m)]), label="member"
        )
        self._stage(member, self.live[member].type, self._promoted_rows(member))

    @rule(
        member=st.sampled_from(QUARANTINED),
        agent_type=st.sampled_from(TYPES),
        rows=entity_rows(),
        accept=st.booleans(),
    )
    def stage_and_review(
        self, member: str, agent_type: str, rows: list[dict[str, Any]], accept: bool
    ) -> None:
        """The operator reviews a member's write as soon as it arrives."""
        self.step()
        self._stage(member, agent_type, rows)
        if (member, member) in self.staged:
            (self._promote if accept else self._reject)(member, member)

    @rule(member=st.sampled_from(QUARANTINED), data=st.data())
    def write_elsewhere_is_denied(self, member: str, data: st.DataObject) -> None:
        self.step()
        caller = self.authenticated(member)
        if caller is None:
            return
        target = data.draw(st.sampled_from([a for a in AGENTS if a != member]), label="target")
        answer = self.call(
            caller,
            "commit_to_federation",
            agent_id=target,
            agent_type="other",
            entities=[{"name": "intruder", "visibility": "public"}],
        )
        assert answer.is_error
        assert answer.structured_content["error"]["status"] == 403

    @precondition(lambda self: bool(self.staged))
    @rule(data=st.data())
    def promote(self, data: st.DataObject) -> None:
        self.step()
        self._promote(*data.draw(st.sampled_from(sorted(self.staged)), label="staged"))

    @precondition(lambda self: bool(self.staged))
    @rule(data=st.data())
    def reject(self, data: st.DataObject) -> None:
        self.step()
        self._reject(*data.draw(st.sampled_from(sorted(self.staged)), label="staged"))

    @rule(caller=st.sampled_from(QUARANTINED), agent=st.sampled_from(AGENTS), promote=st.booleans())
    def promote_or_reject_nothing(self, caller: str, agent: str, promote: bool) -> None:
        self.step()
        if (caller, agent) in self.staged:
            return
        with pytest.raises(NotFoundError):
            if promote:
                self.library.promote(caller, agent)
            else:
                self.library.reject(caller, agent)

    # -- members -------------------------------------------------------------------------

    @rule(member=st.sampled_from(MEMBERS))
    def revoke(self, member: str) -> None:
        self.step()
        self.registry.revoke(member)
        self.members[member].active = False
        assert self.checker.authenticate(self.members[member].token) is None

    @rule(member=st.sampled_from(MEMBERS))
    def rotate(self, member: str) -> None:
        self.step()
        state = self.members[member]
        token = self.registry.rotate(member)
        state.old_tokens.append(state.token)
        state.token = token
        state.active = True  # a new token re-enables a revoked member
        assert self.checker.authenticate(state.old_tokens[-1]) is None
        found = self.checker.authenticate(token)
        assert found is not None and found.id == member

    # -- reads ---------------------------------------------------------------------------

    @rule(name=st.sampled_from(NAMES))
    def read_through_server(self, name: str) -> None:
        """Reads over MCP see the live rows only: staged rows are invisible until promoted."""
        self.step()
        listed = self.call(None, "list_agents").structured_content["agents"]
        assert listed == sorted(self.live)
        assert self.read_resource("agent-library://agents") == sorted(self.live)
        for agent, content in self.live.items():
            memory = self.read_resource(f"agent-library://agents/{agent}/memory")
            assert _names_and_summaries(memory.get("known_entities") or []) == _expected(content)
        found = self.call(None, "find_entity", name=name, access_level="team")
        assert not found.is_error, found.structured_content
        exact = [m for m in found.structured_content["matches"] if m["match"] == "exact"]
        holders = {a: c.rows[fold(name)] for a, c in self.live.items() if fold(name) in c.rows}
        if not holders:
            assert exact == [], f"{name!r} is found although no live manifest holds it: {exact}"
            return
        assert len(exact) == 1
        assert sorted(exact[0]["agents"]) == sorted(holders)
        assert exact[0]["summaries"] == {
            a: r["summary"] for a, r in holders.items() if r.get("summary")
        }

    # -- invariants ----------------------------------------------------------------------

    @invariant()
    def library_equals_the_model(self) -> None:
        library = self.library
        assert library.agent_ids() == sorted(self.live)
        on_disk = sorted(p.name for p in (self.root / "agents").glob("*.l5.yaml"))
        assert on_disk == sorted(f"{a}.l5.yaml" for a in self.live)
        head = library.head()
        for agent, content in self.live.items():
            manifest = library.read(agent)
            data = manifest.data
            assert manifest.agent_type == content.type
            assert ("known_entities" in data) == content.has_section
            assert _actual_rows(data) == [_frozen_row(r) for r in content.rows.values()], agent
            # HEAD's manifest is the working file, byte for byte.
            assert (self.root / "agents" / f"{agent}.l5.yaml").read_bytes() == (
                library.read_bytes(agent)
            )
            # One version per write that changed something, in order, with its op.
            versions = library.history(agent, limit=None)
            expected = [(v, op) for v, op, _ in reversed(self.versions[agent])]
            assert [(v.version_id, v.op) for v in versions] == expected, (
                f"history of {agent} (op, digest8), newest first: "
                f"{[(v.op, v.digest8) for v in versions]}; the model expects the ops "
                f"{[op for _, op in expected]}"
            )
            assert library.current_digest(agent) == digest(data)

        staged = {(s.caller, s.agent_id): s for s in library.staged()}
        assert set(staged) == set(self.staged)
        files = sorted(
            str(p.relative_to(self.root)) for p in (self.root / "staging").glob("*/*.l5.yaml")
        )
        assert files == sorted(f"staging/{c}/{a}.l5.yaml" for c, a in self.staged)
        for (caller, agent), content in self.staged.items():
            data = library.read_staged(caller, agent).data
            assert staged[(caller, agent)].rows == len(content.rows)
            assert str(data["agent"]["type"]) == content.type
            assert ("known_entities" in data) == content.has_section
            assert _actual_rows(data) == [_frozen_row(r) for r in content.rows.values()]
            path = f"staging/{caller}/{agent}.l5.yaml"
            assert (self.root / path).read_bytes() == library.repo.read_blob(head or "", path)

    @invariant()
    def reads_see_live_rows_only(self) -> None:
        self.index.refresh()
        assert reads.list_agents(self.index)["agents"] == sorted(self.live)
        for agent, content in self.live.items():
            memory = reads.agent_memory(self.index, agent, Visibility.PUBLIC)
            assert _names_and_summaries(memory.get("known_entities") or []) == _expected(content)

    @invariant()
    def tokens_authenticate_as_the_model_says(self) -> None:
        for member_id, state in self.members.items():
            found = self.checker.authenticate(state.token)
            if state.active:
                assert found is not None and found.id == member_id
            else:
                assert found is None
            for old in state.old_tokens:
                assert self.checker.authenticate(old) is None


def _actual_rows(data: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    out = []
    for row in data.get("known_entities") or []:
        source = row["source"]
        assert source["kind"] == "commit", row
        out.append(_frozen_row({**row, "source": source["name"]}))
    return out


def _names_and_summaries(rows: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(r["name"], r.get("summary")) for r in rows]


def _expected(content: Content) -> list[tuple[str, str | None]]:
    return [(r["name"], r.get("summary")) for r in content.rows.values()]


# -- the test ----------------------------------------------------------------------------


@pytest.fixture
def ticking(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(writes_module, "now", ticking_clock())
    yield


def test_the_library_stays_equal_to_the_model(ticking: None) -> None:
    RUN_STATS.update(examples=0, steps=0)
    RULES_RUN.clear()
    try:
        run_state_machine_as_test(
            LibraryMachine,
            settings=settings(
                max_examples=EXAMPLES,
                stateful_step_count=STEPS,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
                database=None,
                derandomize=True,
                phases=tuple(Phase) if _SHRINK else (Phase.explicit, Phase.generate),
                report_multiple_bugs=_SHRINK,
            ),
        )
    finally:
        rules = ", ".join(f"{name} {n}" for name, n in sorted(RULES_RUN.items()))
        print(f"state machine: {RUN_STATS['examples']} runs, {RUN_STATS['steps']} steps ({rules})")


# -- the bug the machine found, on its own --------------------------------------------------


def test_promoting_a_staged_write_that_changes_nothing_adds_no_version(
    tmp_path: Path, ticking: None
) -> None:
    """A promote always commits (to clear the staged file), but when the live rows do not
    change, the agent must not gain a version: no-ops add none to an agent's history."""
    library = Library.init(tmp_path / "lib")
    library.commit("a", {"agent": {"type": "other"}, "known_entities": [{"name": "x"}]})
    before = library.read_bytes("a")
    staged = library.stage("bot", "a", {"known_entities": []}, Provenance(caller="bot"))
    assert staged.version is not None
    result = library.promote("bot", "a")
    assert result.digest == result.previous_digest  # nothing changed in the live manifest
    assert library.staged() == []
    assert len(library.history("a", limit=None)) == 1, [
        (v.op, v.digest8) for v in library.history("a", limit=None)
    ]
    assert library.read_bytes("a") == before
