"""The public API is ``bourdon.__all__``: every name in it is a deliberate promise, and nothing
else public leaks out of ``import bourdon``."""

from __future__ import annotations
import __future__

import subprocess
import sys
import types

import bourdon

PUBLIC = [
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


def test_the_public_names_are_exactly_the_promised_ones() -> None:
    assert bourdon.__all__ == PUBLIC


def test_every_public_name_resolves() -> None:
    from bourdon.errors import BourdonError
    from bourdon.store.library import Library

    for name in PUBLIC:
        assert getattr(bourdon, name) is not None, name
    assert bourdon.Library is Library
    assert issubclass(bourdon.GitError, BourdonError)
    assert isinstance(bourdon.__version__, str)


def test_library_is_imported_on_first_use_only() -> None:
    probe = (
        "import sys, bourdon\n"
        "before = 'bourdon.store.library' in sys.modules\n"
        "bourdon.Library\n"
        "print(before, 'bourdon.store.library' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "True"]


def test_nothing_public_is_exported_outside_all() -> None:
    """Other public attributes are submodules of bourdon, or ``annotations``, the compiler
    directive ``from __future__ import annotations`` leaves behind."""
    extra = []
    for name in dir(bourdon):
        value = getattr(bourdon, name)
        if name.startswith("_") or name in PUBLIC:
            continue
        if isinstance(value, types.ModuleType) and value.__name__ == f"bourdon.{name}":
            continue
        if isinstance(value, __future__._Feature):
            continue
        extra.append(name)
    assert extra == []


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        bourdon.Nope  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "Nope" in str(exc)
    else:
        raise AssertionError("bourdon.Nope resolved")
