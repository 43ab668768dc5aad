"""Nothing is lost (issue 13, items 9 to 13): real git repositories in temporary folders, real
processes, nothing mocked.

Each test reproduces one loss or hazard found by attack on the landed code, as a user meets it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bourdon.store.git.process import git_env
from bourdon.store.library import Library

GIT_TIMEOUT = 120
NOBODY = 65534


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        ["git", *args], cwd=root, env=git_env(), capture_output=True, timeout=GIT_TIMEOUT
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace')}")
    return done


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
