"""Packing the loose objects in the background: when it starts, what it leaves, and that writers
and readers never notice it. Real libraries in temporary folders, real git, real background runs.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bourdon.status import health, sources
from bourdon.store.git.packing import PID_FILE, is_git_running
from bourdon.store.git.process import git_env, run_git
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest

WHO = Provenance(caller="test", session="packing")
WRITES = 120
PACK_RUNS = 30
READ_ROUNDS = 400
DEAD_PID = 4_194_400  # above Linux's largest pid_max: never a live process


def count_objects(root: Path) -> dict[str, int]:
    out = run_git(root, "count-objects", "-v").decode()
    return {k: int(v) for k, v in (line.split(": ", 1) for line in out.splitlines())}


def plant_loose(library: Library, folder: str, count: int) -> list[str]:
    """Write ``count`` real (unreachable) loose blobs whose ids fall in ``objects/<folder>``."""
    planted: list[str] = []
    n = 0
    while len(planted) < count:
        data = f"planted object {n}\n".encode()
        n += 1
        if library.repo.blob_id(data).startswith(folder):
            oid = run_git(library.root, "hash-object", "-w", "--stdin", stdin=data).decode()
            planted.append(oid.strip())
    return planted


def exists(library: Library, oid: str) -> bool:
    return library.repo.read(oid) is not None


@pytest.fixture
def agent(library: Library) -> Library:
    rows = [{"name": f"e{n}", "summary": "first"} for n in range(20)]
    library.commit("alpha", manifest("alpha", known_entities=rows), provenance=WHO)
    return library


def test_a_write_past_the_threshold_starts_a_background_pack_that_keeps_every_object(
    agent: Library,
) -> None:
    agent.repo.config_set("gc.auto", "512")  # due past 2 loose objects in objects/17
    planted = plant_loose(agent, "17", 3)
    before = agent.history("alpha", limit=None)
    assert agent.repo.packer.due()

    agent.commit("alpha", {"known_entities": [{"name": "e1", "summary": "second"}]})

    assert (agent.repo.git_dir / PID_FILE).exists()  # a run was started by the write
    assert agent.repo.packer.wait(timeout=120)
    counted = count_objects(agent.root)
    assert counted["count"] == 0 and counted["packs"] == 1
    assert not any((agent.repo.git_dir / "objects" / "17").glob("*"))
    # Unreachable objects are packed, never dropped; every version still reads.
    assert all(exists(agent, oid) for oid in planted)
    assert [v.version_id for v in agent.history("alpha", limit=None)[1:]] == [
        v.version_id for v in before
    ]
    assert agent.read("alpha").rows("known_entities")[1]["summary"] == "second"
    state = agent.object_store()
    assert state.loose < state.loose_limit and state.packs == 1 and state.last_packed
    assert agent.fsck()[0]


def test_gc_auto_zero_in_the_library_config_disables_packing(agent: Library) -> None:
    agent.repo.config_set("gc.auto", "512")
    plant_loose(agent, "17", 3)
    assert agent.repo.packer.due()
    agent.repo.config_set("gc.auto", "0")  # read again: the config file changed

    agent.commit("alpha", {"known_entities": [{"name": "e1", "summary": "second"}]})

    assert not agent.repo.packer.due()
    assert not (agent.repo.git_dir / PID_FILE).exists()
    assert count_objects(agent.root)["packs"] == 0
    assert agent.object_store().loose_limit == 0


def test_below_the_threshold_a_write_starts_nothing(agent: Library) -> None:
    plant_loose(agent, "17", 3)  # about 768 estimated: below the default 2,000
    agent.commit("alpha", {"known_entities": [{"name": "e1", "summary": "second"}]})
    assert not agent.repo.packer.due()
    assert not (agent.repo.git_dir / PID_FILE).exists()


def test_too_many_packs_are_merged_whatever_the_loose_count(agent: Library) -> None:
    for n in range(4):  # packs another tool made (git's own incremental repack), not merged
        agent.commit("alpha", {"known_entities": [{"name": "e1", "summary": f"v{n}"}]})
        run_git(agent.root, "repack", "-d", "-q")
    assert count_objects(agent.root)["packs"] >= 3
    agent.repo.config_set("gc.autoPackLimit", "2")
    assert agent.repo.packer.due()

    agent.commit("alpha", {"known_entities": [{"name": "e1", "summary": "last"}]})

    assert agent.repo.packer.wait(timeout=120)
    assert count_objects(agent.root)["packs"] <= 2
    assert len(agent.history("alpha", limit=None)) == 6
    assert agent.fsck()[0]


def test_a_run_under_way_is_not_started_twice(agent: Library) -> None:
    agent.repo.config_set("gc.auto", "512")
    plant_loose(agent, "17", 3)
    # A live git process named in the pid file: a run another process started.
    other = subprocess.Popen(
        ["git", "cat-file", "--batch"], cwd=agent.root, env=git_env(), stdin=subprocess.PIPE
    )
    try:
        (agent.repo.git_dir / PID_FILE).write_text(f"{other.pid} {time.time()}\n")
        assert agent.repo.packer.running()
        assert not agent.repo.pack_if_due()
        assert count_objects(agent.root)["packs"] == 0
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait(timeout=30)
    assert not is_git_running(other.pid)  # ended (and reaped): the turn is free again
    assert agent.repo.pack_if_due()
    assert agent.repo.packer.wait(timeout=120)
    assert count_objects(agent.root)["packs"] == 1


def test_what_a_killed_run_left_is_cleared_before_the_next(agent: Library) -> None:
    agent.repo.config_set("gc.auto", "512")
    plant_loose(agent, "17", 3)
    pack_dir = agent.repo.git_dir / "objects" / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    (agent.repo.git_dir / PID_FILE).write_text(f"{DEAD_PID} {time.time()}\n")
    dead_run = pack_dir / f".tmp-{DEAD_PID}-pack-0123abcd.pack"
    old_temp = pack_dir / "tmp_pack_Ab12Cd"
    young_temp = pack_dir / "tmp_pack_Ef34Gh"  # perhaps a fetch writing right now: kept
    for leftover in (dead_run, old_temp, young_temp):
        leftover.write_bytes(b"PACK half written")
    an_hour_ago = time.time() - 7200
    os.utime(old_temp, (an_hour_ago, an_hour_ago))
    assert not agent.repo.packer.running()  # the pid file names a dead process

    agent.commit("alpha", {"known_entities": [{"name": "e1", "summary": "second"}]})

    assert agent.repo.packer.wait(timeout=120)
    assert not dead_run.exists() and not old_temp.exists() and young_temp.exists()
    assert count_objects(agent.root)["count"] == 0
    young_temp.unlink()
    assert agent.fsck()[0]


def test_a_long_lived_reader_finds_objects_that_moved_into_a_pack(agent: Library) -> None:
    versions = []
    for n in range(5):
        result = agent.commit("alpha", {"known_entities": [{"name": "e2", "summary": f"v{n}"}]})
        versions.append(result.version)
    with Library.open(agent.root) as reader:
        # Its cat-file process starts while every object is loose...
        assert reader.read("alpha", versions[0]).rows("known_entities")[2]["summary"] == "v0"
        agent.repo.packer.pack_now()
        assert count_objects(agent.root)["count"] == 0
        # ...and reads, lists and sizes them from the pack once they moved.
        for n, version in enumerate(versions):
            assert version is not None
            rows = reader.read("alpha", version).rows("known_entities")
            assert rows[2]["summary"] == f"v{n}"
        assert [v.version_id for v in reader.history("alpha", limit=5)] == versions[::-1]
        assert all(size for size in reader.sizes("alpha", [v for v in versions if v]))


def test_writers_and_readers_never_notice_packing_running_again_and_again(
    agent: Library,
) -> None:
    agent.repo.config_set("gc.auto", "256")  # the background runs start too, as they fall due
    errors: list[BaseException] = []
    written: list[tuple[str, str]] = []
    reads = [0]
    packs = [0]
    writing_done = threading.Event()

    def guarded(fn: Any) -> Any:
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # every failure is the test's finding
                errors.append(exc)
            finally:
                if fn is write:
                    writing_done.set()

        return run

    def write() -> None:
        for n in range(WRITES):
            summary = f"write {n}"
            change = {"known_entities": [{"name": f"e{n % 20}", "summary": summary}]}
            result = agent.commit("alpha", change, provenance=WHO)
            assert result.version is not None
            written.append((result.version, summary))

    def pack() -> None:
        for _ in range(PACK_RUNS):
            if writing_done.is_set():
                break
            agent.repo.packer.pack_now()
            packs[0] += 1

    def read() -> None:
        with Library.open(agent.root) as reader:
            for _ in range(READ_ROUNDS):
                if writing_done.is_set():
                    break
                for version in reader.history("alpha", limit=3):
                    data = reader.read("alpha", version.version_id)
                    assert data.agent_id == "alpha"
                    assert reader.read_bytes("alpha", version.version_id)
                reads[0] += 1

    threads = [threading.Thread(target=guarded(f)) for f in (write, pack, read)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not any(thread.is_alive() for thread in threads)
    assert agent.repo.packer.wait(timeout=120)
    assert errors == []
    assert len(written) == WRITES and packs[0] >= 1 and reads[0] >= 1

    versions = {v.version_id for v in agent.history("alpha", limit=None)}
    assert {commit for commit, _ in written} <= versions
    for n, (commit, summary) in enumerate(written):
        rows = agent.read("alpha", commit).rows("known_entities")
        assert rows[n % 20]["summary"] == summary
    assert agent.fsck()[0]
    agent.repo.packer.pack_now()
    state = agent.object_store()
    assert count_objects(agent.root)["count"] < state.loose_limit
    assert state.loose < state.loose_limit


def test_the_status_report_shows_the_object_store_and_doctor_a_packing_that_falls_behind(
    agent: Library,
) -> None:
    agent.repo.config_set("gc.auto", "256")
    sampled = agent.root / ".git" / "objects" / "17"
    # The fixture's own commit may have put an object there too (ids vary with the time).
    already = len(list(sampled.iterdir())) if sampled.is_dir() else 0
    plant_loose(agent, "17", 5)  # five more in the sampled folder: over 1,280, over 4 x 256

    def report() -> dict[str, Any]:
        facts = health.Facts(root=agent.root, exists=True)
        facts.objects = sources.object_store(agent.repo)
        return health.compose(facts)

    behind = report()
    assert behind["objects"] == {
        "loose_estimate": (already + 5) * 256,
        "packs": 0,
        "last_packed": None,
        "packing": False,
        "loose_limit": 256,
    }
    assert [p["code"] for p in behind["problems"]] == ["objects_unpacked"]
    assert "repack" in behind["problems"][0]["fix"]

    agent.repo.packer.pack_now()
    packed = report()
    assert packed["objects"]["loose_estimate"] == 0 and packed["objects"]["packs"] == 1
    assert packed["objects"]["last_packed"].endswith("Z")
    assert packed["problems"] == []
