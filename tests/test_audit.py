"""The audit log: one JSON line per tool or resource call, allowed or denied.

- every call through the server appends one whole record (time, caller, tier, transport, op,
  namespace, decision, status, detail), whether it was allowed or denied;
- several processes append at once without losing or interleaving records;
- R16: a writer killed with SIGKILL during 1,000 appends leaves at most a torn tail, which the
  reader skips; no complete record is lost, and the next record is not glued to the torn line;
- no token material ever reaches the log: callers are named by member id.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from bourdon.access.audit import AUDIT_FILE, AuditLog
from bourdon.access.callers import Caller
from bourdon.access.trust import MemberRegistry
from bourdon.serve import httpgate
from bourdon.serve.server import create_server
from bourdon.store.library import Library
from bourdon.testing.serving import bearer_client, free_port, stop_process, wait_for_port

FIELDS = {"time", "caller", "tier", "transport", "op", "namespace", "decision", "status", "detail"}
TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")
# Where the package lives, for child processes started from a temporary folder.
SOURCE_ROOT = str(Path(__file__).resolve().parents[1])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def raw_lines(home: Path) -> list[bytes]:
    return (home / AUDIT_FILE).read_bytes().splitlines(keepends=True)


def append(
    log: AuditLog,
    n: int | str,
    *,
    caller: str = "tester",
    namespace: str | None = "ns",
    decision: str = "allow",
) -> None:
    log.append(
        caller=caller,
        tier="trusted",
        transport="stdio",
        op="find_entity",
        namespace=namespace,
        decision=decision,
        status=200 if decision == "allow" else 403,
        detail=f"record {n}",
    )


# -- every call is recorded ------------------------------------------------------------


@pytest.mark.anyio
async def test_every_call_is_one_record_allowed_or_denied(tmp_path: Path) -> None:
    home = tmp_path / "home"
    library = Library.init(tmp_path / "lib")
    library.commit("alpha", {"agent": {"type": "other"}, "known_entities": [{"name": "orbit"}]})
    library.commit("beta", {"agent": {"type": "other"}, "known_entities": [{"name": "harbor"}]})
    bot = Caller("bot", "quarantined", frozenset({"alpha"}), "http")

    async def as_bot(client: Client, tool: str, **args: Any) -> Any:
        reset = httpgate._CALLER.set(bot)
        try:
            return await client.call_tool(tool, args)
        finally:
            httpgate._CALLER.reset(reset)

    # (caller, op, namespace, decision, status) of each call, in order.
    expected: list[tuple[str, str, str | None, str, int]] = []
    async with Client(create_server(library.root, watch=False, home=home), cache=None) as c:
        assert not (await c.call_tool("list_agents", {})).is_error
        expected.append(("operator", "list_agents", None, "allow", 200))
        assert not (await c.call_tool("find_entity", {"name": "orbit"})).is_error
        expected.append(("operator", "find_entity", None, "allow", 200))
        await c.read_resource("agent-library://agents")
        expected.append(("operator", "resource:agents", None, "allow", 200))
        await c.read_resource("agent-library://agents/beta/memory")
        expected.append(("operator", "resource:agent_memory", "beta", "allow", 200))

        assert not (await as_bot(c, "describe_caller")).is_error
        expected.append(("bot", "describe_caller", None, "allow", 200))
        answer = await as_bot(c, "query_agent_memory", agent="alpha", topic="orbit")
        assert not answer.is_error
        expected.append(("bot", "query_agent_memory", "alpha", "allow", 200))
        answer = await as_bot(c, "query_agent_memory", agent="beta", topic="harbor")
        assert answer.is_error and answer.structured_content["error"]["status"] == 403
        expected.append(("bot", "query_agent_memory", "beta", "deny", 403))
        answer = await as_bot(c, "rollback_agent_memory", agent_id="alpha", version_id="abcd")
        assert answer.is_error and answer.structured_content["error"]["status"] == 403
        expected.append(("bot", "rollback_agent_memory", "alpha", "deny", 403))
        answer = await as_bot(c, "commit_to_federation", agent_id="beta", entities=[{"name": "x"}])
        assert answer.is_error and answer.structured_content["error"]["status"] == 403
        expected.append(("bot", "commit_to_federation", "beta", "deny", 403))
        answer = await as_bot(
            c,
            "commit_to_federation",
            agent_id="bot",
            agent_type="other",
            entities=[{"name": "x"}],
        )
        assert not answer.is_error and answer.structured_content["staged"] is True
        expected.append(("bot", "commit_to_federation", "bot", "allow", 200))
        with_ghost = await c.call_tool("list_recent_work", {"agent": "ghost"})
        assert with_ghost.is_error
        # An allowed call that fails is not a denial: "deny" is the policy saying no.
        expected.append(("operator", "list_recent_work", "ghost", "allow", 404))

    lines = raw_lines(home)
    assert len(lines) == len(expected)
    records = list(AuditLog(home).records())
    assert len(records) == len(expected)
    for line, record, (caller, op, namespace, decision, status) in zip(
        lines, records, expected, strict=True
    ):
        data = json.loads(line)
        assert set(data) == FIELDS and line.endswith(b"\n")
        assert data == record.to_dict()
        assert TIME.fullmatch(record.time), record.time
        assert (record.caller, record.op, record.namespace, record.status) == (
            caller,
            op,
            namespace,
            status,
        ), record
        assert record.decision == decision, record
        assert (record.tier, record.transport) == (
            ("trusted", "stdio") if caller == "operator" else ("quarantined", "http")
        )
        assert isinstance(record.detail, str) and record.detail
    assert [r.time for r in records] == sorted(r.time for r in records)
    denied = AuditLog(home).query(denials=True)
    assert {(r.op, r.namespace) for r in denied} == {
        ("query_agent_memory", "beta"),
        ("rollback_agent_memory", "alpha"),
        ("commit_to_federation", "beta"),
    }
    assert "not granted" in next(r.detail for r in denied if r.op == "query_agent_memory")
    assert (home / AUDIT_FILE).stat().st_mode & 0o777 == 0o600


# -- several writers -------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[4])
    from bourdon.access.audit import AuditLog

    log = AuditLog(Path(sys.argv[1]))
    name, start = sys.argv[2], float(sys.argv[3])
    while time.time() < start:
        time.sleep(0.001)
    for i in range(int(sys.argv[5])):
        log.append(caller=name, tier="trusted", transport="stdio", op="find_entity",
                   namespace=name, decision="allow", status=200,
                   detail=f"{name}:{i} " + "x" * 280)
    """
)


