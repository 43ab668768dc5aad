"""The one error tree of bourdon.

Every failure a user can see is a ``BourdonError``. Each class carries the exit code the CLI
returns and the HTTP-like status the MCP server reports, so both surfaces map errors the same way::

    BourdonError                      exit 1   status 500
    ├── InputError                    exit 2   status 400   bad argument or request
    │   ├── ManifestError             exit 3   status 400   YAML that is not a manifest
    │   │   └── SchemaError           exit 3   status 400   fails l5.schema.json (names the path)
    │   └── TooLargeError             exit 2   status 413   over a size, depth or length cap
    ├── AuthError                     exit 8   status 401   no token, or a wrong or revoked one
    ├── ForbiddenError                exit 8   status 403   the caller may not do this
    ├── NotFoundError                 exit 4   status 404   unknown agent, version or digest
    ├── ConflictError                 exit 5   status 409   expected_digest is stale
    ├── BusyError                     exit 6   status 503   library lock not free in time
    ├── PortInUseError                exit 9   status 503   serve: the HTTP port is taken
    └── LibraryError                  exit 7   status 500   not a library, or git failed
        └── GitError                  exit 7   status 500

Messages are one line, say what is wrong and, where there is one, what to do instead.
"""

from __future__ import annotations

from typing import Any, ClassVar


class BourdonError(Exception):
    """Root of every error bourdon raises on purpose."""

    exit_code: ClassVar[int] = 1
    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal"
    retryable: ClassVar[bool] = False

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """The structured error of the wire contract: ``{"error": {...}}``."""
        body: dict[str, Any] = {
            "code": self.code,
            "status": self.status,
            "message": self.message,
            "retryable": self.retryable,
        }
        body.update({k: v for k, v in self.details.items() if v is not None})
        return {"error": body}


class InputError(BourdonError):
    """A caller sent something bourdon cannot accept."""

    exit_code = 2
    status = 400
    code = "bad_input"


class ManifestError(InputError):
    """Bytes that cannot be read as a manifest (YAML syntax, aliases, tags, encoding)."""

    exit_code = 3
    code = "bad_manifest"


class SchemaError(ManifestError):
    """A manifest that parses but breaks the schema; ``problems`` lists every path at fault."""

    code = "schema"

    def __init__(self, message: str, problems: list[str] | None = None, **details: Any) -> None:
        super().__init__(message, problems=problems, **details)
        self.problems = problems or [message]


class TooLargeError(InputError):
    """Over a cap checked while reading: bytes, nesting depth, the length of one string.

    Limits the schema states (rows per section, items per list, characters per field) are
    ``SchemaError``s: they name the field, like every other schema problem.
    """

    status = 413
    code = "too_large"


class AuthError(BourdonError):
    """The request carries no valid credentials (HTTP 401)."""

    exit_code = 8
    status = 401
    code = "unauthenticated"


class ForbiddenError(BourdonError):
    """The caller is known but may not do this (HTTP 403)."""

    exit_code = 8
    status = 403
    code = "forbidden"


class NotFoundError(BourdonError):
    """An agent, version, digest or staged write that does not exist."""

    exit_code = 4
    status = 404
    code = "not_found"


class ConflictError(BourdonError):
    """``expected_digest`` no longer matches; carries the current digest to retry with."""

    exit_code = 5
    status = 409
    code = "conflict"

    def __init__(self, message: str, current_digest: str | None, **details: Any) -> None:
        super().__init__(message, current_digest=current_digest, **details)
        self.current_digest = current_digest


class BusyError(BourdonError):
    """The library lock stayed taken for longer than the caller was willing to wait."""

    exit_code = 6
    status = 503
    code = "busy"
    retryable = True


class PortInUseError(BourdonError):
    """``bourdon serve --transport http`` cannot listen: another program holds the port."""

    exit_code = 9
    status = 503
    code = "port_in_use"


class LibraryError(BourdonError):
    """The library directory is missing, not a library, or in a state bourdon cannot fix."""

    exit_code = 7
    code = "library"


class GitError(LibraryError):
    """A git command failed; ``stderr`` holds what git said."""

    code = "git"
