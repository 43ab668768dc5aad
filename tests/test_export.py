"""The export pipeline over a real library, driven by a fake reader, and its CLI surfaces.

The fake reader implements the Reader protocol over a folder holding one ``rows.json`` (the
"native store"); the tests rewrite that file to make the store grow, shrink or go quiet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bourdon.cli.main import main
from bourdon.ingest.failures import hook_failures, hook_failures_path
from bourdon.ingest.outcome import COMMITTED, DRY_RUN, MISSING, NO_OP, REFUSED, UNCHANGED
from bourdon.ingest.pipeline import export_reader
from bourdon.ingest.watermarks import drifting_surfaces, load_watermark, watermark_path
from bourdon.readers import Broken
from bourdon.readers.base import (
    Health,
    Reader,
    ReaderContext,
    ReadResult,
    ReadStats,
    default_health,
    store_path,
)
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance

ROOT = Path(__file__).resolve().parent.parent


class FakeReader:
    """A reader over ``<home>/.<name>/rows.json``: {"known_entities": [...], ...}."""

    agent_type = "code-assistant"

    def __init__(self, name: str = "fake-agent", fail: bool = False) -> None:
        self.name = name
        self.store_env = name.upper().replace("-", "_") + "_STORE"
        self.fail = fail
        self.reads = 0

    def locations(self, ctx: ReaderContext) -> list[Path]:
        return [ctx.home / f".{self.name}"]

    def read(self, ctx: ReaderContext) -> ReadResult:
        self.reads += 1
        if self.fail:
            raise RuntimeError("the store's database is malformed")
        folder = store_path(self, ctx)
        assert folder is not None
        stats = ReadStats(files=1)
        data = json.loads((folder / "rows.json").read_text(encoding="utf-8"))
        return ReadResult({"agent": {"instance": f"{self.name} on test"}, **data}, stats)

    def health(self, ctx: ReaderContext) -> Health:
        return default_health(self, ctx)


def test_the_fake_reader_implements_the_protocol() -> None:
    assert isinstance(FakeReader(), Reader)


def entities(n: int, prefix: str = "entity") -> list[dict[str, Any]]:
    return [{"name": f"{prefix}-{i}", "type": "project", "summary": f"row {i}"} for i in range(n)]


class Store:
    """The fake agent's native store under a home folder."""

    def __init__(self, home: Path, name: str = "fake-agent") -> None:
        self.folder = home / f".{name}"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.tick = 0

    def write(self, **sections: Any) -> None:
        path = self.folder / "rows.json"
        path.write_text(json.dumps(sections), encoding="utf-8")
        # A distinct modification time even on coarse clocks: the fingerprint must see it.
        self.tick += 1
        stamp = time.time() + self.tick
        os.utime(path, (stamp, stamp))


@pytest.fixture
def home(isolated_home: Path) -> Path:
    return isolated_home


@pytest.fixture
def ctx(home: Path) -> ReaderContext:
    return ReaderContext(home=home, machine="test-box")


@pytest.fixture
def store(home: Path) -> Store:
    return Store(home)


def who(machine: str = "test-box") -> Provenance:
    return Provenance(caller="reader:fake-agent", machine=machine)


def names(library: Library, agent: str = "fake-agent") -> set[str]:
    return {r["name"] for r in library.read(agent).rows("known_entities")}


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# -- the pipeline -------------------------------------------------------------------------


