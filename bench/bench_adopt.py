"""Adoption benchmark (issue 11): ``bourdon init`` on a library the reference Bourdon wrote.

Input: 20 agents x 1,000 entities, each agent with 20 versions in ``versions/`` (the most the
reference keeps) plus its live manifest and one provenance line per write, generated directly
in the reference's layout. Measured: ``bourdon init --dry-run`` and ``bourdon init`` as the
user runs them (a child process each), and the size of the history written.
Target: adoption <= 60 s on the reference machine (2 cores). Most of it is reading 59 MB of
YAML with the strict reader (each state is named by our digest of its content); the git
history itself is one fast-import of a few seconds.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from common import write

AGENTS = 20
ENTITIES = 1000
VERSIONS = 20
START = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def manifest(agent: str, version: int, when: datetime) -> bytes:
    """One state of an agent as the reference writes it: each write touches a few summaries."""
    lines = [
        "spec_version: '0.1'",
        "agent:",
        f"  id: {agent}",
        "  type: code-assistant",
        f"last_updated: '{when.isoformat()}'",
        "recent_sessions: []",
        "known_entities:",
    ]
    for n in range(ENTITIES):
        touched = version if n % VERSIONS == version % VERSIONS else 0
        lines += [
            f"- name: {agent}-entity-{n:04d}",
            "  type: project",
            f"  summary: What {agent} knows of entity {n} (write {touched}).",
            "  visibility: team",
            "  origin: committed",
        ]
    lines += ["known_workstreams: []", "notes: []", ""]
    return "\n".join(lines).encode()


def build(root: Path) -> int:
    """Write the reference library; return the number of states it holds."""
    (root / "agents").mkdir(parents=True)
    (root / "provenance").mkdir()
    (root / ".bourdon-agents.lock").write_bytes(b"")
    states = 0
    for a in range(AGENTS):
        agent = f"agent-{a:02d}"
        folder = root / "versions" / agent
        folder.mkdir(parents=True)
        lines = []
        previous = None
        for v in range(VERSIONS + 1):
            written = START + timedelta(minutes=10 * v, seconds=a)
            raw = manifest(agent, v, written)
            new = hashlib.sha256(raw).hexdigest()
            lines.append(
                json.dumps(
                    {
                        "ts": written.isoformat().replace("+00:00", "Z"),
                        "agent_id": agent,
                        "op": "commit",
                        "caller": "operator",
                        "session_id": f"s-{v}",
                        "base_digest": previous,
                        "new_digest": new,
                    }
                )
            )
            if v < VERSIONS:  # replaced by the next write: a snapshot, stamped then
                taken = START + timedelta(minutes=10 * (v + 1), seconds=a)
                stamp = taken.strftime("%Y%m%dT%H%M%S%fZ")
                (folder / f"{stamp}-{new[:8]}.l5.yaml").write_bytes(raw)
            else:
                (root / "agents" / f"{agent}.l5.yaml").write_bytes(raw)
                (root / "agents" / f"{agent}.l5.yaml.lock").write_bytes(b"")
            previous = new
            states += 1
        (root / "provenance" / f"{agent}.jsonl").write_text("\n".join(lines) + "\n")
    return states


def run(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bourdon", *args], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> dict:
    with tempfile.TemporaryDirectory(prefix="bourdon-bench-adopt-") as tmp:
        root = Path(tmp) / "lib"
        start = time.perf_counter()
        states = build(root)
        build_s = time.perf_counter() - start
        size = sum(p.stat().st_size for p in root.rglob("*.l5.yaml"))
        dry_s = run("init", str(root), "--dry-run", "--json")
        adopt_s = run("init", str(root))
        commits = subprocess.run(
            ["git", "-C", str(root), "rev-list", "--count", "HEAD"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    results = {
        "input": {
            "agents": AGENTS,
            "entities": ENTITIES,
            "states": states,
            "megabytes": round(size / 1e6, 1),
            "build_s": round(build_s, 2),
        },
        "dry_run": {"seconds": round(dry_s, 2)},
        "adopt": {"seconds": round(adopt_s, 2), "commits": int(commits)},
    }
    print(f"  {states} states ({results['input']['megabytes']} MB) of {AGENTS} agents")
    print(f"  init --dry-run {dry_s:.2f} s, init {adopt_s:.2f} s, {commits} commits")
    return write("adopt", results, {"adopt.seconds": 60.0})


if __name__ == "__main__":
    main()
