"""What an install leaves around a hooks file besides the file: the folders it had to make, and
the manifest of a plugin folder of bourdon's own (goose finds hooks only in a plugin,
``~/.agents/plugins/bourdon/`` with its ``plugin.json`` [src block/goose:
documentation/docs/guides/context-engineering/plugins.md]). Uninstall takes both away with the
file, and nothing the user had.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from bourdon.ingest.hookfiles import Target, hooks_dir
from bourdon.store.durable import atomic_write


def missing_dirs(path: Path) -> list[Path]:
    """The folders above ``path`` that do not exist yet, deepest first."""
    return [p for p in path.parents if not p.exists()]


def manifest_path(spec: Target, path: Path) -> Path | None:
    """Where the plugin manifest of ``spec`` goes: the plugin folder, above ``hooks/``."""
    return path.parent.parent / Path(spec.manifest).name if spec.manifest else None


def add_manifest(spec: Target, path: Path) -> Path | None:
    """Write the plugin manifest beside the hooks when it is missing; the file written."""
    target = manifest_path(spec, path)
    if target is None or target.exists():
        return None
    atomic_write(target, (hooks_dir() / spec.manifest).read_bytes())
    return target


def _is_ours(spec: Target, manifest: Path) -> bool:
    """The manifest is the one bourdon ships, unchanged by the user."""
    shipped = (hooks_dir() / spec.manifest).read_bytes()
    return manifest.is_file() and manifest.read_bytes() == shipped


def take_away(spec: Target, path: Path, dirs: list[str]) -> None:
    """After the hooks file went: bourdon's own manifest (unchanged), then the folders install
    made, deepest first, each only when empty."""
    target = manifest_path(spec, path)
    if target is not None and _is_ours(spec, target):
        target.unlink()
    for folder in sorted(dirs, key=len, reverse=True):
        with contextlib.suppress(OSError):
            Path(folder).rmdir()
