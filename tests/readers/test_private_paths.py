"""One private-path rule for every reader (issue 12): the stricter of the old two wins.

The table was written by hand before the rule was unified. Each case runs through every
reader's own read of a one-session store whose working folder is the path, so a reader that
classifies paths its own way fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bourdon.readers import load_readers
from bourdon.readers.base import ReaderContext
from bourdon.readers.common.privacy import is_private_path
from tests.support.stores import single, single_forks

# (folder, private); "{home}" is the reader's home on this machine.
RULES: list[tuple[str, bool]] = [
    ("{home}/personal", True),
    ("{home}/personal/diary", True),
    ("{home}/private/notes", True),
    ("{home}/Private", True),
    ("{home}/PERSONAL/x", True),
    ("~/personal/x", True),
    ("~/private", True),
    ("/home/dana/personal/x", True),
    ("/home/dana/Private/taxes", True),
    ("/Users/dana/private", True),
    ("/Users/dana/personal/journal", True),
    ("/root/personal/x", True),
    ("/mnt/c/Users/dana/personal/x", True),
    ("C:\\Users\\dana\\Personal\\notes", True),
    ("c:\\users\\dana\\private", True),
    ("C:/Users/dana/personal/x", True),
    ("{home}/work/x", False),
    ("~/work/x", False),
    ("~/personalities", False),
    ("{home}/personalities", False),
    ("{home}/src/personal-site", False),
    ("/srv/personal-site", False),
    ("/srv/personal/x", False),
    ("/home/dana/work/personal", False),
    ("/home/personal", False),
    ("/Users/dana", False),
    ("C:\\Users\\dana\\src\\ledgerline", False),
    ("D:\\personal\\x", False),
]

READERS, _ = load_readers()
WRITERS = {**single.WRITERS, **single_forks.WRITERS}


def test_every_built_in_reader_is_in_the_table() -> None:
    assert len(READERS) == 15
    # Aider's histories and Windsurf's rules live in real project folders: their own tests
    # run the table's home-folder rows.
    assert set(READERS) - set(WRITERS) == {"aider", "cascade"}


@pytest.mark.parametrize(("folder", "private"), RULES)
def test_the_rule(folder: str, private: bool, tmp_path: Path) -> None:
    assert is_private_path(folder.format(home=tmp_path), tmp_path) is private


def test_no_folder_is_team(tmp_path: Path) -> None:
    assert is_private_path("", tmp_path) is False
    assert is_private_path(None, tmp_path) is False


@pytest.mark.parametrize("agent", sorted(WRITERS))
def test_every_reader_agrees_with_the_table(agent: str, tmp_path: Path) -> None:
    wrong = []
    reader = READERS[agent]
    for n, (folder, private) in enumerate(RULES):
        home = tmp_path / f"h{n}"
        path = folder.format(home=home)
        store = WRITERS[agent](home, path)
        result = reader.read(ReaderContext(home=home, store=store))
        sessions = result.manifest["recent_sessions"]
        assert len(sessions) == 1, (agent, path, result.stats.problems)
        expected = "private" if private else "team"
        if sessions[0]["visibility"] != expected:
            wrong.append((path, sessions[0]["visibility"]))
        projects = [e for e in result.manifest["known_entities"] if e["type"] == "project"]
        wrong += [(path, f"project {e['name']}") for e in projects if e["visibility"] != expected]
    assert wrong == []
