"""What the CLI prints for people and scripts: tables cut to the terminal, whole cells in
``--json``, counted nouns, and a JSON document for every ``--json`` even when there is nothing
to say (no peer, no remote).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bourdon.cli import output
from bourdon.cli.main import main
from bourdon.testing import make_library


@pytest.fixture(scope="module")
def sample_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(tmp_path_factory.mktemp("sample-home")))
        root = tmp_path_factory.mktemp("sample") / "library"
        make_library(root).close()
    yield root


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home of its own: no peers.yaml, no members."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BOURDON_HOME", str(tmp_path / "home" / ".bourdon"))
    monkeypatch.delenv("COLUMNS", raising=False)
    return tmp_path / "home"


def run(
    capsys: pytest.CaptureFixture[str], *args: str | Path
) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


# -- the table printer ----------------------------------------------------------------------


def printed(headers: list[str], rows: list[list[object]], columns: int | None) -> list[str]:
    buffer = io.StringIO()
    output.table(headers, rows, buffer, columns=columns)
    return buffer.getvalue().splitlines()


def test_a_table_that_fits_is_left_whole() -> None:
    lines = printed(["NAME", "WHAT"], [["ada", "short"], ["grace", "also short"]], 80)
    assert lines == ["NAME   WHAT", "ada    short", "grace  also short"]


def test_a_wide_table_is_cut_to_the_width_with_an_ellipsis() -> None:
    long = "a sentence that goes on well past the edge of any narrow terminal window"
    lines = printed(["DATE", "AGENT", "WHAT"], [["2026-11-26", "claude-code", long]], 40)
    assert all(len(line) <= 40 for line in lines)
    assert lines[1].startswith("2026-11-26  claude-code  a sentence")
    assert lines[1].endswith("…")
    assert len(lines[1]) == 40  # the room is used, not wasted


def test_the_widest_column_gives_way_first() -> None:
    wide = "x" * 60
    lines = printed(["ID", "TEXT", "MORE"], [["abc", wide, "y" * 20]], 50)
    ident, text, more = lines[1].split()
    assert (ident, more) == ("abc", "y" * 20)  # the narrower columns are untouched
    assert text == "x" * 22 + "…"  # 50 columns less 3, 20 and two gaps of two
    narrower = printed(["ID", "TEXT", "MORE"], [["abc", wide, "y" * 20]], 30)[1].split()
    assert narrower[0] == "abc" and narrower[1].endswith("…") and narrower[2].endswith("…")
    assert (len(narrower[1]), len(narrower[2])) == (12, 11)  # they share the 23 left, widest first


def test_no_width_means_no_cut() -> None:
    long = "z" * 500
    assert printed(["A", "B"], [["1", long]], None)[1] == f"1  {long}"


def test_columns_from_the_environment_cut_the_real_command(
    sample_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, whole, _ = run(capsys, "--library", sample_root, "recent", "--since", "2026-11-01")
    assert code == 0
    assert max(len(line) for line in whole.splitlines()) > 60
    assert "…" not in whole  # captured output is not a terminal: nothing is cut
    monkeypatch.setenv("COLUMNS", "60")
    code, narrow, _ = run(capsys, "--library", sample_root, "recent", "--since", "2026-11-01")
    assert code == 0
    table = narrow.split("\n\n")[0].splitlines()
    assert all(len(line) <= 60 for line in table)
    assert any(line.endswith("…") for line in table)
    # --json keeps every cell whole, whatever the width
    code, data, _ = run(
        capsys, "--library", sample_root, "recent", "--since", "2026-11-01", "--json"
    )
    actions = ["; ".join(s["key_actions"]) for s in json.loads(data)["sessions"]]
    assert any(len(a) > 60 for a in actions)
    assert not any("…" in a for a in actions)


def test_a_real_terminal_width_is_used_when_columns_is_unset(sample_root: Path) -> None:
    """Under a pseudo-terminal 50 columns wide, ``bourdon recent`` fits in 50 columns."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    parent, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 50, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    with subprocess.Popen(
        [sys.executable, "-m", "bourdon", "--library", str(sample_root), "recent",
         "--since", "2026-11-01"],
        stdout=child, stderr=subprocess.DEVNULL, env=env,
    ) as proc:  # fmt: skip
        os.close(child)
        chunks = []
        while True:
            try:
                chunk = os.read(parent, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=60) == 0
    os.close(parent)
    lines = b"".join(chunks).decode("utf-8").replace("\r", "").split("\n\n")[0].splitlines()
    assert lines[0].startswith("DATE")
    assert all(len(line) <= 50 for line in lines)
    assert any(line.endswith("…") for line in lines)


# -- counted nouns ------------------------------------------------------------------------------


def test_status_counts_in_words(sample_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--library", sample_root, "status", "--no-peers")
    assert code == 0
    assert "(s)" not in out
    assert "Staging  0 writes waiting" in out


# -- --json with nothing to report ------------------------------------------------------------


def test_peers_check_json_with_no_peer_prints_its_document(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "peers", "check", "--json")
    assert (code, json.loads(out), err) == (0, {"peers": []}, "")
    code, text, _ = run(capsys, "peers", "check")
    assert code == 0
    assert text.startswith("No peers to check.")


def test_sync_json_with_no_remote_prints_its_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "lib"
    assert run(capsys, "init", root)[0] == 0
    code, out, err = run(capsys, "--library", root, "sync", "--json")
    assert code == 2
    document: dict[str, Any] = json.loads(out)
    assert document["syncs"] == [] and document["ok"] is False
    assert document["error"]["code"] == "bad_input"
    assert "bourdon remote add NAME URL" in document["error"]["message"]
    assert err == "bourdon: no remotes: add one with 'bourdon remote add NAME URL'\n"
