"""The architecture checks, as functions of a package root, so that the real tree and a planted
copy are judged by the same code.

Two kinds of check:

- the import-linter contracts of ``pyproject.toml`` (``[tool.importlinter]``), run by the
  venv's ``lint-imports`` (:func:`lint_imports`); the contracts live only there;
- the rules import-linter cannot see, read from the syntax tree (:func:`rule_violations`):
  who starts processes, who reads the environment, and that readers write nothing.

Every module list is derived from the file tree; the only names written here are the packages
and the few exceptions, each with its reason.
"""

from __future__ import annotations

import ast
import fnmatch
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"
PACKAGE = ROOT / "bourdon"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

# -- the contracts, as pyproject.toml states them ---------------------------------------------


def importlinter_config() -> dict[str, Any]:
    with PYPROJECT.open("rb") as handle:
        config: dict[str, Any] = tomllib.load(handle)["tool"]["importlinter"]
    return config


def contract(contract_id: str) -> dict[str, Any]:
    (found,) = [c for c in importlinter_config()["contracts"] if c["id"] == contract_id]
    return found


def layer_names(contract_id: str = "layers") -> list[list[str]]:
    """The layers of a layers contract, top first, each as the list of its members."""
    return [re.split(r"\s*[|:]\s*", layer.strip()) for layer in contract(contract_id)["layers"]]


def children(package: Path) -> set[str]:
    """The modules and subpackages directly inside ``package``, by name."""
    found = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    found |= {p.parent.name for p in package.glob("*/__init__.py")}
    return found


def unlayered(package_root: Path) -> list[str]:
    """Top-level modules and packages of ``package_root`` that no layer of the contract names."""
    named = {name for layer in layer_names() for name in layer}
    return sorted(children(package_root) - named)


# -- lint-imports ----------------------------------------------------------------------------


@dataclass(frozen=True)
class LintResult:
    returncode: int
    output: str
    kept: dict[str, bool]  # contract name -> kept

    def broken(self) -> list[str]:
        return sorted(name for name, kept in self.kept.items() if not kept)


def lint_imports(source_root: Path = ROOT) -> LintResult:
    """Run the venv's ``lint-imports`` with pyproject.toml's contracts on the ``bourdon`` package
    found in ``source_root`` (the checkout, or a folder holding a planted copy)."""
    env = {**os.environ, "PYTHONPATH": str(source_root)}
    proc = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(PYPROJECT)],
        cwd=source_root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    output = proc.stdout + proc.stderr
    # Each contract's verdict is its name followed by KEPT or BROKEN; long names are wrapped.
    flat = " ".join(output.split())
    kept = {}
    for c in importlinter_config()["contracts"]:
        name = " ".join(c["name"].split())
        match = re.search(re.escape(name) + r" (KEPT|BROKEN)", flat)
        if match:
            kept[c["name"]] = match.group(1) == "KEPT"
    return LintResult(proc.returncode, output, kept)


# -- the rules import-linter cannot see -------------------------------------------------------

# The one module that runs processes: git, wrapped with a scrubbed environment.
GIT_MODULE = ("store/gitrepo.py", "store/git*.py", "store/git*/*.py")
# bourdon.testing starts real servers and `git daemon` for tests and plugin authors, and hands
# them a pared-down environment; it is never imported by the product.
TEST_HELPERS = ("testing/*.py", "testing/**/*.py")
# Configuration and environment variables are read at the composition roots only: the CLI and
# the server factory. The git module copies the environment to hand it to git with GIT_*
# removed; it reads no setting from it.
READS_ENVIRONMENT = ("cli/*.py", "cli/**/*.py", "serve/*.py", "serve/**/*.py", *GIT_MODULE)
READERS = ("readers/*.py", "readers/**/*.py")

