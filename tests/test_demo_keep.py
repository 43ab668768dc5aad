"""``bourdon demo --keep DIR`` builds the tour's library only in a folder of its own (issue 13).

The tour commits the sample agents and rolls one of them back: run over a user's library it
would write the sample over the user's rows. So ``--keep`` takes a folder that does not exist
yet (or is empty), and refuses anything else with one clear line and exit 2, writing nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bourdon.formats import yamlio
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing.serving import child_env

MINE = {
    "spec_version": "0.1",
    "agent": {"id": "claude-desktop-chat", "type": "other"},
    "last_updated": "2026-11-30T00:00:00Z",
    "known_entities": [{"name": "my own row", "visibility": "team"}],
}


def demo(home: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bourdon", "demo", *map(str, args)],
        capture_output=True, text=True, timeout=180, check=False, env=child_env(home),
    )  # fmt: skip


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_demo_keep_refuses_an_existing_library_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "mine"
    with Library.init(root) as library:
        library.import_manifest(yamlio.dump(MINE), what="mine", provenance=Provenance(caller="me"))
        head = library.head()
    before = snapshot(root)
    done = demo(tmp_path / "home", "--keep", root)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(root) in lines[0] and "--keep" in lines[0], done.stderr
    assert "== 1." not in done.stdout  # refused before the tour starts
    assert snapshot(root) == before
    with Library.open(root) as library:
        assert library.head() == head
        assert [r["name"] for r in library.read("claude-desktop-chat").rows("known_entities")] == [
            "my own row"
        ]


def test_demo_keep_refuses_a_folder_that_holds_anything(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.txt").write_text("mine\n")
    done = demo(tmp_path / "home", "--keep", folder)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not empty" in done.stderr
    assert snapshot(folder) == {"todo.txt": b"mine\n"}


def test_demo_keep_refuses_a_file(tmp_path: Path) -> None:
    path = tmp_path / "a-file"
    path.write_text("x")
    done = demo(tmp_path / "home", "--keep", path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert path.read_text() == "x"


def test_demo_keep_builds_in_a_new_or_empty_folder(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh" / "library"
    done = demo(tmp_path / "home", "--keep", fresh)
    assert done.returncode == 0, done.stderr
    with Library.open(fresh) as library:
        assert "claude-desktop-chat" in library.agent_ids()
