"""Nothing is lost (issue 13, items 9 to 13): real git repositories in temporary folders, real
processes, nothing mocked.

Each test reproduces one loss or hazard found by attack on the landed code, as a user meets it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import pytest

from bourdon.ingest.failures import hook_failures, record_hook_failure
from bourdon.store.git.process import git_env
from bourdon.store.library import Library
from tests.test_reliability import git

GIT_TIMEOUT = 120
NOBODY = 65534


def _agent(library: Library, agent: str, name: str) -> None:
    library.commit(agent, {"agent": {"type": "code-assistant"}, "known_entities": [{"name": name}]})


# -- 12. a library owned by another user ----------------------------------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand the library to another user")
def test_a_library_owned_by_another_user_can_be_read(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    with Library.init(root) as library:
        _agent(library, "x", "first")
        _agent(library, "x", "second")
        versions = [v.version_id for v in library.history("x", limit=None)]
    for path in [root, *root.rglob("*")]:
        os.lchown(path, NOBODY, NOBODY)

    with Library.open(root) as library:
        names = [r["name"] for r in library.read("x").data["known_entities"]]
        assert names == ["first", "second"]
        assert [v.version_id for v in library.history("x", limit=None)] == versions
        assert library.repo.is_ancestor(versions[1], versions[0])
        clean, said = library.fsck()
        assert clean, said


# -- 10. recoveries in the same second ---------------------------------------------------------


def _interrupt(root: Path, agent: str, text: bytes) -> None:
    """What a writer killed between its file write and its commit leaves behind."""
    (root / "agents" / f"{agent}.l5.yaml").write_bytes(text)
    head = git(root, "rev-parse", "HEAD").stdout.decode().strip()
    intent = {"paths": [f"agents/{agent}.l5.yaml"], "head": head, "pid": 999_999}
    (root / ".bourdon" / "intent.json").write_text(json.dumps(intent), encoding="utf-8")


def test_two_recoveries_in_the_same_second_keep_both_uncommitted_files(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    with Library.init(root) as library:
        _agent(library, "x", "kept")
        committed = library.read_bytes("x")
    aside = root / ".bourdon" / "recovered"
    # An earlier recovery's file for every second this test may run in: none may be overwritten.
    aside.mkdir(parents=True)
    now = int(time.time())
    earlier = {
        f"{t}-agents--x.l5.yaml": f"earlier {t}\n".encode() for t in range(now - 2, now + 300)
    }
    for name, data in earlier.items():
        (aside / name).write_bytes(data)

    first = committed.replace(b"name: kept", b"name: first-uncommitted")
    second = committed.replace(b"name: kept", b"name: second-uncommitted")
    for text in (first, second):
        _interrupt(root, "x", text)
        with Library.open(root) as reopened:
            assert reopened.recovered
            assert (root / "agents" / "x.l5.yaml").read_bytes() == committed

    kept = sorted(p.read_bytes() for p in aside.iterdir())
    assert first in kept and second in kept, "an uncommitted write was overwritten in recovered/"
    for name, data in earlier.items():
        assert (aside / name).read_bytes() == data, f"{name} was overwritten"


# -- 13. temp files of local state, and the hook failure log ----------------------------------


def test_open_sweeps_temp_files_a_kill_left_in_watermarks_and_sync(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    with Library.init(root) as library:
        _agent(library, "x", "a")
    dead = 999_999
    left = [
        root / ".bourdon" / "watermarks" / f".claude-code.json.{dead}.140000000000000.tmp",
        root / ".bourdon" / "sync" / f".origin.json.{dead}.140000000000000.tmp",
        root / ".bourdon" / "sync" / f".published.json.{dead}.140000000000000.tmp",
    ]
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"half": ')
    # A live writer's temp file (this process) is never taken from under it.
    live = root / ".bourdon" / "sync" / f".origin.json.{os.getpid()}.1.tmp"
    live.write_text("{}")

    with Library.open(root) as reopened:
        assert reopened.agent_ids() == ["x"]
    survivors = [p.relative_to(root).as_posix() for p in left if p.exists()]
    assert survivors == [], (
        f"temp files of a killed writer survive opening the library: {survivors}"
    )
    assert live.exists()


def test_a_write_after_a_writer_died_holding_the_lock_sweeps_what_it_left(
    tmp_path: Path,
) -> None:
    # A library kept open (a server's) has just looked for leftovers. Then another process,
    # killed while it held the write lock, leaves its pid file and temp files behind: the next
    # write of the open library sweeps them, however recently it last looked.
    root = tmp_path / "lib"
    with Library.init(root) as library:
        _agent(library, "x", "a")
        dead = 999_999
        (root / ".bourdon" / "write.pid").write_text(str(dead), encoding="ascii")
        left = [
            root / ".bourdon" / "watermarks" / f".claude-code.json.{dead}.140000000000000.tmp",
            root / "agents" / f".x.l5.yaml.{dead}.140000000000000.tmp",
        ]
        for path in left:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text('{"half": ')
        _agent(library, "x", "b")
        survivors = [p.relative_to(root).as_posix() for p in left if p.exists()]
        assert survivors == [], f"left by a writer that died holding the lock: {survivors}"
        assert not (root / ".bourdon" / "write.pid").exists()


FAILING_HOOK = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from bourdon.ingest.failures import record_hook_failure
    log, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    for i in range(count):
        record_hook_failure(log, "export", who, f"{who}-{i} " + "e" * 1900)
    """
)


