"""Peer configuration: who this server asks, as ``peers.yaml`` and the ``--peer`` flag say.

Peers are listed in ``$BOURDON_HOME/peers.yaml``::

    peers:
      - name: desktop
        url: http://desktop.tailnet:7500/mcp
        token_env: BOURDON_PEER_DESKTOP_TOKEN   # the token this machine presents to that peer

The tokens themselves are read from the environment by the server factory
(``bourdon.serve.config``), never here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bourdon.errors import InputError, LibraryError, NotFoundError
from bourdon.formats import yamlio
from bourdon.model import check_agent_id

PEERS_FILE: Final = "peers.yaml"


@dataclass(frozen=True)
class Peer:
    name: str
    url: str
    token_env: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "url": self.url, "token_env": self.token_env}


def parse_peer(text: str) -> Peer:
    """``NAME=URL`` (the ``--peer`` flag) or a bare URL, the reference's form.

    A bare URL's peer is named after its host and port (``http://127.0.0.1:7501`` ->
    ``127-0-0-1-7501``), a valid peer name where the reference would use the URL itself.
    """
    if text.startswith(("http://", "https://")):
        name, url = peer_name_of(text), text
    else:
        name, sep, url = text.partition("=")
        if not sep:
            raise InputError(f"--peer {text!r}: give a URL (http://HOST:PORT) or NAME=URL")
    check_agent_id(name, "peer name")
    if not url.startswith(("http://", "https://")):
        raise InputError(f"peer URL {url!r} must start with http:// or https://")
    if "?" in url or "#" in url:
        raise InputError(f"peer URL {url!r} must not have a query or a fragment")
    return Peer(name, url if url.rstrip("/").endswith("/mcp") else url.rstrip("/") + "/mcp")


def peer_name_of(url: str) -> str:
    """A peer name made of a URL's host and port: lower-case letters, digits and dashes."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        raise InputError(f"peer URL {url!r} has a port that is not a number") from None
    if not parts.hostname:
        raise InputError(f"peer URL {url!r} names no host")
    words = f"{parts.hostname}-{port or ''}".lower()
    cleaned = "".join(c if c.isascii() and c.isalnum() else "-" for c in words)
    return "-".join(part for part in cleaned.split("-") if part)[:64].rstrip("-") or "peer"


class PeerList:
    """``peers.yaml`` (or a file of the same shape, ``serve --peers-config``): read, add, remove.

    A row without a ``name`` (the reference names such a peer by its URL) is named after its
    URL's host and port, as a bare ``--peer URL`` is.
    """

    def __init__(self, home: Path, path: Path | None = None) -> None:
        self.path = path or home / PEERS_FILE

    def peers(self) -> list[Peer]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        data = yamlio.load(raw, what=str(self.path))
        rows = data.get("peers") if isinstance(data, dict) else None
        if rows is None:
            return []
        if not isinstance(rows, list):
            raise LibraryError(f"{self.path}: 'peers' must be a list")
        out = []
        for row in rows:
            if not isinstance(row, dict) or not isinstance(row.get("url"), str):
                continue
            name = row.get("name")
            if name is None:
                try:
                    name = peer_name_of(row["url"])
                except InputError:
                    continue
            if isinstance(name, str):
                out.append(Peer(name, row["url"], row.get("token_env")))
        return out

    def add(self, peer: Peer) -> None:
        peers = [p for p in self.peers() if p.name != peer.name]
        self._save([*peers, peer])

    def remove(self, name: str) -> None:
        peers = self.peers()
        if not any(p.name == name for p in peers):
            raise NotFoundError(f"no peer {name!r}; see 'bourdon peers list'")
        self._save([p for p in peers if p.name != name])

    def _save(self, peers: list[Peer]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_bytes(yamlio.dump({"peers": [p.to_dict() for p in peers]}))
        tmp.replace(self.path)
