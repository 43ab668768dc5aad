"""Reliability under concurrency and crashes: real processes, real git, temporary folders.

Nothing is mocked. Writers run as separate Python processes (``sys.executable -c``) so that the
cross-process library lock, the compare-and-swap on the branch and crash recovery are exercised
exactly as they run in production. Figures (wall time, latencies, kills that landed mid-write)
are printed; run with ``pytest -s`` to see them.
"""

from __future__ import annotations

import json
import os
import random
import selectors
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from bourdon.digest import digest
from bourdon.errors import LibraryError
from bourdon.formats import schema
from bourdon.store.git.process import git_env
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance

WRITERS = 8
WRITES_PER_WRITER = 125
RACE_ROUNDS = 25
KILL_ROUNDS = 40
KILL_MIN_ACKS = 200
KILL_MAX_ROUNDS = 150
KILL_SEED = int(os.environ.get("BOURDON_KILL_SEED", "20261130"))
BIG_SEED_ROWS = 300
TRAILER_KEYS = ("Op", "Agent", "Caller", "Session", "Digest")
GIT_TIMEOUT = 120
CHILD_TIMEOUT = 240


# -- helpers ---------------------------------------------------------------------------------


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        ["git", *args], cwd=root, env=git_env(), capture_output=True, timeout=GIT_TIMEOUT
    )
    if check and done.returncode != 0:
        raise AssertionError(
            f"git {' '.join(args)} exited {done.returncode}: {done.stderr.decode(errors='replace')}"
        )
    return done


def child_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        BOURDON_HOME=str(home / ".bourdon"),
        BOURDON_LIBRARY=str(home / "agent-library"),
        PYTHONUNBUFFERED="1",
    )
    return env


def commit_count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").stdout)


def entity_names(library: Library, agent: str) -> list[str]:
    return [row["name"] for row in library.read(agent).data.get("known_entities") or []]


def assert_fsck_clean(root: Path) -> None:
    done = git(root, "fsck", "--full", "--strict", "--no-progress", check=False)
    said = (done.stdout + done.stderr).decode(errors="replace")
    assert done.returncode == 0, f"git fsck --full --strict failed: {said}"


def assert_worktree_equals_head(root: Path) -> None:
    """Every agents/*.l5.yaml on disk equals HEAD's bytes, and HEAD has no file missing on disk."""
    on_disk = {p.relative_to(root).as_posix() for p in (root / "agents").glob("*.l5.yaml")}
    listed = git(root, "ls-tree", "-r", "--name-only", "HEAD", "--", "agents").stdout.decode()
    at_head = {p for p in listed.split("\n") if p.endswith(".l5.yaml")}
    assert on_disk == at_head, f"files on disk {sorted(on_disk)} != files at HEAD {sorted(at_head)}"
    for path in sorted(on_disk):
        committed = git(root, "show", f"HEAD:{path}").stdout
        assert (root / path).read_bytes() == committed, f"{path} on disk differs from HEAD"


def leftovers(root: Path) -> list[str]:
    """Temp and lock files a crash may leave: none may survive a reopen."""
    found: list[str] = []
    # os.walk, not rglob: git's background packing may remove an objects folder mid-walk.
    tmp_files = (
        Path(folder, name)
        for folder, _, names in os.walk(root)
        for name in names
        if name.endswith(".tmp")
    )
    for path in tmp_files:
        rel = path.relative_to(root)
        if rel.parts[0] == ".git" and rel.parts[1:2] == ("objects",) and "pack" in rel.parts:
            continue  # git's own pack temporaries
        found.append(rel.as_posix())
    git_dir = root / ".git"
    found += [
        Path(folder, name).relative_to(root).as_posix()
        for folder, _, names in os.walk(git_dir / "objects")
        for name in names
        if name.startswith("tmp_obj_")
    ]
    found += [p.relative_to(root).as_posix() for p in git_dir.glob("*.lock")]
    found += [p.relative_to(root).as_posix() for p in (git_dir / "refs").rglob("*.lock")]
    return sorted(found)


