"""Reading a library the reference Bourdon wrote, and planning its adoption (issue 11).

The reference (bourdon 0.32.2) keeps a library without git::

    <library>/
      agents/<id>.l5.yaml                          live manifests (plus <id>.l5.yaml.lock)
      versions/<id>/<stamp>-<digest8>.l5.yaml      each manifest a write replaced, raw bytes;
                                                   stamp %Y%m%dT%H%M%S%fZ, the time it was
                                                   replaced; digest8 = sha256(raw bytes)[:8];
                                                   20 kept per agent, none for a create
      provenance/<id>.jsonl                        one JSON line per write: ts, op, caller,
                                                   session_id, transcript_ref, base_digest,
                                                   new_digest (sha256 hex of the raw bytes), ...
      staging/<caller>/<id>.l5.yaml                quarantined writes (the layout is ours too)
      .bourdon-agents.lock, *.lock

Adoption replays each agent's states as commits: its ``versions/`` snapshots in stamp order,
then the live manifest. The states of all agents are interleaved in one time order (each at
the time of the write that produced it, when a provenance line says so), so ``git log`` reads
as the story of the library. Nothing here writes: ``create.replay`` (run by ``Library.init``)
turns the plan into commits.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from bourdon.digest import digest
from bourdon.errors import BourdonError, SchemaError
from bourdon.formats import reading, schema, yamlio
from bourdon.model import AGENTS_DIR, LOCAL_DIR, ROW_SECTIONS, STAGING_DIR, SUFFIX

VERSIONS: Final = "versions"
PROVENANCE: Final = "provenance"
IMPORTED: Final = f"{LOCAL_DIR}/imported"
CALLER_UNKNOWN: Final = "reference"  # a state no provenance line explains
_SNAPSHOT = re.compile(r"(\d{8}T\d{6}\d{0,6}Z)-([0-9a-f]{8})\.l5\.yaml")
_AGENT_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass(frozen=True)
class State:
    """One state of one agent's memory in the reference library, to become one commit."""

    agent_id: str
    source: str  # the file it comes from, relative to the library
    raw: bytes
    when: float  # seconds since the epoch: the write that produced it, else the snapshot's stamp
    op: str
    caller: str
    session: str | None
    transcript: str | None
    reference_digest: str  # sha256 hex of the raw bytes, as the reference names states
    reference_version: str | None  # the reference's version id (snapshots only)
    digest: str | None  # ours, when the bytes parse
    matched: bool  # a provenance line explains it
    problem: str | None = None  # why our schema refuses it (it is adopted all the same)

    @property
    def live(self) -> bool:
        return self.reference_version is None


@dataclass
class Adoption:
    """What adopting a reference library does: the states to replay and the files to move."""

    root: Path
    states: list[State]
    staged: list[str]  # staging/<caller>/<id>.l5.yaml files, committed as they are
    moved: list[str]  # the reference's own files, moved under .bourdon/imported/
    provenance_lines: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # Anything else at the top (other features' folders): left where it is, never committed.
    untouched: list[str] = field(default_factory=list)

    def agents(self) -> list[str]:
        return sorted({s.agent_id for s in self.states})

    def to_dict(self) -> dict[str, Any]:
        per_agent = {}
        for agent in self.agents():
            mine = [s for s in self.states if s.agent_id == agent]
            per_agent[agent] = {
                "versions": len(mine),
                "snapshots": sum(1 for s in mine if not s.live),
                "provenance_lines": self.provenance_lines.get(agent, 0),
                "provenance_matched": sum(1 for s in mine if s.matched),
            }
        return {
            "library": str(self.root),
            "agents": per_agent,
            "commits": len(self.states),
            "staged": self.staged,
            "moved_to": IMPORTED,
            "moved": self.moved,
            "untouched": self.untouched,
            "warnings": self.warnings,
        }


def is_reference_library(root: Path) -> bool:
    """A folder the reference wrote: ``agents/`` with manifests, or its versions/provenance,
    and no git repository."""
    if (root / ".git").exists() or not (root / AGENTS_DIR).is_dir():
        return False
    return (
        any((root / AGENTS_DIR).glob(f"*{SUFFIX}"))
        or (root / VERSIONS).is_dir()
        or (root / PROVENANCE).is_dir()
    )