def append_from_processes(home: Path, processes: int, each: int) -> list[bytes]:
    """``processes`` processes append ``each`` records at once; the log's lines."""
    start = time.time() + 2.0  # all start writing together, once their imports are done
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), f"w{n}", str(start), SOURCE_ROOT, str(each)]
        )
        for n in range(processes)
    ]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    return raw_lines(home)


def test_eight_processes_append_1000_whole_records(tmp_path: Path) -> None:
    home = tmp_path / "home"
    lines = append_from_processes(home, 8, 125)
    seen = []
    for line in lines:
        assert line.endswith(b"\n")
        if line == b"\n":
            continue  # see the next test
        data = json.loads(line)  # a line glued to or cut by another would not parse
        assert set(data) == FIELDS
        seen.append(data["detail"].split(" ")[0])
    assert sorted(seen) == sorted(f"w{n}:{i}" for n in range(8) for i in range(125))
    records = list(AuditLog(home).records())
    assert sorted(r.detail.split(" ")[0] for r in records) == sorted(seen)


def test_concurrent_appends_leave_no_blank_lines(tmp_path: Path) -> None:
    """Every line of the log is a record when no writer was killed.

    A writer decides whether to start with a newline by reading the file's last byte before
    its write, without a lock: while another process's append is in progress that byte may not
    be its newline yet, and a blank line is written. 8 x 1,000 appends show it every time.
    """
    home = tmp_path / "home"
    lines = append_from_processes(home, 8, 1000)
    blank = [n for n, line in enumerate(lines) if line == b"\n"]
    assert blank == [], f"{len(blank)} blank lines among {len(lines)}, first at line {blank[0]}"
    assert len(lines) == 8000


