"""The help a person reads: ``bourdon`` alone, every command's arguments, counted nouns.

The argument check walks the whole parser, so a command added later is held to it too.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator

import pytest

from bourdon.cli import output, overview
from bourdon.cli.main import build_parser, main


def parsers(
    parser: argparse.ArgumentParser, path: str = "bourdon"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the tree with its command line: ``bourdon``, ``bourdon peers check``..."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from parsers(child, f"{path} {name}")


def arguments() -> list[tuple[str, str, str | None]]:
    """``(command line, argument, its help)`` for every argument of every command."""
    found = []
    for path, parser in parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    found.append((path, choice.dest, choice.help))
                continue
            name = "/".join(action.option_strings) or str(action.metavar or action.dest)
            found.append((path, name, action.help))
    return found


def test_the_walk_sees_every_command_and_verb() -> None:
    paths = {path for path, _ in parsers(build_parser())}
    for expected in ("bourdon history", "bourdon peers check", "bourdon completion"):
        assert expected in paths
    assert len(arguments()) > 200  # the whole tree, not just the top


def test_every_argument_of_every_command_has_help_of_two_words_or_more() -> None:
    missing = [
        f"{path} {name}: {text!r}"
        for path, name, text in arguments()
        if text != argparse.SUPPRESS and len((text or "").split()) < 2
    ]
    assert missing == []


def test_bourdon_alone_prints_the_commands_in_groups_and_exits_0() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bourdon"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    text = done.stdout
    assert text.startswith("usage: bourdon ")
    for title in ("Reading:", "Writing:", "Agents & hooks:", "Federation & peers:", "Server:"):
        assert f"\n{title}\n" in text
    reading = text.split("\nReading:\n")[1].split("\n\n")[0].splitlines()
    assert reading[0].split()[0] == "agents"
    assert "what every agent knows about a name (typos forgiven)" in text
    assert (
        text
        == subprocess.run(
            [sys.executable, "-m", "bourdon", "--help"], capture_output=True, text=True, timeout=60
        ).stdout
    )


def test_every_command_is_in_a_named_group_once() -> None:
    groups = overview.grouped(build_parser())
    assert overview.OTHER not in [title for title, _ in groups]
    listed = [name for _, rows in groups for name, _ in rows]
    assert sorted(listed) == sorted(overview.commands(build_parser()))


def test_each_command_line_of_the_overview_is_one_line_with_its_help(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 0
    text = capsys.readouterr().out
    commands = overview.commands(build_parser())
    listing = text.split("\noptions:\n")[0]
    lines = [line for line in listing.splitlines() if line.startswith("    ")]
    assert {line.split()[0] for line in lines} == set(commands)
    for line in lines:
        name = line.split()[0]
        assert line.rstrip().endswith(commands[name])


@pytest.mark.parametrize(
    ("n", "noun", "nouns", "expected"),
    [
        (0, "agent", None, "0 agents"),
        (1, "agent", None, "1 agent"),
        (2, "agent", None, "2 agents"),
        (1, "error", None, "1 error"),
        (1, "match", "matches", "1 match"),
        (3, "match", "matches", "3 matches"),
        (2500, "session", None, "2,500 sessions"),
    ],
)
def test_plural(n: int, noun: str, nouns: str | None, expected: str) -> None:
    assert output.plural(n, noun, nouns) == expected
