"""The CLI's commands, one module per group; ``register`` adds them all to the parser."""

from __future__ import annotations

import argparse
from typing import Any

from bourdon.commands import demo, export, history, members, peers, reads, serve, staging, writing
from bourdon.commands import status as status_commands
from bourdon.commands import sync as sync_commands


def register(sub: Any) -> None:
    for group in (
        writing,
        history,
        staging,
        reads,
        export,
        serve,
        members,
        peers,
        sync_commands,
        status_commands,
        demo,
    ):
        group.register(sub)


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