def test_concurrent_hooks_lose_no_failure_when_the_log_is_cut_back(tmp_path: Path) -> None:
    log = tmp_path / "lib" / ".bourdon" / "hook-failures.jsonl"
    # A log already past its cap: every new failure also cuts it back to its last lines.
    for i in range(120):
        record_hook_failure(log, "export", "old", f"old-{i} " + "o" * 1900)
    writers, each = 4, 15
    procs = [
        subprocess.Popen([sys.executable, "-c", FAILING_HOOK, str(log), f"w{n}", str(each)])
        for n in range(writers)
    ]
    for proc in procs:
        assert proc.wait(timeout=GIT_TIMEOUT) == 0
    agents = [e["agent"] for e in hook_failures(log)]
    recorded = {e["error"].split()[0] for e in hook_failures(log) if e["agent"] != "old"}
    expected = {f"w{n}-{i}" for n in range(writers) for i in range(each)}
    assert expected - recorded == set(), f"failures lost: {sorted(expected - recorded)}"
    assert len(agents) <= 200 + writers


def test_a_failure_log_cut_short_by_a_kill_keeps_the_next_failure(tmp_path: Path) -> None:
    log = tmp_path / "hook-failures.jsonl"
    record_hook_failure(log, "export", "a", "first")
    with open(log, "a", encoding="utf-8") as handle:
        handle.write('{"what": "export", "agent": "b", "er')  # a hook killed mid-line
    record_hook_failure(log, "export", "c", "after the kill")
    assert [e["agent"] for e in hook_failures(log)] == ["a", "c"]


# -- 9. git's index after the server writes ----------------------------------------------------

pytestmark = pytest.mark.anyio
WHO = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _tree(root: Path, rev: str) -> dict[str, str]:
    out = git(root, "ls-tree", "-r", rev).stdout.decode()
    return {line.split("\t")[1]: line.split()[2] for line in out.splitlines()}


