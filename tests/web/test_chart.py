"""The charts: SVG that parses, numbers in <desc> that equal what was planted, text escaped,
and through a real ``bourdon ui``, private sessions counted only for the operator at private."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import NamedTuple

import httpx2

from bourdon.serve.web.agentrows import rows_over_time, sessions_per_week
from bourdon.serve.web.chart import Series, sparkline, svg
from tests.web import agentlib

SVG = "{http://www.w3.org/2000/svg}"
served, operator, member = agentlib.served, agentlib.operator, agentlib.member


def parsed(markup: str) -> ET.Element:
    return ET.fromstring(str(markup))


def test_a_bar_chart_parses_and_states_every_number() -> None:
    points = (("2026-11-02", 3), ("2026-11-09", 0), ("2026-11-16", 1))
    root = parsed(svg(Series("w", "Sessions per week", ("session", "sessions"), points)))
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == "w-title w-desc"
    assert root.findtext(f"{SVG}title") == "Sessions per week"
    assert root.findtext(f"{SVG}desc") == (
        "Sessions per week: 2026-11-02: 3 sessions; 2026-11-09: 0 sessions; 2026-11-16: 1 session."
    )
    heights = [float(r.get("height", "")) for r in root.iter(f"{SVG}rect")]
    assert len(heights) == 3
    assert heights[0] > heights[2] > heights[1] == 0


def test_a_line_chart_has_one_point_per_value_and_its_note() -> None:
    points = (("2026-11-02", 5), ("2026-11-09", 7))
    series = Series("r", "Rows over time", ("row", "rows"), points, "line", "Dated rows only.")
    root = parsed(svg(series))
    line = root.find(f"{SVG}polyline")
    assert line is not None
    assert len(line.get("points", "").split()) == 2
    assert root.findtext(f"{SVG}desc", "").endswith("2026-11-09: 7 rows. Dated rows only.")


def test_text_in_a_chart_is_escaped() -> None:
    hostile = '<script>alert("x")</script>&'
    markup = svg(Series("e", hostile, ("row", "rows"), ((hostile, 2),)))
    assert "<script>" not in markup
    root = parsed(markup)
    assert root.findtext(f"{SVG}title") == hostile
    assert hostile in root.findtext(f"{SVG}desc", "")


def test_an_empty_chart_says_there_is_nothing() -> None:
    root = parsed(svg(Series("n", "Sessions per week", ("session", "sessions"), ())))
    assert root.findtext(f"{SVG}desc") == "Sessions per week: no sessions."


def test_a_sparkline_names_its_numbers() -> None:
    root = parsed(sparkline(Series("s", "Sessions", ("session", "sessions"), (("a", 1), ("b", 4)))))
    assert root.findtext(f"{SVG}title") == "Sessions: a: 1 session; b: 4 sessions."


# -- on the agent page ----------------------------------------------------------------------


def charts(client: httpx2.Client, url: str) -> dict[str, str]:
    """Each inline chart's <desc>, by its id, parsed out of the page as XML."""
    page = client.get(url)
    assert page.status_code == 200
    found = {}
    for markup in re.findall(r"<svg .*?</svg>", page.text, re.S):
        root = parsed(markup)
        desc = root.find(f"{SVG}desc")
        if desc is not None:
            found[desc.get("id", "")] = desc.text or ""
    return found


def test_sessions_per_week_count_the_visible_sessions(
    operator: httpx2.Client, member: httpx2.Client
) -> None:
    team = "Sessions per week: 2026-11-02: 3 sessions; 2026-11-09: 0 sessions; "
    team += "2026-11-16: 1 session."
    assert charts(operator, "/ui/agents/atlas")["sessions-week-desc"] == team
    assert charts(member, "/ui/agents/atlas?level=private")["sessions-week-desc"] == team
    private = charts(operator, "/ui/agents/atlas?level=private")["sessions-week-desc"]
    assert private.endswith("2026-11-16: 2 sessions.")
    public = charts(operator, "/ui/agents/atlas?level=public")["sessions-week-desc"]
    assert public == "Sessions per week: 2026-11-02: 1 session."  # 11-04 is in that week


def test_rows_over_time_count_the_dated_visible_rows(operator: httpx2.Client) -> None:
    # team: week of 11-02: Zephyr (touched 11-03), 3 sessions, Ingest rewrite (started
    # 11-05); 11-09: the ops note; 11-16: beacon (touched 11-20), a session. 60 harbors,
    # api/v2 gateway and Docs pass carry no date.
    team = charts(operator, "/ui/agents/atlas")["rows-time-desc"]
    assert team.startswith(
        "Rows over time: 2026-11-02: 5 rows; 2026-11-09: 6 rows; 2026-11-16: 8 rows."
    )
    assert "62 rows without a date are not counted." in team
    # private adds the paused workstream (11-10), a session, the entity and the note.
    private = charts(operator, "/ui/agents/atlas?level=private")["rows-time-desc"]
    assert private.startswith(
        "Rows over time: 2026-11-02: 5 rows; 2026-11-09: 7 rows; 2026-11-16: 12 rows."
    )


def test_the_library_sparklines_count_visible_sessions(member: httpx2.Client) -> None:
    page = member.get("/ui/").text
    titles = re.findall(r'<svg [^>]*class="sparkline".*?<title>(.*?)</title>', page, re.S)
    assert titles == [
        "Sessions per week of atlas: 2026-11-02: 3 sessions; 2026-11-09: 0 sessions; "
        "2026-11-16: 1 session."
    ]


class Dated(NamedTuple):
    date: str


class Touched(NamedTuple):
    last_touched: str | None


def test_weeks_without_sessions_count_zero_and_the_window_ends_at_the_newest() -> None:
    sessions = [Dated("2024-03-06"), Dated("2026-11-30"), Dated("2026-12-02"), Dated("")]
    weeks = sessions_per_week(sessions)
    assert len(weeks) == 52  # a year of weeks; the 2024 session is older than that
    assert weeks[-1] == ("2026-11-30", 2)
    assert weeks[0] == ("2025-12-08", 0)
    assert sum(n for _, n in weeks) == 2
    assert sessions_per_week([Dated("")]) == []


def test_rows_older_than_the_window_count_from_its_first_week() -> None:
    rows = {"entities": [Touched("2020-01-01"), Touched("2026-11-30"), Touched(None)]}
    timeline = rows_over_time(rows)
    assert timeline.before == 1
    assert timeline.undated == 1
    assert timeline.points[0] == ("2025-12-08", 1)
    assert timeline.points[-1] == ("2026-11-30", 2)
