"""Configuration the server factory reads: peers and their tokens from the environment.

Kept apart from ``server`` so the CLI can use it without importing the MCP SDK.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from bourdon.errors import InputError
from bourdon.federation.backoff import Backoff, PeerBackoff
from bourdon.federation.client import Federation
from bourdon.federation.peers import Peer, PeerList

SHARED_TOKEN_ENV = "BOURDON_PEER_TOKEN"
PROMPT_VISIBILITY_ENV = "BOURDON_PROMPT_VISIBILITY"

if TYPE_CHECKING:
    from bourdon.readers.base import ReaderContext


def bourdon_home() -> Path:
    """``$BOURDON_HOME``, else ``~/.bourdon``: members, peers and the audit log."""
    return Path(os.environ.get("BOURDON_HOME") or "~/.bourdon").expanduser()


def build_federation(
    home: Path, extra: list[Peer], *, peers_file: bool = True, backoff: Backoff | None = None
) -> Federation | None:
    """The peers of ``peers.yaml`` (unless ``peers_file`` is false) and of ``--peer``, with
    their tokens from the environment; a failed peer is skipped as ``backoff`` says
    (default: 1 s, doubled after each failure in a row, at most 60 s)."""
    listed = PeerList(home).peers() if peers_file else []
    by_name = {p.name: p for p in [*listed, *extra]}
    if not by_name:
        return None
    tokens = {}
    for peer in by_name.values():
        token = peer_token(peer)
        if token:
            tokens[peer.name] = token
    return Federation(list(by_name.values()), tokens, backoff=PeerBackoff(backoff or Backoff()))


def peer_token(peer: Peer) -> str | None:
    """The token presented to ``peer``: from its ``token_env``; for a peer that names none,
    ``$BOURDON_PEER_TOKEN_<NAME>``, else ``$BOURDON_PEER_TOKEN``, the reference's one
    variable, so a setup made for the reference Bourdon keeps its token."""
    if peer.token_env:
        return os.environ.get(peer.token_env) or None
    return os.environ.get(default_token_env(peer.name)) or os.environ.get(SHARED_TOKEN_ENV) or None


def default_token_env(name: str) -> str:
    """Where the token for a peer named on the command line is looked up."""
    return "BOURDON_PEER_TOKEN_" + "".join(c if c.isalnum() else "_" for c in name.upper())


def machine_name() -> str:
    """How this machine is named in rows' ``source`` and in sync commits.

    ``$BOURDON_MACHINE``, else the host name: two libraries on one host (or a host renamed)
    can still tell their rows apart.
    """
    return os.environ.get("BOURDON_MACHINE") or socket.gethostname()


def reader_context(store: Path | None = None) -> ReaderContext:
    """Where readers look: this user's home and environment, this machine."""
    from bourdon.readers.base import ReaderContext

    env = dict(os.environ)
    return ReaderContext(
        home=Path.home(),
        env=env,
        machine=machine_name(),
        store=store,
        prompt_visibility=prompt_visibility(),
    )


def prompt_visibility() -> str:
    """``$BOURDON_PROMPT_VISIBILITY``: the visibility readers give verbatim prompt text and
    instruction-file notes, ``team`` (the default: local agents see each other's sessions) or
    ``private`` (they never leave this machine)."""
    value = (os.environ.get(PROMPT_VISIBILITY_ENV) or "team").strip().lower()
    if value not in ("team", "private"):
        raise InputError(
            f"{PROMPT_VISIBILITY_ENV}={value!r} is not 'team' or 'private'; "
            "'team' (the default) shares prompts with members and remotes; 'private' keeps "
            "them home"
        )
    return value