# -- R16: killed mid-append --------------------------------------------------------------

KILLED = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[3])
    from bourdon.access.audit import AuditLog

    log = AuditLog(Path(sys.argv[1]))
    name = sys.argv[2]
    print("ready", flush=True)
    for i in range(1000):
        log.append(caller="child", tier="trusted", transport="stdio", op="append",
                   namespace=name, decision="allow", status=200, detail=f"{name}:{i}")
        print(i + 1, flush=True)  # i + 1 records are complete
    """
)


def test_kill_9_during_appends_loses_no_complete_record(tmp_path: Path) -> None:
    """R16: kill -9 during 1,000 appends, then append again: torn tail ignored by the reader;
    0 complete records lost; next record not glued to the torn line."""
    home = tmp_path / "home"
    log = AuditLog(home)
    rng = random.Random(16)
    total = rounds = 0
    while (total < 1000 or rounds < 8) and rounds < 60:
        name = f"round{rounds}"
        proc = subprocess.Popen(
            [sys.executable, "-c", KILLED, str(home), name, SOURCE_ROOT],
            stdout=subprocess.PIPE,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(rng.uniform(0, 0.04))
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        printed = proc.stdout.read().split(b"\n")
        proc.stdout.close()
        done = max([int(n) for n in printed[:-1] if n.isdigit()], default=0)  # whole lines only
        total += done
        rounds += 1

        # Every record the child finished is there, once; the one in flight may be too.
        mine = [r.detail for r in log.records() if r.namespace == name]
        assert mine[:done] == [f"{name}:{i}" for i in range(done)]
        assert len(mine) in (done, done + 1)
        assert mine == [f"{name}:{i}" for i in range(len(mine))]

        # The next record is whole, on its own line, and read back.
        append(log, f"after {name}", caller="parent", namespace=name)
        last = raw_lines(home)[-1]
        assert json.loads(last)["detail"] == f"record after {name}"
        assert list(log.records())[-1].detail == f"record after {name}"
    print(f"R16: {rounds} kills, {total} complete appends before them")
    assert total >= 1000
    # Nothing was lost across all the rounds: every record of every round, then the parent's.
    records = list(log.records())
    assert sum(1 for r in records if r.caller == "parent") == rounds
    assert sum(1 for r in records if r.caller == "child") >= total


def test_a_torn_line_is_skipped_and_the_next_record_starts_on_a_new_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    log = AuditLog(home)
    for n in range(3):
        append(log, n)
    whole = raw_lines(home)[0]
    torn = whole[: len(whole) // 2]  # half a record, as a writer killed mid-write leaves it
    with open(home / AUDIT_FILE, "ab") as handle:
        handle.write(torn)
    assert [r.detail for r in log.records()] == ["record 0", "record 1", "record 2"]

    append(log, 3)
    lines = raw_lines(home)
    assert lines[3] == torn + b"\n"  # the torn line stays, closed by the next writer
    assert json.loads(lines[4])["detail"] == "record 3"  # ... which starts on a fresh line
    assert [r.detail for r in log.records()] == ["record 0", "record 1", "record 2", "record 3"]

    # A torn line in the middle of the file is skipped too, and so is a blank one.
    with open(home / AUDIT_FILE, "ab") as handle:
        handle.write(b"\n" + torn)
    append(log, 4)
    assert [r.detail for r in log.records()] == [
        "record 0",
        "record 1",
        "record 2",
        "record 3",
        "record 4",
    ]
    # A complete JSON object that is not a record is not one either.
    with open(home / AUDIT_FILE, "ab") as handle:
        handle.write(b'{"time": "x"}\n[1, 2]\n')
    append(log, 5)
    assert [r.detail for r in log.records()][-2:] == ["record 4", "record 5"]
    assert log.query(limit=2)[-1].detail == "record 5"


def test_an_empty_or_missing_log_reads_as_nothing(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "home")
    assert list(log.records()) == []
    assert log.query() == []
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / AUDIT_FILE).write_bytes(b"")
    assert list(log.records()) == []


# -- no token material -------------------------------------------------------------------


@contextlib.contextmanager
def http_server(root: Path, home: Path) -> Iterator[str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
    env.update(HOME=str(home.parent), BOURDON_HOME=str(home), PYTHONPATH=SOURCE_ROOT)
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bourdon",
            "--library",
            str(root),
            "serve",
            "--transport",
            "http",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for_port(proc, port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


def post(url: str, token: str) -> tuple[int, str]:
    """A raw JSON-RPC POST with a bearer token: (status, body)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    request = urllib.request.Request(
        url,
        data=body,
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read().decode()


def http_client(url: str, token: str) -> contextlib.AbstractAsyncContextManager[Client]:
    """An MCP client over streamable HTTP that sends a bearer token."""
    return bearer_client(url, token)


@pytest.mark.anyio
async def test_no_token_material_ever_reaches_the_log(tmp_path: Path) -> None:
    home = tmp_path / "home" / ".bourdon"
    library = Library.init(tmp_path / "lib")
    library.commit("alpha", {"agent": {"type": "other"}, "known_entities": [{"name": "orbit"}]})
    registry = MemberRegistry(home)
    laptop = registry.add("laptop", "trusted")
    phone = registry.add("phone", "quarantined", ["alpha"])
    old = registry.add("old", "trusted")
    registry.revoke("old")
    wrong = "bdn_" + "0" * 48
    tokens = [laptop, phone, old, wrong]

    with http_server(library.root, home) as url:
        async with http_client(url, laptop) as c:
            assert not (await c.call_tool("list_agents", {})).is_error
            assert not (await c.call_tool("describe_caller", {})).is_error
        async with http_client(url, phone) as c:
            assert not (await c.call_tool("describe_caller", {})).is_error
            denied = await c.call_tool(
                "rollback_agent_memory", {"agent_id": "alpha", "version_id": "abcd"}
            )
            assert denied.is_error
        for token in (old, wrong):
            status, text = post(url, token)
            assert status == 401 and token not in text
        status, text = post(f"{url}?token={laptop}", laptop)
        assert status == 400 and laptop not in text

    log = (home / AUDIT_FILE).read_bytes()
    text = log.decode("utf-8")
    for token in tokens:
        assert token not in text
        assert token[4:] not in text  # not even the hex part
        assert token[4:16] not in text
        assert hashlib.sha256(token.encode()).hexdigest() not in text
    assert "bdn_" not in text
    records = list(AuditLog(home).records())
    callers = {r.caller for r in records}
    assert callers <= {"laptop", "phone", "anonymous"}
    assert {"laptop", "phone", "anonymous"} <= callers
    assert {(r.caller, r.op) for r in records} >= {
        ("laptop", "list_agents"),
        ("laptop", "describe_caller"),
        ("phone", "describe_caller"),
        ("phone", "rollback_agent_memory"),
    }
    anonymous = [r for r in records if r.caller == "anonymous"]
    assert sorted(r.status for r in anonymous) == [400, 401, 401]
    assert all(r.decision == "deny" for r in anonymous)


def test_the_log_and_its_folder_are_made_when_missing_even_after_removal(tmp_path: Path) -> None:
    home = tmp_path / "nested" / "bourdon-home"
    log = AuditLog(home)
    append(log, 1)
    assert (home / AUDIT_FILE).stat().st_mode & 0o777 == 0o600
    shutil.rmtree(tmp_path / "nested")  # someone clears the folder under a running server
    append(log, 2)
    assert [r.detail for r in log.records()] == ["record 2"]
