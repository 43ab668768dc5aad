"""Files shipped with bourdon: the manifest schema and the sample library.

An installed wheel carries them inside the package (``bourdon/schemas``,
``bourdon/sample_library``); a source checkout keeps them at the top of the repository.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # bourdon/, two levels above formats/resources.py


def _find(inside_package: str, in_checkout: str) -> Path:
    packaged = _PACKAGE / inside_package
    if packaged.exists():
        return packaged
    return _PACKAGE.parent / in_checkout


def schema_path() -> Path:
    """The JSON Schema of the L5 manifest."""
    return _find("schemas/l5.schema.json", "schemas/l5.schema.json")


def sample_library_path() -> Path:
    """The bundled sample library the demo and docs use (never written to)."""
    return _find("sample_library", "library")