def test_first_export_commits_the_rows_with_the_reader_as_source(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    store.write(known_entities=entities(3), notes=[{"date": "2026-11-02", "text": "a note"}])
    result = export_reader(library, FakeReader(), ctx)
    assert result.outcome == COMMITTED and result.ok
    assert (result.rows, result.added, result.previous_rows) == (4, 4, 0)
    manifest = library.read("fake-agent")
    assert manifest.agent_type == "code-assistant"
    assert all(
        r["source"] == {"kind": "reader", "name": "fake-agent", "machine": "test-box"}
        for _, r in manifest.all_rows()
    )
    version = library.history("fake-agent")[0]
    assert (version.op, version.caller, version.version_id) == (
        "export",
        "reader:fake-agent",
        result.version,
    )
    mark = load_watermark(library.root, "fake-agent")
    assert mark is not None
    assert mark["outcome"] == COMMITTED and mark["rows"] == 4
    assert mark["fingerprint"].startswith("sha256:") and mark["store_files"] == 1
    assert mark["exported_at"] and mark["checked_at"] and mark["version"] == result.version
    assert mark["drifting"] is None


def test_rows_committed_by_others_and_other_machines_survive_regeneration(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    store.write(known_entities=entities(3))
    export_reader(library, FakeReader(), ctx)
    library.commit(
        "fake-agent",
        {"known_entities": [{"name": "by-hand", "summary": "ada wrote this"}]},
        provenance=Provenance(caller="ada"),
    )
    library.regenerate(
        "fake-agent",
        {"known_entities": [{"name": "from-laptop"}]},
        reader="fake-agent",
        provenance=who("laptop"),
    )
    store.write(known_entities=entities(2, "fresh"))
    result = export_reader(library, FakeReader(), ctx)
    assert result.outcome == COMMITTED
    assert names(library) == {"by-hand", "from-laptop", "fresh-0", "fresh-1"}
    assert result.removed == 3  # only this reader's rows from this machine went


def test_a_re_export_with_nothing_new_reads_nothing_and_writes_no_commit(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    store.write(known_entities=entities(20))
    reader = FakeReader()
    export_reader(library, reader, ctx)
    head = library.head()
    result = export_reader(library, reader, ctx)
    assert result.outcome == UNCHANGED and result.rows == 20
    assert reader.reads == 1  # the store was not read again (how fast that is: make bench)
    assert library.head() == head
    mark = load_watermark(library.root, "fake-agent")
    assert mark is not None and mark["outcome"] == UNCHANGED and mark["rows"] == 20
    # --force reads again; the library already holds these rows, so still no commit.
    forced = export_reader(library, reader, ctx, force=True)
    assert forced.outcome == NO_OP and reader.reads == 2 and library.head() == head


def test_a_store_change_is_seen_and_an_identical_view_is_a_no_op(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    store.write(known_entities=entities(2))
    export_reader(library, FakeReader(), ctx)
    head = library.head()
    store.write(known_entities=entities(2))  # touched, same content
    result = export_reader(library, FakeReader(), ctx)
    assert result.outcome == NO_OP and library.head() == head
    (store.folder / "other.log").write_text("new file", encoding="utf-8")
    assert export_reader(library, FakeReader(), ctx).outcome == NO_OP


def test_the_erosion_guard_refuses_a_big_drop_and_force_commits_it(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    store.write(known_entities=entities(30))
    export_reader(library, FakeReader(), ctx)
    head = library.head()
    store.write(known_entities=entities(5))
    refused = export_reader(library, FakeReader(), ctx)
    assert refused.outcome == REFUSED and not refused.ok
    assert refused.reason and "drop 25 of the 30 rows" in refused.reason
    assert "--force" in refused.reason
    assert library.head() == head and len(names(library)) == 30
    mark = load_watermark(library.root, "fake-agent")
    assert mark is not None and mark["outcome"] == REFUSED and "drop 25" in mark["reason"]
    # Refused exports are looked at again, not skipped as unchanged.
    assert export_reader(library, FakeReader(), ctx).outcome == REFUSED
    forced = export_reader(library, FakeReader(), ctx, force=True)
    assert forced.outcome == COMMITTED and forced.removed == 25
    assert forced.reason and forced.reason.startswith("forced past the erosion guard")
    assert len(names(library)) == 5


def test_small_drops_pass_the_guard(library: Library, ctx: ReaderContext, store: Store) -> None:
    store.write(known_entities=entities(30))
    export_reader(library, FakeReader(), ctx)
    store.write(known_entities=entities(20))  # 10 rows: not more than 10
    assert export_reader(library, FakeReader(), ctx).outcome == COMMITTED
    store.write(known_entities=entities(12))  # 8 of 20: under half
    assert export_reader(library, FakeReader(), ctx).outcome == COMMITTED
    store.write(known_entities=entities(12) + entities(3, "new"))
    assert export_reader(library, FakeReader(), ctx).outcome == COMMITTED


def test_losing_rows_three_exports_in_a_row_is_refused(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    for n in (40, 38, 36):
        store.write(known_entities=entities(n))
        assert export_reader(library, FakeReader(), ctx).outcome == COMMITTED
    store.write(known_entities=entities(34))
    refused = export_reader(library, FakeReader(), ctx)
    assert refused.outcome == REFUSED
    assert refused.reason and "3 exports in a row (40 -> 38 -> 36 -> 34)" in refused.reason
    assert export_reader(library, FakeReader(), ctx, force=True).outcome == COMMITTED
    store.write(known_entities=entities(33))  # the streak starts again after a forced export
    assert export_reader(library, FakeReader(), ctx).outcome == COMMITTED


def test_a_store_that_stops_yielding_is_drifting_and_not_emptied(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    store.write(known_entities=entities(4))
    export_reader(library, FakeReader(), ctx)
    store.write()  # the format changed: the reader finds nothing
    result = export_reader(library, FakeReader(), ctx)
    assert result.outcome == REFUSED and result.reason and "no rows" in result.reason
    assert len(names(library)) == 4
    drifting = drifting_surfaces(library.root)
    assert len(drifting) == 1
    assert set(drifting[0]) == {"reader", "checked_at", "reason"}
    assert drifting[0]["reader"] == "fake-agent" and "yielded no rows" in drifting[0]["reason"]
    store.write(known_entities=entities(4))
    assert export_reader(library, FakeReader(), ctx).outcome in (COMMITTED, NO_OP)
    assert drifting_surfaces(library.root) == []


def test_a_store_that_disappears_is_missing_and_drifting(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    store.write(known_entities=entities(2))
    export_reader(library, FakeReader(), ctx)
    (store.folder / "rows.json").unlink()
    store.folder.rmdir()
    result = export_reader(library, FakeReader(), ctx)
    assert result.outcome == MISSING and result.drifting is not None
    assert [d["reader"] for d in drifting_surfaces(library.root)] == ["fake-agent"]
    assert len(names(library)) == 2


def test_a_dry_run_names_the_changes_and_writes_nothing(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    store.write(known_entities=entities(3))
    export_reader(library, FakeReader(), ctx)
    store.write(
        known_entities=[
            *entities(2),
            {"name": "entity-1", "summary": "changed"},
            *entities(1, "brand-new"),
        ]
    )
    before = snapshot(library.root)
    result = export_reader(library, FakeReader(), ctx, dry_run=True)
    assert result.outcome == DRY_RUN and result.changes is not None
    assert result.changes.added["known_entities"] == ["brand-new-0"]
    assert result.changes.removed["known_entities"] == ["entity-2"]
    assert result.changes.changed["known_entities"] == ["entity-1"]
    assert snapshot(library.root) == before


def test_a_dry_run_on_a_fresh_library_creates_no_watermark(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    store.write(known_entities=entities(2))
    before = snapshot(library.root)
    result = export_reader(library, FakeReader(), ctx, dry_run=True)
    assert result.added == 2 and snapshot(library.root) == before
    assert not watermark_path(library.root, "fake-agent").exists()


def test_an_export_never_lowers_a_rows_visibility(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    store.write(
        known_entities=[
            {"name": "shared", "visibility": "team"},
            {"name": "secretive", "visibility": "private"},
            {"name": "plain"},
        ],
        visibility_policy={"default": "public"},
    )
    export_reader(library, FakeReader(), ctx)
    library.commit(
        "fake-agent",
        {
            "visibility_policy": {"default": "team"},
            "known_entities": [{"name": "shared", "visibility": "private"}],
        },
        provenance=Provenance(caller="ada"),
    )
    store.write(
        known_entities=[
            {"name": "shared", "visibility": "team", "summary": "touched"},
            {"name": "secretive", "visibility": "private", "summary": "touched"},
            {"name": "plain", "summary": "touched"},
        ],
        visibility_policy={"default": "public"},
    )
    assert export_reader(library, FakeReader(), ctx).outcome == COMMITTED
    manifest = library.read("fake-agent")
    rows = {r["name"]: r for r in manifest.rows("known_entities")}
    assert rows["shared"]["visibility"] == "private"
    assert rows["secretive"]["visibility"] == "private"
    assert manifest.policy["default"] == "team"
    assert "visibility" not in rows["plain"]  # team by the policy, as before


def test_secrets_in_the_view_are_redacted_before_the_commit(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    key = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"
    store.write(
        recent_sessions=[
            {
                "date": "2026-11-03",
                "cwd": "/w",
                "key_actions": [f"gh auth login --with-token {key}"],
            }
        ]
    )
    result = export_reader(library, FakeReader(), ctx)
    assert result.redacted == {"github-token": 1}
    raw = library.read_bytes("fake-agent").decode()
    assert key not in raw and "[redacted:github-token]" in raw


def test_a_reader_that_raises_fails_with_a_one_line_error(
    library: Library, ctx: ReaderContext, store: Store
) -> None:
    from bourdon.errors import BourdonError

    store.write(known_entities=entities(1))
    with pytest.raises(BourdonError, match=r"the fake-agent reader failed on .*RuntimeError"):
        export_reader(library, FakeReader(fail=True), ctx)
    assert library.head() is not None and "fake-agent" not in library.agent_ids()


def test_an_explicit_store_path_is_read(library: Library, home: Path, tmp_path: Path) -> None:
    elsewhere = Store(tmp_path / "mounted")
    elsewhere.write(known_entities=entities(2, "mounted"))
    ctx = ReaderContext(home=home, machine="test-box", store=elsewhere.folder)
    result = export_reader(library, FakeReader(), ctx)
    assert result.store == str(elsewhere.folder)
    assert names(library) == {"mounted-0", "mounted-1"}


# -- the CLI ------------------------------------------------------------------------------


Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def readers(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The registered readers the CLI sees: two fake ones and a broken plugin."""
    found: dict[str, Any] = {"fake-agent": FakeReader(), "quiet-agent": FakeReader("quiet-agent")}
    broken = [Broken("ghost", "ghost_plugin:GhostReader", "ModuleNotFoundError: ghost_plugin")]
    monkeypatch.setattr(
        "bourdon.ingest.selection.available_readers", lambda only=None: (found, broken)
    )
    return found


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], library: Library) -> Iterator[Run]:
    def run(*args: object) -> tuple[int, str, str]:
        code = main(["--library", str(library.root), *map(str, args)])
        out, err = capsys.readouterr()
        return code, out, err

    yield run


def test_cli_export_prints_what_it_did_and_json_for_scripts(
    cli: Run, readers: dict[str, Any], store: Store
) -> None:
    store.write(known_entities=entities(3))
    code, out, err = cli("export", "fake-agent")
    assert code == 0, err
    assert out.startswith("Exported fake-agent: +3 added, ~0 updated, -0 removed (3 rows from ")
    code, out, _ = cli("export", "fake-agent", "--json")
    data = json.loads(out)
    assert (code, data["outcome"], data["rows"]) == (0, "unchanged", 3)
    code, out, _ = cli("export", "no-such-agent")
    assert code == 4 and out == ""


def test_cli_export_dry_run_lists_rows_by_name_and_writes_nothing(
    cli: Run, readers: dict[str, Any], store: Store, library: Library
) -> None:
    store.write(known_entities=entities(2))
    before = snapshot(library.root)
    code, out, _ = cli("export", "fake-agent", "--dry-run")
    assert code == 0
    assert "would add 2, change 0 and remove 0 rows" in out
    assert "  + known_entities: entity-0" in out and "Nothing was written." in out
    assert snapshot(library.root) == before


def test_cli_export_refused_by_the_guard_exits_5_and_force_commits(
    cli: Run, readers: dict[str, Any], store: Store
) -> None:
    store.write(known_entities=entities(30))
    cli("export", "fake-agent")
    store.write(known_entities=entities(3))
    code, out, err = cli("export", "fake-agent", "--json")
    assert code == 5 and json.loads(out)["outcome"] == "refused"
    assert "refused: it would drop 27 of the 30 rows" in err
    code, out, _ = cli("export", "fake-agent", "--force")
    assert code == 0 and "-27 removed" in out


def test_cli_export_store_option_and_a_missing_store(
    cli: Run, readers: dict[str, Any], tmp_path: Path
) -> None:
    code, _, err = cli("export", "fake-agent")
    assert code == 4 and "no fake-agent store" in err and "set FAKE_AGENT_STORE" in err
    elsewhere = Store(tmp_path / "x")
    elsewhere.write(known_entities=entities(1))
    code, out, _ = cli("export", "fake-agent", "--store", elsewhere.folder)
    assert code == 0 and str(elsewhere.folder) in out


def test_cli_export_all_shows_progress_on_stderr_and_the_summary_on_stdout(
    cli: Run, readers: dict[str, Any], store: Store
) -> None:
    store.write(known_entities=entities(2))
    code, out, err = cli("export-all")
    assert code == 0
    progress = err.splitlines()
    assert progress[0].startswith("[1/2] fake-agent: committed: 2 rows (+2 ~0 -0) in ")
    assert progress[1] == "[2/2] quiet-agent: no store on this machine, skipped"
    assert out.splitlines()[0].split() == [
        "READER",
        "OUTCOME",
        "ROWS",
        "+",
        "~",
        "-",
        "REDACTED",
        "NOTE",
    ]
    assert "fake-agent   committed" in out and "[1/2]" not in out
    assert out.splitlines()[-1] == (
        "1 exported or up to date, 1 without a store here, 0 failed or refused, "
        "1 plugin failed to load"
    )
    code, out, err = cli("export-all", "--json")
    data = json.loads(out)
    assert code == 0 and data["ok"] is True
    assert [r["outcome"] for r in data["readers"]] == ["unchanged", "missing"]
    assert data["broken"][0]["name"] == "ghost"
    assert err.count("\n") == 2


def test_cli_export_all_carries_on_past_a_failing_reader(
    cli: Run, readers: dict[str, Any], store: Store, home: Path
) -> None:
    readers["fake-agent"].fail = True
    store.write(known_entities=entities(2))
    Store(home, "quiet-agent").write(known_entities=entities(1))
    code, out, err = cli("export-all", "--json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False
    assert [r["outcome"] for r in data["readers"]] == ["failed", "committed"]
    assert "FAILED: the fake-agent reader failed" in err


def test_cli_readers_lists_each_reader_its_store_export_health_and_broken_plugins(
    cli: Run, readers: dict[str, Any], store: Store
) -> None:
    store.write(known_entities=entities(3))
    cli("export", "fake-agent")
    code, out, _ = cli("readers", "--json")
    data = json.loads(out)
    assert code == 0
    fake, quiet = data["readers"]
    assert fake["reader"] == "fake-agent" and fake["present"] is True
    assert fake["store"] == str(store.folder) and fake["rows"] == 3
    assert fake["outcome"] == "committed" and fake["last_export"] and fake["health"]["ok"]
    assert fake["drifting"] is False and fake["last_hook_failure"] is None
    assert quiet["present"] is False and quiet["health"]["ok"] is False
    assert (
        quiet["health"]["fix"]
        == "set QUIET_AGENT_STORE to the store's folder if it lives elsewhere"
    )
    assert data["broken"] == [
        {
            "name": "ghost",
            "target": "ghost_plugin:GhostReader",
            "error": "ModuleNotFoundError: ghost_plugin",
        }
    ]
    code, out, _ = cli("readers")
    assert code == 0
    assert out.splitlines()[0].split() == [
        "READER",
        "STORE",
        "ROWS",
        "LAST",
        "EXPORT",
        "OUTCOME",
        "HEALTH",
    ]
    assert "  no store on this machine for quiet-agent (" in out
    assert "quiet-agent  (none here)" in out
    assert "ghost (ghost_plugin:GhostReader): ModuleNotFoundError" in out


def test_cli_readers_shows_a_drifting_store(
    cli: Run, readers: dict[str, Any], store: Store
) -> None:
    store.write(known_entities=entities(3))
    cli("export", "fake-agent")
    store.write()
    assert cli("export", "fake-agent")[0] == 5
    data = json.loads(cli("readers", "--json")[1])
    assert data["readers"][0]["drifting"] is True
    assert "DRIFTING since" in cli("readers")[1]


def test_cli_readers_works_without_a_library(
    capsys: pytest.CaptureFixture[str], readers: dict[str, Any], tmp_path: Path
) -> None:
    code = main(["--library", str(tmp_path / "nowhere"), "readers", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["library"] is None and len(data["readers"]) == 2


# -- what the hooks run --------------------------------------------------------------------


def test_hook_export_commits_silently(
    cli: Run, readers: dict[str, Any], store: Store, library: Library
) -> None:
    store.write(known_entities=entities(2))
    code, out, err = cli("hook", "export", "fake-agent")
    assert (code, out, err) == (0, "", "")
    assert names(library) == {"entity-0", "entity-1"}


def test_hook_export_of_a_broken_store_exits_0_silently_and_readers_shows_it(
    cli: Run, readers: dict[str, Any], store: Store, library: Library
) -> None:
    readers["fake-agent"].fail = True
    store.write(known_entities=entities(2))
    code, out, _ = cli("hook", "export", "fake-agent")
    assert (code, out) == (0, "")
    failures = hook_failures(hook_failures_path(library.root))
    assert len(failures) == 1
    assert set(failures[0]) == {"what", "agent", "when", "error"}
    assert failures[0]["what"] == "export fake-agent"
    assert "RuntimeError: the store's database is malformed" in failures[0]["error"]
    data = json.loads(cli("readers", "--json")[1])
    assert data["readers"][0]["last_hook_failure"]["error"] == failures[0]["error"]
    assert "fake-agent: hook failed at " in cli("readers")[1]
    # A later good export marks the failure resolved; the table stops showing it.
    readers["fake-agent"].fail = False
    store.write(known_entities=entities(2))
    # Failure and export times have a one-second resolution: date the failure far back
    # rather than wait for the clock, so the export below is certainly later.
    log = hook_failures_path(library.root)
    backdated = {**failures[0], "when": "2000-01-01T00:00:00Z"}
    log.write_text(json.dumps(backdated) + "\n", encoding="utf-8")
    assert cli("hook", "export", "fake-agent")[0] == 0
    assert json.loads(cli("readers", "--json")[1])["readers"][0]["hook_failure_resolved"]
    assert "hook failed" not in cli("readers")[1]


def test_hook_export_refused_by_the_guard_is_recorded(
    cli: Run, readers: dict[str, Any], store: Store, library: Library
) -> None:
    store.write(known_entities=entities(30))
    cli("hook", "export", "fake-agent")
    store.write(known_entities=entities(1))
    assert cli("hook", "export", "fake-agent") == (0, "", "")
    [failure] = hook_failures(hook_failures_path(library.root))
    assert failure["error"].startswith("export refused: it would drop 29")


def test_hook_export_without_a_library_records_the_failure_in_bourdon_home(
    capsys: pytest.CaptureFixture[str], readers: dict[str, Any], home: Path, tmp_path: Path
) -> None:
    code = main(["--library", str(tmp_path / "none"), "hook", "export", "fake-agent"])
    assert (code, capsys.readouterr().out) == (0, "")
    [failure] = hook_failures(home / ".bourdon" / "hook-failures.jsonl")
    assert "no library at" in failure["error"]


def bourdon(
    *args: object, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bourdon", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def test_hook_export_for_an_unknown_agent_exits_0_and_is_listed_by_readers(
    library: Library,
) -> None:
    event = json.dumps({"session_id": "s-1", "hook_event_name": "Stop"})
    done = bourdon("--library", library.root, "hook", "export", "no-such-agent", stdin=event)
    assert (done.returncode, done.stdout) == (0, "")
    [failure] = hook_failures(hook_failures_path(library.root))
    assert (
        failure["agent"] == "no-such-agent"
        and "no reader named 'no-such-agent'" in failure["error"]
    )
    done = bourdon("--library", library.root, "readers", "--json")
    data = json.loads(done.stdout)
    assert data["other_hook_failures"][-1]["what"] == "export no-such-agent"
    done = bourdon("--library", library.root, "hook", "export", stdin=event)  # no agent at all
    assert (done.returncode, done.stdout) == (0, "")


def test_hook_user_prompt_reads_stdin_prints_nothing_and_exits_0() -> None:
    event = json.dumps(
        {"session_id": "s", "prompt": "how is ledgerline?", "hook_event_name": "UserPromptSubmit"}
    )
    done = bourdon("hook", "user-prompt", "--agent", "claude-code", stdin=event)
    assert (done.returncode, done.stdout) == (0, "")
    done = bourdon("hook", "user-prompt", stdin="not json at all")
    assert (done.returncode, done.stdout) == (0, "")


def test_a_hook_with_nothing_new_loads_neither_git_nor_schema_machinery(
    library: Library, isolated_home: Path
) -> None:
    """The real Claude Code reader and its generated store, end to end through the hook."""
    stores = pytest.importorskip("tests.support.stores.claude_code")
    stores.write_store(isolated_home, sessions=2)
    env = {"HOME": str(isolated_home), "BOURDON_LIBRARY": str(library.root)}
    done = bourdon("hook", "export", "claude-code", env=env)
    assert (done.returncode, done.stdout) == (0, "")
    assert hook_failures(hook_failures_path(library.root)) == []
    assert "claude-code" in library.agent_ids()
    probe = (
        "import sys; from bourdon.cli.main import main; main(['hook', 'export', 'claude-code']);"
        "print(sorted(m for m in ('bourdon.store.library', 'bourdon.store.git.repo', 'jsonschema', 'filelock')"
        " if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "[]")
    mark = load_watermark(library.root, "claude-code")
    assert mark is not None and mark["outcome"] == UNCHANGED
