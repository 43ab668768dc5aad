"""A small library with hand-chosen rows of every kind and visibility, for the agent, chart
and library page tests, and a running ``bourdon ui`` over it.

``atlas`` holds 60 undated public entities (``harbor-001`` .. ``harbor-060``) for paging, and a
few dated rows whose weeks the chart tests count by hand (2026-11-02, -09 and -16 are Mondays).
Every private row and every row of ``cobalt`` (which the member ``desk`` is not granted) holds
``CANARY``: it must never appear in a page a member or a team-level view receives.

The fixtures ``served``, ``operator`` and ``member`` start one server per test module (import
them into the module): the operator's printed link works once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest

from bourdon.formats import yamlio
from bourdon.store.library import Library
from bourdon.store.provenance import Provenance
from bourdon.testing import manifest
from tests.support.webui import UiServer

CANARY = "canary-7f3a"
HARBORS = 60


def _atlas() -> dict[str, object]:
    entities: list[dict[str, object]] = [
        {"name": f"harbor-{i:03d}", "type": "file", "visibility": "public"}
        for i in range(1, HARBORS + 1)
    ]
    entities += [
        {
            "name": "Zephyr Gateway",
            "type": "project",
            "aliases": ["zgw"],
            "summary": "Routes traffic between the ledgers",
            "tags": ["network"],
            "last_touched": "2026-11-03",
            "visibility": "team",
        },
        {
            "name": "beacon",
            "type": "library",
            "tags": ["lighthouse"],
            "last_touched": "2026-11-20",
            "visibility": "public",
        },
        {
            "name": "api/v2 gateway",
            "type": "decision",
            "visibility": "public",
        },
        {
            "name": f"{CANARY}-entity",
            "type": "person",
            "tags": [f"{CANARY}-tag"],
            "last_touched": "2026-11-18",
            "visibility": "private",
        },
    ]
    sessions = [
        {
            "date": "2026-11-02",
            "session_id": "s1",
            "project_focus": ["Zephyr Gateway"],
            "key_actions": ["sketch the gateway"],
            "tags": ["design"],
            "visibility": "team",
        },
        {
            "date": "2026-11-03",
            "session_id": "s2",
            "project_focus": ["beacon"],
            "key_actions": ["wire the beacon"],
            "visibility": "team",
        },
        {
            "date": "2026-11-04",
            "session_id": "s3",
            "project_focus": ["beacon"],
            "key_actions": ["publish the beacon"],
            "visibility": "public",
        },
        {
            "date": "2026-11-16",
            "session_id": "s4",
            "project_focus": ["Zephyr Gateway"],
            "key_actions": ["load test the gateway"],
            "visibility": "team",
        },
        {
            "date": "2026-11-17",
            "session_id": "s5",
            "project_focus": [f"{CANARY}-entity"],
            "key_actions": [f"{CANARY} session work"],
            "visibility": "private",
        },
    ]
    workstreams = [
        {
            "name": "Ingest rewrite",
            "status": "active",
            "started": "2026-11-05",
            "summary": "new importer",
            "visibility": "team",
        },
        {"name": "Docs pass", "status": "done", "visibility": "public"},
        {
            "name": f"{CANARY}-workstream",
            "status": "paused",
            "started": "2026-11-10",
            "visibility": "private",
        },
    ]
    notes = [
        {
            "date": "2026-11-09",
            "text": "Remember the ledger cutover",
            "tags": ["ops"],
            "visibility": "team",
        },
        {"date": "2026-11-17", "text": f"{CANARY} private note", "visibility": "private"},
    ]
    return manifest(
        "atlas",
        known_entities=entities,
        recent_sessions=sessions,
        known_workstreams=workstreams,
        notes=notes,
    )


def _cobalt() -> dict[str, object]:
    return manifest(
        "cobalt",
        known_entities=[{"name": f"{CANARY}-cobalt", "visibility": "public"}],
        recent_sessions=[
            {"date": "2026-11-05", "key_actions": [f"{CANARY} cobalt"], "visibility": "public"}
        ],
    )


def build(root: Path) -> None:
    library = Library.init(root)
    try:
        for data in (_atlas(), _cobalt()):
            library.import_manifest(yamlio.dump(data), provenance=Provenance(caller="fixture"))
    finally:
        library.close()


def serve(
    tmp: Path, prepare: Callable[[Path], None] | None = None
) -> Iterator[tuple[UiServer, str]]:
    """``bourdon ui`` over the planted library (``prepare(root)`` changes it first), and the
    token of ``desk`` (granted atlas)."""
    build(tmp / "lib")
    if prepare is not None:
        prepare(tmp / "lib")
    (tmp / "user").mkdir()
    server = UiServer(tmp / "lib", tmp / "user")
    token = server.add_member("desk", grants=["atlas"])
    with server:
        yield server, token


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[UiServer, str]]:
    yield from serve(tmp_path_factory.mktemp("planted"))


@pytest.fixture(scope="module")
def operator(served: tuple[UiServer, str]) -> Iterator[httpx2.Client]:
    client = served[0].operator()
    yield client
    client.close()


@pytest.fixture(scope="module")
def member(served: tuple[UiServer, str]) -> Iterator[httpx2.Client]:
    server, token = served
    client = server.member(token)
    yield client
    client.close()