def assert_plain_commit_deletes_nothing(root: Path) -> None:
    """What a person typing ``git status`` and ``git commit`` in the library sees."""
    assert git(root, "status", "--porcelain").stdout.decode() == ""
    before = _tree(root, "HEAD")
    done = subprocess.run(
        ["git", "commit", "--allow-empty", "-q", "-m", "x"],
        cwd=root,
        env={**git_env(), **WHO},
        capture_output=True,
        timeout=GIT_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert _tree(root, "HEAD") == before, "a plain git commit changed the library's files"


def _serve(
    root: Path, home: Path, member: str = "laptop"
) -> tuple[subprocess.Popen[bytes], str, str]:
    from bourdon.access.trust import MemberRegistry
    from bourdon.testing.serving import child_env, free_port, wait_for_port

    token = MemberRegistry(home / ".bourdon").add(member, "trusted")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bourdon", "--library", str(root), "serve", "--transport", "http",
         "--port", str(port)],
        env=child_env(home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    wait_for_port(proc, port)
    return proc, f"http://127.0.0.1:{port}/mcp", token


async def _write(client: object, agent: str, name: str) -> None:
    result = await client.call_tool(  # type: ignore[attr-defined]
        "commit_to_federation",
        {"agent_id": agent, "agent_type": "code-assistant", "entities": [{"name": name}]},
    )
    assert not result.is_error, result.content


def _client(url: str, token: str):  # type: ignore[no-untyped-def]
    import contextlib as cl

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    @cl.asynccontextmanager
    async def opened():  # type: ignore[no-untyped-def]
        async with (
            create_mcp_http_client({"Authorization": f"Bearer {token}"}) as hc,
            Client(streamable_http_client(url, http_client=hc)) as client,
        ):
            yield client

    return opened()


async def test_the_index_matches_head_after_server_writes_and_sigterm(
    tmp_path: Path, isolated_home: Path
) -> None:
    root = tmp_path / "lib"
    Library.init(root).close()
    proc, url, token = _serve(root, isolated_home)
    try:
        async with _client(url, token) as client:
            for i in range(20):
                await _write(client, f"agent-{i % 9}", f"row-{i}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        assert proc.stderr is not None
        proc.stderr.close()
    assert len([p for p in _tree(root, "HEAD") if p.endswith(".l5.yaml")]) == 9
    assert_plain_commit_deletes_nothing(root)


async def test_the_index_never_falls_behind_head_when_the_server_is_killed(
    tmp_path: Path, isolated_home: Path
) -> None:
    import signal

    import anyio

    root = tmp_path / "lib"
    Library.init(root).close()
    for rnd in range(3):
        proc, url, token = _serve(root, isolated_home, f"laptop-{rnd}")
        acked = 0
        try:
            async with _client(url, token) as client:

                async def writes(rnd: int = rnd) -> None:
                    nonlocal acked
                    for i in range(1000):
                        await _write(client, f"agent-{rnd}-{i % 5}", f"row-{i}")
                        acked += 1

                with anyio.move_on_after(60):
                    async with anyio.create_task_group() as tasks:
                        tasks.start_soon(writes)
                        while acked < 5 + 3 * rnd:
                            await anyio.sleep(0.01)
                        os.kill(proc.pid, signal.SIGKILL)  # the next write is in flight
                        proc.wait(timeout=30)
                        tasks.cancel_scope.cancel()
        except BaseException:  # the client's own connection errors, once the server is gone
            pass
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
            assert proc.stderr is not None
            proc.stderr.close()
        assert acked >= 5 + 3 * rnd
        # Before anything repairs it: whatever the kill interrupted, git's index holds HEAD's
        # files (or HEAD's and the write in flight), so a plain commit deletes nothing.
        at_head = _tree(root, "HEAD")
        staged = git(root, "diff", "--cached", "--name-status", "HEAD").stdout.decode().split()
        assert "D" not in staged, f"round {rnd}: the index lacks files of HEAD: {staged}"
        # Any bourdon command then repairs the rest.
        from bourdon.testing.serving import child_env

        done = subprocess.run(
            [sys.executable, "-m", "bourdon", "--library", str(root), "agents"],
            env=child_env(isolated_home), capture_output=True, timeout=GIT_TIMEOUT,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert set(_tree(root, "HEAD")) >= set(at_head)
        assert_plain_commit_deletes_nothing(root)


def test_opening_a_library_repairs_an_index_left_behind_and_doctor_says_so(
    tmp_path: Path, isolated_home: Path
) -> None:
    from bourdon.testing.serving import child_env

    root = tmp_path / "lib"
    with Library.init(root) as library:
        first = library.head()
        for i in range(3):
            _agent(library, f"agent-{i}", "a")
    git(root, "read-tree", str(first))  # what a write of an older bourdon left, or a kill
    assert git(root, "status", "--porcelain").stdout != b""

    done = subprocess.run(
        [sys.executable, "-m", "bourdon", "--library", str(root), "doctor", "--json", "--no-peers"],
        env=child_env(isolated_home), capture_output=True, timeout=GIT_TIMEOUT,
    )  # fmt: skip
    report = json.loads(done.stdout)
    found = {p["code"]: p for p in report["problems"]}
    assert "git_index_repaired" in found, report["problems"]
    assert "agents/agent-0.l5.yaml" in found["git_index_repaired"]["message"]
    assert report["checks"]["git_index"]["behind"] == []
    assert_plain_commit_deletes_nothing(root)


# -- 11. a live git lock is never deleted ------------------------------------------------------

# The editor and the test meet on two FIFOs, so each waits for the other's signal, not a time.
EDITOR = """#!/bin/sh
here="$(dirname "$0")"
echo editing > "$here/editing"
read _ < "$here/release"
echo "commit made by hand" > "$1"
"""


def _through_fifo(path: Path, send: str | None = None) -> str:
    """Read a line from the FIFO ``path`` (or write ``send`` to it) once the editor opens its
    end. Bounded by ``GIT_TIMEOUT``: past it, the FIFO is opened from the other side too, so
    the waiting thread ends, and the test fails."""

    def meet() -> str:
        if send is None:
            with open(path, encoding="utf-8") as fifo:
                return fifo.readline()
        with open(path, "w", encoding="utf-8") as fifo:
            fifo.write(send)
        return send

    with ThreadPoolExecutor(1) as pool:
        met = pool.submit(meet)
        try:
            return met.result(timeout=GIT_TIMEOUT)
        except FutureTimeout:
            other = os.open(path, (os.O_WRONLY if send is None else os.O_RDONLY) | os.O_NONBLOCK)
            os.close(other)
            raise AssertionError(f"the editor never opened {path.name}") from None


def _age(path: Path, seconds: float = 3600) -> None:
    """As if it were held that long (an editor left open over lunch)."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_git_commit_waiting_for_its_editor_keeps_its_index_lock(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    with Library.init(root) as library:
        _agent(library, "x", "a")
    tools = tmp_path / "tools"
    tools.mkdir()
    editor = tools / "editor"
    editor.write_text(EDITOR)
    editor.chmod(0o755)
    os.mkfifo(tools / "editing")
    os.mkfifo(tools / "release")
    (root / "notes.txt").write_text("mine\n")
    git(root, "add", "notes.txt")
    (root / "notes.txt").write_text("mine, edited\n")
    env = {**git_env(), **WHO, "GIT_EDITOR": str(editor)}
    said = tmp_path / "git-commit.err"
    with open(said, "wb") as err:
        proc = subprocess.Popen(  # -a holds index.lock while the editor is open
            ["git", "commit", "-q", "-a"], cwd=root, env=env, stderr=err, stdout=subprocess.DEVNULL
        )
    try:
        assert _through_fifo(tools / "editing") == "editing\n", proc.poll()
        lock = root / ".git" / "index.lock"
        assert lock.exists()
        _age(lock)
        inode = lock.stat().st_ino
        with Library.open(root) as library:
            result = library.commit("x", {"known_entities": [{"name": "b"}]})
            assert result.version is not None
            assert not any("index.lock" in done for done in library.recovered)
        assert lock.exists() and lock.stat().st_ino == inode, "bourdon deleted a live git lock"
    finally:
        _through_fifo(tools / "release", "go\n")
        proc.wait(timeout=GIT_TIMEOUT)
    # git then refuses its commit (bourdon moved the branch meanwhile): it never lost its lock.
    assert "index.lock" not in said.read_text(), said.read_text()
    with Library.open(root) as library:
        assert [r["name"] for r in library.read("x").data["known_entities"]] == ["a", "b"]

    # What the user staged is still staged; bourdon's manifests are in the index as at HEAD.
    assert git(root, "status", "--porcelain").stdout.decode().split() == ["AM", "notes.txt"]


def test_a_live_ref_transaction_keeps_its_locks_and_a_write_does_not_wait(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    with Library.init(root) as library:
        _agent(library, "x", "a")
        head = library.head()
    assert head is not None
    proc = subprocess.Popen(
        ["git", "update-ref", "--stdin"],
        cwd=root,
        env=git_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(f"start\nupdate refs/bourdon/incoming/desk {head}\nprepare\n".encode())
        proc.stdin.flush()
        assert proc.stdout.readline() == b"start: ok\n"
        assert proc.stdout.readline() == b"prepare: ok\n"
        lock = root / ".git" / "refs" / "bourdon" / "incoming" / "desk.lock"
        assert lock.exists()
        _age(lock)
        with Library.open(root) as library:
            assert library.recovered == []
            library.commit("x", {"known_entities": [{"name": "b"}]})
            assert library.recovered == []
        assert lock.exists(), "bourdon deleted the lock of a running git"
        proc.stdin.write(b"commit\n")
        proc.stdin.close()
        assert proc.wait(timeout=GIT_TIMEOUT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert git(root, "rev-parse", "refs/bourdon/incoming/desk").stdout.decode().strip() == head


def test_a_lock_no_git_holds_any_more_is_removed_once_old(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    with Library.init(root) as library:
        _agent(library, "x", "a")
    young, old = root / ".git" / "config.lock", root / ".git" / "refs" / "heads" / "main.lock"
    young.write_bytes(b"")
    old.write_bytes(b"")
    _age(old)
    with Library.open(root) as library:
        assert any("main.lock" in said for said in library.recovered)
        library.commit("x", {"known_entities": [{"name": "b"}]})
    assert not old.exists()
    assert young.exists(), "a lock younger than the threshold may still be in use"


# -- 6. a hand-typed push never sends the working branch ---------------------------------------


def test_a_hand_typed_push_all_to_a_bourdon_remote_sends_no_private_row(tmp_path: Path) -> None:
    from bourdon.replicate.remotes import add_remote
    from bourdon.replicate.state import BRANCH
    from bourdon.store.pushguard import PUBLISHED
    from bourdon.testing.remotes import bare_repository, every_object

    assert PUBLISHED == BRANCH
    remote = bare_repository(tmp_path / "remote.git")
    root = tmp_path / "lib"
    canary = "private-canary-7f3a"
    with Library.init(root) as library:
        library.commit(
            "x",
            {
                "agent": {"type": "code-assistant"},
                "known_entities": [{"name": canary, "visibility": "private"}, {"name": "open"}],
            },
        )
        add_remote(library, "origin", str(remote))
    # A person's own git: their configuration, hooks on.
    env = {**git_env(), **WHO}
    env.pop("GIT_CONFIG_GLOBAL", None)
    env["HOME"] = str(tmp_path)
    pushes = [
        ["push", "--all", "origin"],
        ["push", "origin", "main"],
        ["push", "origin", "main:refs/heads/bourdon/published"],
        ["push", "--mirror", str(remote)],
    ]
    for args in pushes:
        done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, timeout=60)
        assert done.returncode != 0, f"git {' '.join(args)} was let through"
        assert b"bourdon: refused" in done.stderr, done.stderr
    leaked = [oid for oid, body in every_object(remote) if canary.encode() in body]
    assert leaked == [], "the working branch's private rows reached the remote"
    assert git(remote, "for-each-ref").stdout == b""


def test_a_push_of_the_published_branch_goes_through(tmp_path: Path) -> None:
    from bourdon.replicate.remotes import add_remote
    from bourdon.replicate.sync import sync
    from bourdon.testing.remotes import bare_repository

    remote = bare_repository(tmp_path / "remote.git")
    root = tmp_path / "lib"
    with Library.init(root) as library:
        _agent(library, "x", "open")
        add_remote(library, "origin", str(remote))
        sync(library, "origin")
        _agent(library, "x", "later")
    # What 'git push origin' sends by the remote's push setting: the synced published commit.
    env = {**git_env(), **WHO}
    done = subprocess.run(["git", "push", "origin"], cwd=root, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert git(remote, "for-each-ref", "--format=%(refname)").stdout.split() == [
        b"refs/heads/bourdon/published"
    ]


def test_doctor_keeps_the_push_guard_and_names_a_hook_in_its_way(
    tmp_path: Path, isolated_home: Path
) -> None:
    from bourdon.testing.serving import child_env

    root = tmp_path / "lib"
    Library.init(root).close()
    hook = root / ".git" / "hooks" / "pre-push"
    hook.unlink()

    def doctor() -> dict[str, str]:
        done = subprocess.run(
            [sys.executable, "-m", "bourdon", "--library", str(root), "doctor", "--json",
             "--no-peers"],
            env=child_env(isolated_home), capture_output=True, timeout=GIT_TIMEOUT,
        )  # fmt: skip
        return {p["code"]: p["fix"] for p in json.loads(done.stdout)["problems"]}

    assert "push_guard_missing" not in doctor()
    assert "bourdon push guard" in hook.read_text() and os.access(hook, os.X_OK)
    hook.write_text("#!/bin/sh\nexit 0\n")  # someone's own hook: never overwritten
    fix = doctor()["push_guard_missing"]
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    env = child_env(isolated_home)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    subprocess.run(fix, shell=True, env=env, capture_output=True, timeout=GIT_TIMEOUT)
    assert "bourdon push guard" in hook.read_text()
    assert (hook.parent / "pre-push.local").read_text() == "#!/bin/sh\nexit 0\n"