PROCESS_CALLS = (
    "subprocess.*",
    "os.system",
    "os.popen",
    "os.spawn*",
    "os.exec*",
    "os.fork",
    "os.forkpty",
    "os.posix_spawn*",
    "pty.spawn",
    "asyncio.create_subprocess_*",
    "asyncio.subprocess.*",
)
PROCESS_MODULES = ("subprocess", "asyncio.subprocess")
ENVIRONMENT = ("os.environ", "os.environb", "os.getenv", "os.getenvb", "os.putenv", "os.unsetenv")
# What a reader may not import, at the precision import-linter lacks for the standard library.
READER_NETWORK_MODULES = (
    "socket",
    "ssl",
    "http",
    "urllib.request",
    "urllib.response",
    "ftplib",
    "smtplib",
    "httpx",
    "httpx2",
    "requests",
    "urllib3",
    "mcp",
    "asyncio",
    "multiprocessing",
)
WRITING_CALLS = (
    "os.open",  # judged by its flags below
    "os.replace",
    "os.rename",
    "os.renames",
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.removedirs",
    "os.mkdir",
    "os.makedirs",
    "os.truncate",
    "os.link",
    "os.symlink",
    "os.chmod",
    "os.utime",
    "shutil.copy*",
    "shutil.move",
    "shutil.rmtree",
    "shutil.make_archive",
    "shutil.unpack_archive",
    "tempfile.mk*",
    "tempfile.NamedTemporaryFile",
    "tempfile.TemporaryFile",
    "tempfile.SpooledTemporaryFile",
    "tempfile.TemporaryDirectory",
)
# Methods that write whatever object they are called on (Path's, in practice).
WRITING_METHODS = {
    "write_text",
    "write_bytes",
    "touch",
    "mkdir",
    "unlink",
    "rmdir",
    "rename",
    "symlink_to",
    "hardlink_to",
    "chmod",
}
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
# Where a reader may write: the private temporary copy of a live SQLite store that it reads when
# the store cannot be opened read-only in place (a WAL database without its -shm, a hot
# journal). The folder is created by tempfile and removed on exit; nothing beside the agent's
# store is touched. Keyed by (module under bourdon, or a package of them; function name).
READER_SCRATCH_COPY = {
    ("readers/common/sqlite", "_read_copy"),  # copies the store into its TemporaryDirectory
    ("readers/common/sqlite", "_run"),  # opens what read_sqlite chose: mode=ro URI or that copy
    ("readers/codex", "open_sqlite"),  # codex's own copy of the same recipe
    ("readers/codex", "_copy_together"),
}


def matches(rel: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(rel, p) for p in patterns)


def python_files(package_root: Path) -> Iterator[tuple[str, Path]]:
    """Every module below ``package_root``, as (path relative to it with ``/``, path)."""
    for path in sorted(package_root.rglob("*.py")):
        yield path.relative_to(package_root).as_posix(), path


class _Names(ast.NodeVisitor):
    """Resolves the names of a module to the dotted names they were imported as."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.imported: list[tuple[int, str]] = []

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imported.append((node.lineno, alias.name))
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                top = alias.name.split(".")[0]
                self.aliases[top] = top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        self.imported.append((node.lineno, node.module))
        for alias in node.names:
            self.imported.append((node.lineno, f"{node.module}.{alias.name}"))
            self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def dotted(self, node: ast.expr) -> str | None:
        """``os.path.join`` -> ``"os.path.join"``, through ``import x as y`` and ``from``."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id], *reversed(parts)])


def _is(name: str | None, patterns: tuple[str, ...]) -> bool:
    return name is not None and any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _within(module: str, patterns: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in patterns)


def _constant_strings(node: ast.AST) -> str:
    return " ".join(
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )


def _open_mode(call: ast.Call, position: int) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "mode":
            return keyword.value
    return call.args[position] if len(call.args) > position else None


