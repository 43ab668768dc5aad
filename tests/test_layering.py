"""The architecture checks can fail: each case plants one violation in a copy of bourdon/ and the
check that guards against it catches it, while the unplanted copy passes.

The copy is judged by the same code as the checkout: pyproject.toml's contracts run by
``lint-imports`` on the copy, and the rules of tests/support/architecture.py on its tree.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.architecture import (
    PACKAGE,
    LintResult,
    contract,
    lint_imports,
    package_cycles,
    rule_violations,
    unlayered,
)


def copy_of_bourdon(folder: Path) -> Path:
    shutil.copytree(PACKAGE, folder / "bourdon", ignore=shutil.ignore_patterns("__pycache__"))
    return folder / "bourdon"


def append(path: Path, code: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n\n" + code.strip() + "\n")


@dataclass(frozen=True)
class Baseline:
    package: Path
    lint: LintResult


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Baseline:
    package = copy_of_bourdon(tmp_path_factory.mktemp("unplanted"))
    return Baseline(package, lint_imports(package.parent))


# -- the unplanted copy passes ----------------------------------------------------------------


def test_the_unplanted_copy_passes_the_rules(baseline: Baseline) -> None:
    assert rule_violations(baseline.package) == []
    assert unlayered(baseline.package) == []
    assert package_cycles(baseline.package.parent) == []


def test_the_unplanted_copy_keeps_the_layers_and_the_readers_purity(baseline: Baseline) -> None:
    for contract_id in ("layers", "readers-pure", "readers-inside"):
        assert baseline.lint.kept[contract(contract_id)["name"]], baseline.lint.output


def test_the_copy_is_judged_like_the_checkout(baseline: Baseline) -> None:
    assert baseline.lint.kept == lint_imports().kept


# -- each planted violation is caught ---------------------------------------------------------


@dataclass(frozen=True)
class Lint:
    """lint-imports breaks ``contract_id`` and says ``says``."""

    contract_id: str
    says: str


@dataclass(frozen=True)
class Rule:
    """The AST rules report a line containing ``says``."""

    says: str


@dataclass(frozen=True)
class Unlayered:
    name: str


@dataclass(frozen=True)
class Cycle:
    says: str


Expected = Lint | Rule | Unlayered | Cycle


@dataclass(frozen=True)
class Case:
    plant: Callable[[Path], None]
    expected: tuple[Expected, ...]


def reader_imports_the_library(pkg: Path) -> None:
    append(pkg / "readers" / "cline.py", "from bourdon.store.library import Library")


def reader_calls_os_system(pkg: Path) -> None:
    append(
        pkg / "readers" / "cline.py",
        "import os\n\n\ndef _planted() -> None:\n    os.system('true')",
    )


def reader_opens_a_file_for_writing(pkg: Path) -> None:
    append(
        pkg / "readers" / "cursor" / "__init__.py",
        "def _planted(path: Path) -> None:\n"
        "    with path.open('a', encoding='utf-8') as handle:\n"
        "        handle.write('x')",
    )


def reader_writes_a_file_with_open(pkg: Path) -> None:
    append(pkg / "readers" / "base.py", "def _planted(p: str) -> None:\n    open(p, 'w').close()")


def reader_writes_text(pkg: Path) -> None:
    append(
        pkg / "readers" / "common" / "files.py",
        "def _planted(p: Path) -> None:\n    p.write_text('x')",
    )


def reader_opens_sqlite_for_writing(pkg: Path) -> None:
    append(
        pkg / "readers" / "copilot" / "__init__.py",
        "import sqlite3\n\n\ndef _planted(p: Path) -> None:\n    sqlite3.connect(str(p))",
    )


def reader_imports_subprocess(pkg: Path) -> None:
    append(pkg / "readers" / "gemini_cli.py", "import subprocess")


def reader_imports_the_network(pkg: Path) -> None:
    append(pkg / "readers" / "gemini_cli.py", "import urllib.request")


def reader_imports_another_reader(pkg: Path) -> None:
    append(pkg / "readers" / "cline.py", "from bourdon.readers import cursor")


def low_layer_imports_a_surface(pkg: Path) -> None:
    append(pkg / "formats" / "yamlio.py", "import bourdon.serve.server")


def two_packages_import_each_other(pkg: Path) -> None:
    # store already imports merge; merge importing store closes the loop.
    append(pkg / "merge" / "twoway.py", "from bourdon.store import durable")


def a_module_outside_git_starts_a_process(pkg: Path) -> None:
    append(
        pkg / "federation" / "client.py",
        "import asyncio\n\n\nasync def _planted() -> None:\n"
        "    await asyncio.create_subprocess_exec('true')",
    )


def a_module_outside_cli_and_serve_reads_the_environment(pkg: Path) -> None:
    append(pkg / "query" / "index.py", "import os\n\n_PLANTED = os.environ.get('BOURDON_PLANTED')")


def a_module_outside_cli_and_serve_calls_getenv(pkg: Path) -> None:
    append(pkg / "store" / "library.py", "from os import getenv\n\n_PLANTED = getenv('X')")


def a_command_group_imports_another(pkg: Path) -> None:
    append(pkg / "cli" / "sync.py", "from bourdon.cli import peers")


def a_top_level_package_no_layer_names(pkg: Path) -> None:
    (pkg / "plugins").mkdir()
    (pkg / "plugins" / "__init__.py").write_text('"""Planted."""\n', encoding="utf-8")


def a_new_reader_no_contract_names(pkg: Path) -> None:
    (pkg / "readers" / "zed_agent.py").write_text('"""Planted."""\n', encoding="utf-8")


CASES = {
    "a reader imports bourdon.store.library.Library": Case(
        reader_imports_the_library,
        (Lint("readers-pure", "bourdon.readers is not allowed to import bourdon.store"),),
    ),
    "a reader calls os.system": Case(reader_calls_os_system, (Rule("calls os.system"),)),
    "a reader opens a file for appending": Case(
        reader_opens_a_file_for_writing, (Rule("readers/cursor/__init__.py"), Rule("open(mode='a')"))
    ),
    "a reader opens a file with open(p, 'w')": Case(
        reader_writes_a_file_with_open, (Rule("open(mode='w')"),)
    ),
    "a reader calls Path.write_text": Case(reader_writes_text, (Rule(".write_text()"),)),
    "a reader opens SQLite read-write": Case(
        reader_opens_sqlite_for_writing, (Rule("sqlite3.connect without a mode=ro URI"),)
    ),
    "a reader imports subprocess": Case(
        reader_imports_subprocess,
        (
            Lint("readers-pure", "bourdon.readers is not allowed to import subprocess"),
            Rule("readers/gemini_cli.py"),
            Rule("imports subprocess"),
        ),
    ),
    "a reader imports urllib.request": Case(
        reader_imports_the_network, (Rule("imports urllib.request: readers never touch"),)
    ),
    "a reader imports another agent's reader": Case(
        reader_imports_another_reader,
        (
            Lint(
                "readers-independent",
                "bourdon.readers.cline is not allowed to import bourdon.readers.cursor",
            ),
        ),
    ),
    "one command group imports another": Case(
        a_command_group_imports_another,
        (Lint("cli-inside", "bourdon.cli.sync is not allowed to import bourdon.cli.peers"),),
    ),
    "bourdon.formats imports bourdon.serve": Case(
        low_layer_imports_a_surface,
        (Lint("layers", "bourdon.formats is not allowed to import bourdon.serve"),),
    ),
    "bourdon.merge and bourdon.store import each other": Case(
        two_packages_import_each_other,
        (
            Lint("layers", "bourdon.merge is not allowed to import bourdon.store"),
            Cycle("bourdon.store -> bourdon.merge -> bourdon.store"),
        ),
    ),
    "bourdon.federation starts a process with asyncio": Case(
        a_module_outside_git_starts_a_process,
        (Rule("calls asyncio.create_subprocess_exec: only the git module"),),
    ),
    "bourdon.query reads os.environ": Case(
        a_module_outside_cli_and_serve_reads_the_environment,
        (Rule("query/index.py"), Rule("reads os.environ")),
    ),
    "bourdon.store calls getenv": Case(
        a_module_outside_cli_and_serve_calls_getenv,
        (Rule("store/library.py"), Rule("os.getenv")),
    ),
    "a top-level package that no layer names": Case(
        a_top_level_package_no_layer_names,
        (Unlayered("plugins"), Lint("layers", "bourdon.plugins")),
    ),
    "a reader module that no contract names": Case(
        a_new_reader_no_contract_names, (Lint("readers-inside", "bourdon.readers.zed_agent"),)
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_planted_violation_is_caught(case: str, baseline: Baseline, tmp_path: Path) -> None:
    package = copy_of_bourdon(tmp_path)
    CASES[case].plant(package)
    expected = CASES[case].expected
    rules = rule_violations(package) if any(isinstance(e, Rule) for e in expected) else []
    lint = lint_imports(tmp_path) if any(isinstance(e, Lint) for e in expected) else None
    for e in expected:
        if isinstance(e, Lint):
            assert lint is not None
            assert lint.returncode != 0
            assert not lint.kept[contract(e.contract_id)["name"]], lint.output
            assert e.says in lint.output
            assert e.says not in baseline.lint.output
        elif isinstance(e, Rule):
            assert any(e.says in line for line in rules), rules
        elif isinstance(e, Unlayered):
            assert unlayered(package) == [e.name]
        else:
            assert e.says in package_cycles(tmp_path)
