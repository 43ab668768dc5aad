"""The dependency direction of DESIGN section 2, enforced by reading every module's imports."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "bourdon"

# module -> what it may import from bourdon. Lower layers never import higher ones.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "resources": set(),
    "output": set(),
    "model": {"errors"},
    "yamlio": {"errors"},
    "digest": {"errors"},
    "merge": {"errors", "model"},
    "syncmerge": {"merge", "model"},
    "visibility": {"errors", "model"},
    "recognition": set(),
    "schema": {"errors", "model", "yamlio", "resources"},
    "gitrepo": {"errors"},
    "manifestcache": {"schema", "yamlio", "resources"},
    "durable": set(),
    "adopt": {"errors", "model", "yamlio", "schema", "digest"},
    "library": {
        "adopt",
        "errors",
        "model",
        "yamlio",
        "schema",
        "digest",
        "merge",
        "gitrepo",
        "manifestcache",
        "durable",
        "syncmerge",
    },
    "syncstate": {"errors", "model", "durable", "gitrepo"},
    "sync": {
        "errors",
        "model",
        "yamlio",
        "digest",
        "durable",
        "merge",
        "visibility",
        "syncmerge",
        "syncstate",
        "library",
    },
    "trust": {"errors", "model", "yamlio", "durable"},
    "audit": set(),
    "policy": {"trust"},
    "redact": set(),
    "hookinstall": {"errors"},
    "doctor": {"model"},
    "export": {"errors", "model", "merge", "library", "readers", "redact", "durable"},
}
LOW_LAYERS = set(ALLOWED)
MID_LAYERS = {"index", "trust", "federation", "export", "library", "sync"}
SURFACES = {"cli", "commands", "server", "__main__"}
# Configuration and environment variables are read only at the composition roots. gitrepo
# copies the environment to hand it to git with GIT_* removed; it reads no setting from it.
READS_ENVIRONMENT = SURFACES | {"gitrepo", "server_config"}


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        found[name or "__init__"] = path
    return found


def bourdon_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if name.startswith("bourdon."):
                out.add(name.split(".")[1])
    return out


def top(name: str) -> str:
    return name.split(".")[0]


def test_low_layers_import_only_what_their_layer_allows() -> None:
    problems = []
    for name, path in modules().items():
        if name in ALLOWED:
            extra = bourdon_imports(path) - ALLOWED[name] - {name}
            # `from bourdon import yamlio` names the package, then the module.
            extra -= {"__init__"}
            if extra:
                problems.append(f"{name} imports {sorted(extra)}")
    assert problems == []


def test_readers_import_only_model_errors_and_their_base() -> None:
    for name, path in modules().items():
        if top(name) == "readers":
            assert bourdon_imports(path) <= {"model", "errors", "readers"}, name


def test_nothing_below_the_surfaces_imports_a_surface_or_the_test_helpers() -> None:
    for name, path in modules().items():
        if top(name) in SURFACES or top(name) == "testing":
            continue
        bad = bourdon_imports(path) & (SURFACES | {"testing"})
        assert not bad, f"{name} imports {sorted(bad)}"


def test_only_composition_roots_read_the_environment() -> None:
    for name, path in modules().items():
        if top(name) in READS_ENVIRONMENT or top(name) == "testing":
            continue
        text = path.read_text(encoding="utf-8")
        assert "os.environ" not in text and "getenv" not in text, name


def test_only_gitrepo_starts_processes() -> None:
    for name, path in modules().items():
        if name == "gitrepo" or top(name) == "testing":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert "subprocess" not in imported, name


def test_importing_bourdon_does_not_import_the_mcp_sdk_or_git_machinery() -> None:
    probe = (
        "import sys, bourdon, bourdon.store.library, bourdon.cli.main;"
        "print(sorted(m for m in ('mcp', 'uvicorn', 'starlette', 'httpx2', 'watchdog')"
        " if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_bourdon_help_runs_without_importing_the_library() -> None:
    probe = (
        "import sys; from bourdon.cli import main as cli\n"
        "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('filelock' in sys.modules, 'jsonschema' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "False False"