def _writes(call: ast.Call, names: _Names, assigned: dict[str, ast.expr]) -> str | None:
    """Why ``call`` writes to the file system, or None."""
    func = call.func
    name = names.dotted(func)
    if name in ("builtins.open", "io.open") or (isinstance(func, ast.Name) and func.id == "open"):
        mode = _open_mode(call, 1)
    elif isinstance(func, ast.Attribute) and func.attr == "open" and name != "os.open":
        mode = _open_mode(call, 0)  # Path.open(mode)
    else:
        mode = None
        if name == "os.open":
            flags = {n.attr for n in ast.walk(call) if isinstance(n, ast.Attribute)}
            flags |= {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
            return "os.open for writing" if flags & WRITE_FLAGS else None
        if _is(name, WRITING_CALLS):
            return name
        if name == "sqlite3.connect":
            target = call.args[0] if call.args else None
            if isinstance(target, ast.Name) and target.id in assigned:
                target = assigned[target.id]
            uri = any(
                k.arg == "uri" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in call.keywords
            )
            if target is not None and uri and "mode=ro" in _constant_strings(target):
                return None
            return "sqlite3.connect without a mode=ro URI"
        if isinstance(func, ast.Attribute) and name is None:
            if func.attr in WRITING_METHODS:
                return f".{func.attr}()"
            # Path.replace(target) writes; str.replace(old, new) takes two arguments.
            if func.attr == "replace" and len(call.args) == 1 and not call.keywords:
                return ".replace(target)"
        return None
    if mode is None:
        return None  # the default mode, "r"
    if not isinstance(mode, ast.Constant) or not isinstance(mode.value, str):
        return "open with a mode that is not a literal"
    return f"open(mode={mode.value!r})" if set(mode.value) & set("wax+") else None


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    """(enclosing function name or "", node) for every node, innermost function first."""
    stack: list[tuple[str, ast.AST]] = [("", tree)]
    while stack:
        owner, node = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner = (
                child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else owner
            )
            yield inner, child
            stack.append((inner, child))


def rule_violations(package_root: Path = PACKAGE) -> list[str]:
    """What the tree under ``package_root`` does against the rules, one line each."""
    problems: list[str] = []
    for rel, path in python_files(package_root):
        module = rel.removesuffix(".py")
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names = _Names()
        names.visit(tree)
        runs_processes = matches(rel, GIT_MODULE) or matches(rel, TEST_HELPERS)
        reads_environment = matches(rel, READS_ENVIRONMENT) or matches(rel, TEST_HELPERS)
        is_reader = matches(rel, READERS)

        for lineno, imported in names.imported:
            where = f"{rel}:{lineno}"
            if not runs_processes and _within(imported, PROCESS_MODULES):
                problems.append(f"{where} imports {imported}: only the git module runs processes")
            if is_reader and _within(imported, READER_NETWORK_MODULES):
                problems.append(f"{where} imports {imported}: readers never touch the network")
            if not reads_environment and _is(imported, ENVIRONMENT):
                problems.append(
                    f"{where} imports {imported}: only cli and serve read the environment"
                )

        assigned: dict[str, dict[str, ast.expr]] = {}
        for owner, node in _functions(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    assigned.setdefault(owner, {})[target.id] = node.value
        for owner, node in _functions(tree):
            where = f"{rel}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Attribute | ast.Name) and not reads_environment:
                name = names.dotted(node)
                if _is(name, ENVIRONMENT):
                    problems.append(
                        f"{where} reads {name}: only cli and serve read the environment"
                    )
            if not isinstance(node, ast.Call):
                continue
            name = names.dotted(node.func)
            if not runs_processes and _is(name, PROCESS_CALLS):
                problems.append(f"{where} calls {name}: only the git module starts processes")
            if is_reader and not any(
                (module == scratch or module.startswith(scratch + "/")) and owner == function
                for scratch, function in READER_SCRATCH_COPY
            ):
                why = _writes(node, names, assigned.get(owner, {}))
                if why:
                    problems.append(f"{where} writes ({why}): readers never write")
    return sorted(set(problems))


# -- module size ------------------------------------------------------------------------------

MAX_LINES = 400


def oversized(package_root: Path = PACKAGE) -> list[str]:
    """Modules over MAX_LINES lines whose docstring gives no ``Size:`` line with a reason."""
    found = []
    for rel, path in python_files(package_root):
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines <= MAX_LINES:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        reasons = [line for line in doc.splitlines() if re.match(r"\s*Size:\s*\S", line)]
        if not reasons:
            found.append(f"{rel}: {lines} lines")
    return found


# -- cycles between packages ------------------------------------------------------------------


def _cycle(nodes: list[str], edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in nodes:
        if node not in state and (found := visit(node)):
            return found
    return None


def _cycles_here() -> list[str]:
    import grimp  # import-linter's own graph builder

    graph = grimp.build_graph("bourdon", cache_dir=None)

    def packages(package: str) -> Iterator[str]:
        yield package
        for child in sorted(graph.find_children(package)):
            if graph.find_children(child):
                yield from packages(child)

    cycles = []
    for package in packages("bourdon"):
        # The subpackages of each package; at the top, the value modules beside them too.
        siblings = sorted(
            c
            for c in graph.find_children(package)
            if graph.find_children(c) or package == "bourdon"
        )
        edges = {
            a: {
                b
                for b in siblings
                if b != a and graph.direct_import_exists(importer=a, imported=b, as_packages=True)
            }
            for a in siblings
        }
        if found := _cycle(siblings, edges):
            cycles.append(" -> ".join(found))
    return cycles


def package_cycles(source_root: Path = ROOT) -> list[str]:
    """Import cycles between sibling packages of the ``bourdon`` found in ``source_root``, read
    by grimp in a fresh interpreter (this one has imported the checkout's bourdon)."""
    proc = subprocess.run(
        [sys.executable, __file__, "cycles"],
        cwd=source_root,
        env={**os.environ, "PYTHONPATH": str(source_root)},
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in proc.stdout.splitlines() if line]


if __name__ == "__main__" and sys.argv[1:] == ["cycles"]:
    print("\n".join(_cycles_here()))
