"""The MCP Inspector's CLI (``@modelcontextprotocol/inspector``, from npm) lists and calls the
tools over stdio as any client would, and its strict schema check finds nothing to warn about.

The Inspector is installed once, with npm, into ``.cache/inspector/<version>/`` (git-ignored),
the way the reference is installed into ``.cache/reference/``. Without node and npm, or when the
package index cannot be reached, the module is skipped with one line saying why, except under
CI (``CI=true``), where a skipped check would hide what it exists to catch, so it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import filelock
import pytest

from bourdon.testing import make_library
from bourdon.testing.serving import child_env

INSPECTOR_VERSION = "2.12.0"
PACKAGE = f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}"
REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "inspector" / INSPECTOR_VERSION
LAUNCHER = "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
INSTALLED_MARK = ".installed"


def _install(prefix: Path) -> None:
    """npm-install the Inspector into ``prefix``; a half-made one (no mark) is made again."""
    if (prefix / INSTALLED_MARK).exists():
        return
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise RuntimeError("node and npm are not installed")
    shutil.rmtree(prefix, ignore_errors=True)
    prefix.mkdir(parents=True)
    done = subprocess.run(
        [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", PACKAGE],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0 or not (prefix / LAUNCHER).exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"npm install {PACKAGE} failed: {tail[0]}")
    (prefix / INSTALLED_MARK).write_text(PACKAGE + "\n")


@pytest.fixture(scope="module")
def launcher() -> Path:
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    try:
        with filelock.FileLock(str(CACHE) + ".lock"):
            _install(CACHE)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        message = f"the MCP Inspector {INSPECTOR_VERSION} is unavailable ({exc})"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return CACHE / LAUNCHER


@pytest.fixture(scope="module")
def inspect(launcher: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``inspect(*args)``: the Inspector CLI against ``bourdon serve`` over stdio on a sample
    library; returns (exit code, stdout, stderr)."""
    tmp = tmp_path_factory.mktemp("inspector")
    home = tmp / "home"
    home.mkdir()
    make_library(tmp / "lib").close()
    server_env = {**child_env(home), "PYTHONPATH": str(REPO)}
    server = [sys.executable, "-m", "bourdon", "--library", str(tmp / "lib"), "serve"]
    passed = [arg for key, value in server_env.items() for arg in ("-e", f"{key}={value}")]
    # The Inspector's own state (its catalog) goes to the temporary home too.
    env = {**child_env(home), "MCP_CATALOG_PATH": str(tmp / "catalog.json")}

    def run(*args: str) -> tuple[int, str, str]:
        done = subprocess.run(
            ["node", str(launcher), "--cli", *args, *passed, *server, "--no-watch"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        return done.returncode, done.stdout, done.stderr

    return run


def test_tools_list_passes_the_strict_schema_check(inspect: Any) -> None:
    code, out, err = inspect("--method", "tools/list", "--strict", "--format", "json")
    assert code == 0, err
    listed = json.loads(out)
    assert "schemaFindings" not in listed, listed.get("schemaFindings")
    assert "portability" not in err and "Warning:" not in err, err
    tools = {t["name"]: t for t in listed["result"]["tools"]}
    assert len(tools) == 23
    level = tools["find_entity"]["inputSchema"]["properties"]["access_level"]
    assert level["enum"] == ["public", "team", "private"] and level["description"]


def call(inspect: Any, tool: str, *args: str) -> dict[str, Any]:
    code, out, err = inspect("--method", "tools/call", "--tool-name", tool, "--tool-arg", *args)
    assert code == 0, err
    answer: dict[str, Any] = json.loads(out)["structuredContent"]
    return answer


def test_the_inspector_calls_find_commit_and_search(inspect: Any) -> None:
    found = call(inspect, "find_entity", "name=ledgerline")
    assert found["matches"] == []  # the sample's ledgerline rows are team and private
    assert found["meta"]["hidden"][0] == {"access_level": "team", "count": 1}
    found = call(inspect, "find_entity", "name=ledgerline", "access_level=team")
    assert [m["name"] for m in found["matches"]] == ["ledgerline"]

    note = {"text": "The inspector probe note about zanzibar", "visibility": "team"}
    written = call(
        inspect,
        "commit_to_federation",
        "agent_id=inspector-probe",
        "agent_type=other",
        f"notes={json.dumps([note])}",
    )
    assert written["created"] is True and written["notes_added"] == 1
    assert written["meta"]["warnings"][0].startswith("notes[0]: no date given")

    hits = call(inspect, "search_federation", "query=zanzibar")
    assert [h["metadata"]["agent"] for h in hits["results"]] == ["inspector-probe"]
