"""Row ids name a row by its own fields: a hidden row next to it never changes its id."""

from __future__ import annotations

import pytest

from bourdon.errors import InputError
from bourdon.query.rowid import parse_row_id, row_id
from bourdon.query.rows import AgentView
from bourdon.testing import manifest

SESSION = {"date": "2026-11-20", "cwd": "/w/ledgerline", "key_actions": ["split table"]}
NOTE = {"date": "2026-11-21", "text": "remember partitions"}


def ids(data: dict[str, object]) -> list[str]:
    view = AgentView.build("alpha", data)
    return [str(row_id(r)) for r in (*view.sessions, *view.notes)]


def test_a_hidden_twin_before_a_row_does_not_change_its_id() -> None:
    alone = manifest("alpha", recent_sessions=[SESSION], notes=[NOTE])
    hidden_session = {**SESSION, "visibility": "private"}
    hidden_note = {**NOTE, "visibility": "private"}
    crowded = manifest(
        "alpha",
        recent_sessions=[hidden_session, {**SESSION, "visibility": "team"}],
        notes=[hidden_note, {**NOTE, "visibility": "team"}],
    )
    visible_ids = [ids(crowded)[1], ids(crowded)[3]]
    assert visible_ids == ids(alone)


def test_an_id_round_trips_and_keeps_colons_in_the_label() -> None:
    view = AgentView.build("alpha", manifest("alpha", known_entities=[{"name": "std::vector"}]))
    rid = row_id(view.entities[0])
    assert str(rid).startswith("entity:alpha:std::vector:")
    assert parse_row_id(str(rid)) == rid


@pytest.mark.parametrize("bad", ["", "entity", "thing:alpha:x:1", "entity::x:1", "entity:a:x:"])
def test_a_malformed_id_is_a_400_naming_the_shape(bad: str) -> None:
    with pytest.raises(InputError, match=r"kind|required"):
        parse_row_id(bad)