def parse_log(root: Path) -> list[tuple[str, dict[str, str]]]:
    """``(commit, trailers)`` for every commit on HEAD, newest first."""
    out = git(root, "log", "--format=%H%x1f%B%x1e", "HEAD").stdout.decode("utf-8")
    commits = []
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        commit, _, body = record.partition("\x1f")
        trailers = {}
        for line in body.splitlines():
            key, sep, value = line.partition(": ")
            if sep and key.startswith("Bourdon-"):
                trailers[key[len("Bourdon-") :]] = value.strip()
        commits.append((commit.strip(), trailers))
    return commits


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- 1. concurrent writers -------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import json, sys, time
    from bourdon.store.library import Library
    from bourdon.store.provenance import Provenance

    path, n, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    library = Library.open(path)
    latencies = []
    for i in range(count):
        agent = "shared" if i % 2 == 0 else f"w{n}"
        start = time.perf_counter()
        library.commit(
            agent,
            {"agent": {"type": "code-assistant"}, "known_entities": [{"name": f"p{n}-e{i}"}]},
            provenance=Provenance(caller=f"writer-{n}", session=f"s{n}-{i}"),
        )
        latencies.append(time.perf_counter() - start)
    library.close()
    print(json.dumps(latencies))
    """
)


@pytest.mark.slow
def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    Library.init(root).close()
    setup_commits = commit_count(root)
    env = child_env(tmp_path / "child-home")

    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(n), str(WRITES_PER_WRITER)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        for n in range(WRITERS)
    ]
    latencies: list[float] = []
    failures = []
    for n, proc in enumerate(procs):
        try:
            out, err = proc.communicate(timeout=CHILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            for other in procs:
                other.kill()
            raise
        if proc.returncode != 0:
            failures.append(f"writer {n} exited {proc.returncode}: {err.decode(errors='replace')}")
        else:
            latencies += json.loads(out)
    wall = time.perf_counter() - started
    assert not failures, "\n".join(failures)

    total = WRITERS * WRITES_PER_WRITER
    print(
        f"\n[concurrent] {WRITERS} writers x {WRITES_PER_WRITER} writes = {total} commits in "
        f"{wall:.1f} s ({total / wall:.0f} writes/s); per-write latency incl. lock wait "
        f"p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms, max {max(latencies) * 1000:.0f} ms"
    )

    with Library.open(root) as library:
        present: set[str] = set()
        for agent in ["shared", *(f"w{n}" for n in range(WRITERS))]:
            names = entity_names(library, agent)
            assert len(names) == len(set(names)), f"{agent} holds a row twice"
            present |= set(names)
        expected = {f"p{n}-e{i}" for n in range(WRITERS) for i in range(WRITES_PER_WRITER)}
        assert expected - present == set(), f"lost rows: {sorted(expected - present)[:20]}"
        shared = {f"p{n}-e{i}" for n in range(WRITERS) for i in range(0, WRITES_PER_WRITER, 2)}
        assert set(entity_names(library, "shared")) == shared

    assert commit_count(root) == total + setup_commits

    log = parse_log(root)
    writes = log[:total]
    sessions = []
    for commit, trailers in writes:
        missing = [k for k in TRAILER_KEYS if not trailers.get(k)]
        assert not missing, f"commit {commit} lacks trailers {missing}: {trailers}"
        assert trailers["Op"] == "merge", (commit, trailers)
        n, i = trailers["Session"][1:].split("-")
        assert trailers["Caller"] == f"writer-{n}", (commit, trailers)
        assert trailers["Agent"] == ("shared" if int(i) % 2 == 0 else f"w{n}"), (commit, trailers)
        sessions.append(trailers["Session"])
    assert sorted(sessions) == sorted(
        f"s{n}-{i}" for n in range(WRITERS) for i in range(WRITES_PER_WRITER)
    ), "every write must be committed exactly once"

    for commit, trailers in random.Random(KILL_SEED).sample(writes, 20):
        raw = git(root, "show", f"{commit}:agents/{trailers['Agent']}.l5.yaml").stdout
        data = schema.load_manifest(raw).data
        assert digest(data) == trailers["Digest"], (
            f"Bourdon-Digest of {commit} is not its manifest's"
        )

    assert_fsck_clean(root)
    status = git(root, "status", "--porcelain").stdout.decode()
    assert status == "", f"working files differ from HEAD:\n{status}"


# -- 2. expected_digest races ----------------------------------------------------------------

RACER = textwrap.dedent(
    """
    import json, sys
    from bourdon.errors import ConflictError
    from bourdon.store.library import Library
    from bourdon.store.provenance import Provenance

    path, n = sys.argv[1], int(sys.argv[2])
    library = Library.open(path)
    print(json.dumps({"ready": n}), flush=True)
    for line in sys.stdin:
        order = json.loads(line)
        if order.get("stop"):
            break
        name = f"r{order['round']}-c{n}"
        change = {"known_entities": [{"name": name}]}
        # Phase 1: everything is prepared; say so and wait for the common start signal.
        print(json.dumps({"armed": n}), flush=True)
        if sys.stdin.readline().strip() != "go":
            break
        try:
            result = library.commit(
                "race", change, expected_digest=order["digest"],
                provenance=Provenance(caller=f"racer-{n}", session=name),
            )
            answer = {"ok": True, "name": name, "digest": result.digest,
                      "before": result.previous_digest}
        except ConflictError as exc:
            answer = {"ok": False, "name": name, "current": exc.current_digest}
        print(json.dumps(answer), flush=True)
    library.close()
    """
)


def _answer(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=CHILD_TIMEOUT)
        err = proc.stderr.read() if proc.stderr else ""
        raise AssertionError(f"racer {proc.args[-1]} stopped (exit {proc.returncode}): {err}")
    return json.loads(line)  # type: ignore[no-any-return]


def test_same_expected_digest_has_exactly_one_winner_per_round(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    with Library.init(root) as library:
        library.commit(
            "race", {"agent": {"type": "code-assistant"}, "known_entities": [{"name": "seed"}]}
        )
    env = child_env(tmp_path / "child-home")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(root), str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
        )
        for n in range(WRITERS)
    ]
    winners: list[str] = []
    losers: set[str] = set()
    try:
        for proc in procs:
            assert "ready" in _answer(proc)
        for rnd in range(RACE_ROUNDS):
            with Library.open(root) as library:
                before = library.current_digest("race")
            assert before is not None
            order = json.dumps({"round": rnd, "digest": before}) + "\n"
            for proc in procs:
                assert proc.stdin is not None
                proc.stdin.write(order)
                proc.stdin.flush()
            for proc in procs:
                assert "armed" in _answer(proc)
            for proc in procs:  # the start signal, to all eight within microseconds
                assert proc.stdin is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
            answers = [_answer(proc) for proc in procs]

            won = [a for a in answers if a["ok"]]
            lost = [a for a in answers if not a["ok"]]
            assert len(won) == 1, f"round {rnd}: {len(won)} winners with the same digest: {won}"
            assert len(lost) == WRITERS - 1
            winner = won[0]
            assert winner["before"] == before, f"round {rnd}: the winner wrote on top of another"
            with Library.open(root) as library:
                after = library.current_digest("race")
            assert winner["digest"] == after, f"round {rnd}: winner's digest is not current"
            for answer in lost:
                assert answer["current"] == after, (
                    f"round {rnd}: ConflictError.current_digest {answer['current']} is not the "
                    f"digest after the winner's write {after}"
                )
            winners.append(winner["name"])
            losers |= {a["name"] for a in lost}
    finally:
        for proc in procs:
            if proc.poll() is None and proc.stdin is not None:
                try:
                    proc.stdin.write(json.dumps({"stop": True}) + "\n")
                    proc.stdin.close()
                except OSError:
                    pass
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()

    with Library.open(root) as library:
        names = entity_names(library, "race")
        history = library.history("race", limit=None)
    assert len(names) == len(set(names)), "a row was applied twice"
    assert sorted(names) == sorted(["seed", *winners]), "exactly the winners' rows, once each"
    assert not losers & set(names), "a losing write was applied"
    assert len(history) == 1 + RACE_ROUNDS
    assert_fsck_clean(root)


# -- 3. SIGKILL during writes ----------------------------------------------------------------

KILLED = textwrap.dedent(
    """
    import sys
    from bourdon.store.library import Library
    from bourdon.store.provenance import Provenance

    path, rnd = sys.argv[1], int(sys.argv[2])
    library = Library.open(path)
    agents = ("big", "a1", "a2")
    print("READY", flush=True)
    for i in range(100_000):
        agent = agents[i % 3]
        name = f"k{rnd}-{i}"
        library.commit(agent, {"known_entities": [{"name": name, "type": "project"}]},
                       provenance=Provenance(caller="killed", session=f"k{rnd}"))
        print(f"ACK {name} {agent}", flush=True)
    """
)


def _read_until(
    fd: int, deadline: float, want_ready: bool, lines: list[str], buf: bytearray
) -> bool:
    """Collect complete lines from ``fd`` until the deadline (or READY); False on EOF."""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            if not sel.select(timeout=left):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return False
            buf.extend(chunk)
            while b"\n" in buf:
                line, _, rest = bytes(buf).partition(b"\n")
                buf[:] = rest
                lines.append(line.decode())
                if want_ready and line == b"READY":
                    return True


@pytest.mark.slow
def test_kill_during_writes_loses_no_acknowledged_write(tmp_path: Path) -> None:
    rng = random.Random(KILL_SEED)
    print(f"\n[kill] seed {KILL_SEED} (set BOURDON_KILL_SEED to replay)")
    root = tmp_path / "lib"
    with Library.init(root) as library:
        seed_rows = [
            {"name": f"seed-{i}", "type": "project", "summary": "x" * 60}
            for i in range(BIG_SEED_ROWS)
        ]
        library.commit("big", {"agent": {"type": "code-assistant"}, "known_entities": seed_rows})
        for agent in ("a1", "a2"):
            library.commit(
                agent,
                {"agent": {"type": "note-capture"}, "known_entities": [{"name": f"seed-{agent}"}]},
            )
    env = child_env(tmp_path / "child-home")
    recovered = root / ".bourdon" / "recovered"

    acked: dict[str, set[str]] = {"big": set(), "a1": set(), "a2": set()}
    child_acks = 0
    kills = mid_write = reconciles = dirty_before_open = 0
    # Temp files of bourdon's local state (.bourdon/) that survive a reopen are collected and
    # reported at the end, so that one such leak does not stop the data-safety checks of the
    # remaining rounds. Anything else left behind fails the round at once.
    local_leaks: dict[str, int] = {}
    rnd = 0
    started = time.perf_counter()
    while rnd < KILL_ROUNDS or (child_acks < KILL_MIN_ACKS and rnd < KILL_MAX_ROUNDS):
        stderr_path = tmp_path / f"child-{rnd}.err"
        with open(stderr_path, "wb") as stderr:
            proc = subprocess.Popen(
                [sys.executable, "-c", KILLED, str(root), str(rnd)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
                start_new_session=True,  # the kill takes the child's git processes too
            )
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        lines: list[str] = []
        buf = bytearray()
        try:
            alive = _read_until(fd, time.monotonic() + 60, True, lines, buf)
            assert alive and lines and lines[-1] == "READY", (
                f"round {rnd}: child never got ready: {lines} {stderr_path.read_text()}"
            )
            delay = rng.uniform(0.0, 0.4)
            alive = _read_until(fd, time.monotonic() + delay, False, lines, buf)
            assert alive, f"round {rnd}: child died by itself: {stderr_path.read_text()}"
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
        while chunk := os.read(fd, 65536):  # ACKs printed before the kill are acknowledged
            buf.extend(chunk)
        proc.stdout.close()
        lines += bytes(buf).decode().split("\n")[:-1] if b"\n" in buf else []
        assert proc.returncode == -signal.SIGKILL, f"round {rnd}: exit {proc.returncode}"
        kills += 1
        for line in lines:
            if line.startswith("ACK "):
                _, name, agent = line.split()
                acked[agent].add(name)
                child_acks += 1

        # What the kill left behind, before anything repairs it.
        if (root / ".bourdon" / "intent.json").exists():
            mid_write += 1
        if set(leftovers(root)) - set(local_leaks):
            dirty_before_open += 1
        aside_before = len(list(recovered.iterdir())) if recovered.exists() else 0

        library = Library.open(root)  # reconciles
        try:
            aside_after = len(list(recovered.iterdir())) if recovered.exists() else 0
            reconciles += aside_after > aside_before
            assert_fsck_clean(root)
            assert not (root / ".bourdon" / "intent.json").exists(), f"round {rnd}: intent kept"
            left = leftovers(root)
            for path in left:
                if path.startswith(".bourdon/"):
                    local_leaks.setdefault(path, rnd)
            others = [p for p in left if not p.startswith(".bourdon/")]
            assert others == [], f"round {rnd}: left after reopen: {others}"
            assert_worktree_equals_head(root)
            for agent, names in acked.items():
                lost = names - set(entity_names(library, agent))
                assert not lost, f"round {rnd}: acknowledged rows lost from {agent}: {sorted(lost)}"
            name = f"after-{rnd}"
            result = library.commit(
                "a1", {"known_entities": [{"name": name}]}, provenance=Provenance(caller="parent")
            )
            assert result.version is not None
            acked["a1"].add(name)
            assert_worktree_equals_head(root)
        finally:
            library.close()
        rnd += 1

    wall = time.perf_counter() - started
    with Library.open(root) as library:
        big_rows = len(entity_names(library, "big"))
    print(
        f"[kill] {kills} kills in {wall:.1f} s, {child_acks} acknowledged child writes "
        f"(+{rnd} parent writes), {mid_write} kills with a write in flight (intent.json present), "
        f"{dirty_before_open} left new temp/lock files, {len(local_leaks)} temp files leaked in "
        f".bourdon/, {reconciles} reconciles moved a file to "
        f".bourdon/recovered/; 'big' holds {big_rows} rows"
    )
    assert child_acks >= KILL_MIN_ACKS, f"only {child_acks} acknowledged writes"
    assert not local_leaks, (
        f"BUG: temp files a killed writer left in .bourdon/ survive Library.open and the next "
        f"write (path -> round of the kill): {local_leaks}; see "
        f"test_open_clears_temp_files_a_kill_left_in_local_state"
    )
    assert mid_write > 0, "no kill landed while a write was in flight; the test proves little"
    assert_fsck_clean(root)


# -- 4..6. deterministic recovery cases --------------------------------------------------------


def test_reconcile_restores_uncommitted_file_and_keeps_it_aside(library: Library) -> None:
    root = library.root
    library.commit("x", {"agent": {"type": "code-assistant"}, "known_entities": [{"name": "kept"}]})
    committed = library.read_bytes("x")
    head = library.head()
    history = [v.version_id for v in library.history("x", limit=None)]
    library.close()

    # A crash after the file write and before the commit: exactly what Library._write leaves.
    uncommitted = committed.replace(b"name: kept", b"name: never-committed")
    assert uncommitted != committed
    (root / "agents" / "x.l5.yaml").write_bytes(uncommitted)
    intent = {"paths": ["agents/x.l5.yaml"], "head": head, "pid": 999_999}
    (root / ".bourdon" / "intent.json").write_text(json.dumps(intent), encoding="utf-8")

    with Library.open(root) as reopened:
        assert (root / "agents" / "x.l5.yaml").read_bytes() == committed
        assert reopened.head() == head
        assert [v.version_id for v in reopened.history("x", limit=None)] == history
        assert entity_names(reopened, "x") == ["kept"]
    aside = list((root / ".bourdon" / "recovered").iterdir())
    assert [p.read_bytes() for p in aside] == [uncommitted]
    assert not (root / ".bourdon" / "intent.json").exists()
    assert git(root, "status", "--porcelain").stdout == b""


def test_stale_git_locks_are_cleared_on_open(library: Library) -> None:
    root = library.root
    library.commit("x", {"agent": {"type": "code-assistant"}, "known_entities": [{"name": "a"}]})
    library.close()
    locks = [root / ".git" / "index.lock", root / ".git" / "refs" / "heads" / "main.lock"]
    long_ago = time.time() - 3600  # left by a git killed an hour ago; no git runs there now
    for lock in locks:
        lock.write_bytes(b"")
        os.utime(lock, (long_ago, long_ago))

    with Library.open(root) as reopened:
        result = reopened.commit("x", {"known_entities": [{"name": "b"}]})
        assert result.version is not None and reopened.head() == result.version
        assert entity_names(reopened, "x") == ["a", "b"]
    for lock in locks:
        assert not lock.exists(), f"{lock} survived"
    assert_fsck_clean(root)
    assert git(root, "status", "--porcelain").stdout == b""


def test_hand_edit_is_committed_before_a_write_not_lost(library: Library) -> None:
    root = library.root
    path = root / "agents" / "handy.l5.yaml"
    library.commit(
        "handy", {"agent": {"type": "code-assistant"}, "known_entities": [{"name": "first"}]}
    )

    data = yaml.safe_load(path.read_bytes())
    data["known_entities"].append({"name": "hand-added", "type": "project"})
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    assert schema.load_manifest(path.read_bytes()).data  # the edit is valid

    result = library.commit(
        "handy", {"known_entities": [{"name": "after"}]}, provenance=Provenance(caller="tester")
    )
    assert sorted(entity_names(library, "handy")) == ["after", "first", "hand-added"]
    versions = library.history("handy", limit=None)
    assert [(v.op, v.caller) for v in versions] == [
        ("merge", "tester"),
        ("adopt", "filesystem"),
        ("merge", "operator"),
    ]
    assert versions[0].version_id == result.version
    adopted = library.read("handy", versions[1].version_id)
    assert sorted(r["name"] for r in adopted.data["known_entities"]) == ["first", "hand-added"]
    assert path.read_bytes() == library.read_bytes("handy")

    # A hand edit that does not validate stops the write and names the file.
    head = library.head()
    broken = path.read_bytes().replace(b"name: hand-added", b"nome: hand-added")
    assert broken != path.read_bytes()
    path.write_bytes(broken)
    with pytest.raises(LibraryError) as caught:
        library.commit("handy", {"known_entities": [{"name": "refused"}]})
    assert "agents/handy.l5.yaml" in caught.value.message
    assert library.head() == head
    assert "refused" not in entity_names(library, "handy")
    assert not (root / ".bourdon" / "intent.json").exists()


def test_open_clears_temp_files_a_kill_left_in_local_state(library: Library) -> None:
    """A writer killed inside ``_atomic_write`` of its intent record (or of a cache entry)
    leaves ``.bourdon/.intent.json.<pid>.<tid>.tmp`` (or, in ``ManifestCache.put``,
    ``.bourdon/cache/.<blob>.<pid>.<tid>.tmp``).
    No intent.json exists yet at that point, so nothing reconciles, and the file stays forever:
    one more per kill. The kill test above hits this in most seeds."""
    root = library.root
    library.commit("x", {"agent": {"type": "code-assistant"}, "known_entities": [{"name": "a"}]})
    library.close()
    head = git(root, "rev-parse", "HEAD").stdout.decode().strip()
    # The names _atomic_write and ManifestCache.put use, for a process that no longer exists.
    intent_tmp = root / ".bourdon" / ".intent.json.999999.140000000000000.tmp"
    intent_tmp.write_text(json.dumps({"paths": ["agents/x.l5.yaml"], "head": head})[:20])
    (root / ".bourdon" / "cache").mkdir(exist_ok=True)
    cache_tmp = root / ".bourdon" / "cache" / f".{'0' * 40}.999999.140000000000000.tmp"
    cache_tmp.write_text('{"spec_version": "0.')

    with Library.open(root) as reopened:
        reopened.commit("x", {"known_entities": [{"name": "b"}]})
        assert entity_names(reopened, "x") == ["a", "b"]
    survivors = [p.relative_to(root).as_posix() for p in (intent_tmp, cache_tmp) if p.exists()]
    assert survivors == [], (
        f"BUG: Library.open + a write leave the temp files of a killed writer in place: "
        f"{survivors} (reconcile only sweeps agents/ and staging/, and open reconciles only when "
        f"intent.json or a git lock exists)"
    )