def plan(root: Path, progress: Callable[[str], None] | None = None) -> Adoption:
    """Read the reference library at ``root`` (without changing it) into an adoption plan."""
    warnings: list[str] = []
    lines_seen: dict[str, int] = {}
    per_agent: list[list[State]] = []
    agents = _agent_ids(root, warnings)
    for done, agent in enumerate(agents, start=1):
        lines = _provenance(root, agent, warnings)
        lines_seen[agent] = len(lines)
        per_agent.append(list(_states(root, agent, lines, warnings)))
        if progress and (done % 5 == 0 or done == len(agents)):
            progress(f"read {done}/{len(agents)} agents of the reference library")
    # One time order for the whole library; heapq.merge keeps each agent's own order.
    states = list(heapq.merge(*per_agent, key=lambda s: (s.when, s.agent_id)))
    for state in states:
        if state.problem:
            warnings.append(f"{state.problem} (adopted byte for byte all the same)")
    return Adoption(
        root,
        states,
        _staged(root),
        _reference_files(root),
        lines_seen,
        warnings=warnings,
        untouched=_untouched(root),
    )


_ADOPTED_TOP: Final = frozenset({AGENTS_DIR, STAGING_DIR, VERSIONS, PROVENANCE, LOCAL_DIR, ".git"})


def _untouched(root: Path) -> list[str]:
    """Top-level files and folders adoption neither commits nor moves (nothing is lost: they
    stay where the reference left them)."""
    return sorted(
        p.name + ("/" if p.is_dir() else "")
        for p in root.iterdir()
        if p.name not in _ADOPTED_TOP and not p.name.endswith(".lock")
    )


def _agent_ids(root: Path, warnings: list[str]) -> list[str]:
    found = {p.name[: -len(SUFFIX)] for p in (root / AGENTS_DIR).glob(f"*{SUFFIX}")}
    if (root / VERSIONS).is_dir():
        found |= {p.name for p in (root / VERSIONS).iterdir() if p.is_dir()}
    for odd in sorted(a for a in found if not _AGENT_ID.fullmatch(a)):
        warnings.append(
            f"{odd!r} is not an agent id bourdon serves; its files are left as they are"
        )
    return sorted(a for a in found if _AGENT_ID.fullmatch(a))


def _provenance(root: Path, agent: str, warnings: list[str]) -> list[dict[str, Any]]:
    path = root / PROVENANCE / f"{agent}.jsonl"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict) and isinstance(record.get("new_digest"), str):
            lines.append(record)
        else:
            warnings.append(f"{PROVENANCE}/{agent}.jsonl line {number} is not a write record")
    return lines


def _states(
    root: Path, agent: str, lines: list[dict[str, Any]], warnings: list[str]
) -> Iterator[State]:
    folder = root / VERSIONS / agent
    snapshots = []
    if folder.is_dir():
        for path in folder.iterdir():
            match = _SNAPSHOT.fullmatch(path.name)
            if match and path.is_file():
                snapshots.append((match.group(1), match.group(2), path))
            elif path.is_file():
                warnings.append(f"{path.relative_to(root)} is not named like a version; kept")
    previous: bytes | None = None
    checker = _Checker()
    for stamp, short, path in sorted(snapshots):
        raw = path.read_bytes()
        if raw != previous:  # the same bytes twice in a row make no new state
            taken = _stamp_time(stamp)
            yield _state(root, agent, path, raw, lines, checker, taken, f"{stamp}-{short}")
        previous = raw
    live = root / AGENTS_DIR / f"{agent}{SUFFIX}"
    if live.is_file():
        raw = live.read_bytes()
        if raw != previous:
            yield _state(root, agent, live, raw, lines, checker, None, None)


def _state(
    root: Path,
    agent: str,
    path: Path,
    raw: bytes,
    lines: list[dict[str, Any]],
    checker: _Checker,
    taken: float | None,
    version: str | None,
) -> State:
    hexdigest = hashlib.sha256(raw).hexdigest()
    line = _producer(lines, hexdigest, taken)
    when = _line_time(line) if line else None
    if when is None:
        when = taken if taken is not None else path.stat().st_mtime
    ours, problem = checker.check(raw, hexdigest, str(path.relative_to(root)))
    return State(
        agent_id=agent,
        source=str(path.relative_to(root)),
        raw=raw,
        when=when,
        op=_text(line, "op") or "import",
        caller=_text(line, "caller") or CALLER_UNKNOWN,
        session=_text(line, "session_id"),
        transcript=_text(line, "transcript_ref"),
        reference_digest=hexdigest,
        reference_version=version,
        digest=ours,
        matched=line is not None,
        problem=problem,
    )


