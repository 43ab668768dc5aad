"""The house of DESIGN section 2 holds: layers that only point down, pure readers, one module that
runs processes, configuration read at the edges, no cycles, no oversized modules.

The contracts are pyproject.toml's ``[tool.importlinter]``; the rules import-linter cannot see
are in tests/support/architecture.py. tests/test_layering.py shows that each of them fails on
a planted violation.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from tests.support.architecture import (
    MAX_LINES,
    PACKAGE,
    READER_SCRATCH_COPY,
    LintResult,
    children,
    contract,
    importlinter_config,
    layer_names,
    lint_imports,
    oversized,
    package_cycles,
    python_files,
    rule_violations,
    unlayered,
)


def test_every_top_level_module_and_package_belongs_to_a_layer() -> None:
    assert unlayered(PACKAGE) == []


def test_every_layer_names_something_that_exists() -> None:
    named = {name for layer in layer_names() for name in layer}
    assert named - children(PACKAGE) == set()


def test_every_agent_reader_is_independent_of_the_others() -> None:
    """A module of readers/ is a shared helper (base and what it stands on, common/) or an
    agent's reader, which joins the independence contract and the agents' layer of the
    readers-inside contract."""
    agents = children(PACKAGE / "readers") - {"base", "common", "listing", "paths"}
    independent = {
        m.removeprefix("bourdon.readers.") for m in contract("readers-independent")["modules"]
    }
    assert independent == agents
    assert set(layer_names("readers-inside")[0]) == agents


@pytest.fixture(scope="module")
def lint() -> LintResult:
    return lint_imports()


def test_lint_imports_keeps_every_contract(lint: LintResult) -> None:
    assert lint.returncode == 0, lint.output
    assert all(lint.kept.values()), lint.output


def test_lint_imports_checks_every_contract_of_pyproject(lint: LintResult) -> None:
    contracts = [c["name"] for c in importlinter_config()["contracts"]]
    assert sorted(lint.kept) == sorted(contracts), lint.output


@pytest.fixture(scope="module")
def violations() -> list[str]:
    return rule_violations(PACKAGE)


def test_only_the_git_module_starts_processes(violations: list[str]) -> None:
    assert [v for v in violations if "process" in v] == []


def test_readers_never_write_nor_touch_the_network(violations: list[str]) -> None:
    assert [v for v in violations if "readers never" in v] == []


def test_only_cli_and_serve_read_the_environment(violations: list[str]) -> None:
    assert [v for v in violations if "environment" in v] == []


@pytest.mark.parametrize(("module", "function"), sorted(READER_SCRATCH_COPY))
def test_each_reader_write_exception_names_a_function_that_exists(
    module: str, function: str
) -> None:
    """An exception outliving its code would let a new function of that name write: prune it."""
    defined = {
        node.name
        for rel, path in python_files(PACKAGE)
        if rel.removesuffix(".py") == module or rel.startswith(module + "/")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef)
    }
    assert function in defined


def test_every_rule_violation_is_one_of_the_above(violations: list[str]) -> None:
    assert violations == []


def test_no_import_cycle_between_packages() -> None:
    """Among the subpackages of each package (and, at the top, the value modules beside them)
    no chain of imports leads back to where it started."""
    assert package_cycles() == []


def test_no_module_is_over_the_size_limit_without_a_reason_in_its_docstring() -> None:
    """A module over MAX_LINES (400) lines says why in a docstring line beginning ``Size:``.
    Red until the splits of the big modules land."""
    assert MAX_LINES == 400
    assert oversized(PACKAGE) == []


# -- import cost ------------------------------------------------------------------------------


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
