"""bourdon: one shared, auditable memory for every AI coding agent, kept as plain files in git.

>>> from bourdon import Library
>>> library = Library.open("~/agent-library")            # doctest: +SKIP
>>> library.history("claude-code", limit=5)               # doctest: +SKIP

``import bourdon`` stays cheap: the library, and with it git, jsonschema and filelock, is imported
on first use of ``bourdon.Library``; the MCP SDK only by the server.
"""

from __future__ import annotations

import typing as _typing

from bourdon.errors import (
    AuthError,
    BourdonError,
    BusyError,
    ConflictError,
    ForbiddenError,
    GitError,
    InputError,
    LibraryError,
    ManifestError,
    NotFoundError,
    SchemaError,
    TooLargeError,
)
from bourdon.model import Manifest, Visibility

if _typing.TYPE_CHECKING:
    from bourdon.store.library import Library

__version__ = "0.1.0"

__all__ = [
    "AuthError",
    "BourdonError",
    "BusyError",
    "ConflictError",
    "ForbiddenError",
    "GitError",
    "InputError",
    "Library",
    "LibraryError",
    "Manifest",
    "ManifestError",
    "NotFoundError",
    "SchemaError",
    "TooLargeError",
    "Visibility",
    "__version__",
]


def __getattr__(name: str) -> _typing.Any:
    if name == "Library":
        from bourdon.store.library import Library

        return Library
    raise AttributeError(f"module 'bourdon' has no attribute {name!r}")
