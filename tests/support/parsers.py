"""Walking the ``bourdon`` command's parser tree, so a command added later is covered too."""

from __future__ import annotations

import argparse
from collections.abc import Iterator


def every_parser(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser of the CLI with the words that reach it: (), ("init",), ("staging", "list")..."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from every_parser(sub, (*path, name))
