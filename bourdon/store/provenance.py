"""Who wrote what: the ``Provenance`` of a write and the ``Bourdon-*`` trailers that record it.

Every commit bourdon makes carries its provenance as trailers in the message
(``Bourdon-Op: commit``, ``Bourdon-Caller: ...``, ``Bourdon-Digest: sha256:...``); history reads
them back (``trailers``). Commits made outside bourdon carry none.
"""

from __future__ import annotations

import dataclasses
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

OPERATOR: Final = "operator"

TRAILERS: Final = (
    "Op",
    "Agent",
    "Caller",
    "Session",
    "Transcript",
    "Digest",
    "Stager",
    "Restores",
    "Remote",
    "Theirs",
    "Ours-Digest",
    "Theirs-Digest",
    "Machine",
    "Reference-Digest",
    "Reference-Version",
    "Lowered",
    "Conflict",
)
# Trailers that may be given more than once: their value is one line per occurrence.
REPEATED: Final = ("Lowered", "Conflict")


@dataclass(frozen=True)
class Provenance:
    """Who asks for a write, recorded in the commit's trailers."""

    caller: str = OPERATOR
    session: str | None = None
    transcript: str | None = None
    machine: str = ""  # empty: the machine of the library that records the write

    def source(self) -> dict[str, str]:
        """The ``source`` stamped on the rows this caller commits."""
        return {"kind": "commit", "name": self.caller, "machine": self.machine}


def writer(provenance: Provenance | None, machine: str, caller: str = OPERATOR) -> Provenance:
    """The writer, named on this library's ``machine`` unless it names its own."""
    who = provenance or Provenance(caller=caller)
    return who if who.machine else dataclasses.replace(who, machine=machine)


def message(
    op: str,
    agent_id: str,
    subject: str,
    who: Provenance,
    new_digest: str | None,
    extra: Mapping[str, str] | None = None,
) -> str:
    """A commit message: ``subject``, a blank line, then one ``Bourdon-*`` trailer per value."""
    values = {
        "Op": op,
        "Agent": agent_id,
        "Caller": who.caller,
        "Session": who.session,
        "Transcript": who.transcript,
        "Digest": new_digest,
        **(extra or {}),
    }
    lines = [
        f"Bourdon-{k}: {_one_line(part)}"
        for k, v in values.items()
        if v
        for part in (str(v).split("\n") if k in REPEATED else [v])
        if part.strip()
    ]
    return f"{subject}\n\n" + "\n".join(lines) + "\n"


def trailers(text: str) -> dict[str, str]:
    """The ``Bourdon-*`` trailers of a commit message, without the prefix."""
    found = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key.startswith("Bourdon-") and key[8:] in TRAILERS:
            found[key[8:]] = value.strip()
    return found


def repeated(text: str, key: str) -> list[str]:
    """Every value of a trailer given more than once (``REPEATED``), in order."""
    prefix = f"Bourdon-{key}: "
    return [line[len(prefix) :].strip() for line in text.splitlines() if line.startswith(prefix)]


def identity(name: str) -> str:
    """A git author or committer, ``name <name@host>``, safe in a commit header."""
    clean = re.sub(r"[<>\n\r]", "", name) or "bourdon"
    host = re.sub(r"[^A-Za-z0-9.-]", "", socket.gethostname()) or "localhost"
    return f"{clean} <{clean}@{host}>"


def _one_line(value: str) -> str:
    return " ".join(str(value).split())[:256]