def _producer(
    lines: list[dict[str, Any]], hexdigest: str, taken: float | None
) -> dict[str, Any] | None:
    """The write that produced these bytes: the latest line naming them before they were
    replaced (a rollback produces the same bytes again, later)."""
    found = None
    for line in lines:
        named = str(line.get("new_digest") or "").removeprefix("sha256:").lower()
        if len(named) < 8 or not hexdigest.startswith(named):
            continue
        when = _line_time(line)
        if taken is not None and when is not None and when > taken:
            continue
        found = line
    return found


class _Checker:
    """Our digest of each state of one agent, and why our schema refuses it, if it does.

    An agent's versions share most of their rows, so each distinct row is checked once and
    its verdict remembered (20 versions of 1,000 rows then cost about what two manifests cost),
    and the same bytes are read once.
    """

    def __init__(self) -> None:
        self.rows: dict[str, list[reading.ReadProblem]] = {}  # section + row JSON -> problems
        self.seen: dict[str, tuple[str | None, str | None]] = {}  # sha256 of the bytes -> answer

    def check(self, raw: bytes, hexdigest: str, what: str) -> tuple[str | None, str | None]:
        if hexdigest not in self.seen:
            self.seen[hexdigest] = self._check(raw, what)
        return self.seen[hexdigest]

    def _check(self, raw: bytes, what: str) -> tuple[str | None, str | None]:
        try:
            data = yamlio.load(raw, what=what)
        except BourdonError as exc:
            return None, exc.message
        if not isinstance(data, dict):
            return None, f"{what}: a manifest must be a mapping"
        sections = {s: v for s, v in data.items() if s in ROW_SECTIONS and isinstance(v, list)}
        problems = _top_problems({**data, **{section: [] for section in sections}}, what)
        limits = schema.row_limits()
        for section, rows in sections.items():
            if len(rows) > limits[section]:
                problems.append(
                    f"{what}: {section}: {len(rows)} rows; the limit is "
                    f"{limits[section]}, the rest are not served"
                )
            for i, row in enumerate(rows[: limits[section]]):
                key = section + json.dumps(row, sort_keys=True, ensure_ascii=False)
                if key not in self.rows:
                    self.rows[key] = _row_problems(section, row)
                problems += [replace(p, row=i).message(what) for p in self.rows[key]]
        if not problems:
            return digest(data), None
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return digest(data), f"{problems[0]}{more}"


_SKELETON: Final = {
    "spec_version": "0.1",
    "agent": {"id": "a", "type": "other"},
    "last_updated": "2026-01-01T00:00:00Z",
}


def _top_problems(data: dict[str, Any], what: str) -> list[str]:
    """Why bourdon would skip this manifest whole (what it reads, not what it writes)."""
    try:
        found = reading.read_data(data)
    except SchemaError as exc:
        return [f"{what}: {p}" for p in exc.problems]
    except BourdonError as exc:
        return [f"{what}: {exc.message}"]
    return [p.message(what) for p in found.problems]


def _row_problems(section: str, row: object) -> list[reading.ReadProblem]:
    """Why bourdon would leave this row out when serving it (the lenient reading)."""
    return list(reading.read_data({**_SKELETON, section: [row]}).problems)


def _staged(root: Path) -> list[str]:
    folder = root / STAGING_DIR
    if not folder.is_dir():
        return []
    return sorted(str(p.relative_to(root)) for p in folder.glob(f"*/*{SUFFIX}") if p.is_file())


def _reference_files(root: Path) -> list[str]:
    """The reference's own bookkeeping: versions, provenance and lock files."""
    out = [name for name in (VERSIONS, PROVENANCE) if (root / name).exists()]
    for pattern in ("*.lock", f"{AGENTS_DIR}/*.lock", f"{STAGING_DIR}/**/*.lock"):
        out += sorted(str(p.relative_to(root)) for p in root.glob(pattern) if p.is_file())
    return out


def _stamp_time(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y%m%dT%H%M%S%fZ").replace(tzinfo=UTC).timestamp()


def _line_time(line: Mapping[str, Any]) -> float | None:
    try:
        when = datetime.fromisoformat(str(line.get("ts")))
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def _text(line: Mapping[str, Any] | None, key: str) -> str | None:
    value = line.get(key) if line else None
    return str(value) if value not in (None, "") else None
