"""Keep the docs honest: they must name what the code defines, and nothing of this machine."""

from __future__ import annotations

import argparse
import inspect
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bourdon import errors
from bourdon.cli.main import build_parser
from bourdon.formats import yamlio
from bourdon.formats.schema import load_manifest, row_limits, schema
from bourdon.store.library import Library
from bourdon.store.provenance import TRAILERS
from tests.support.architecture import contract, importlinter_config
from tests.support.parsers import every_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
CLI_MD = DOCS / "cli.md"
LIBRARY_MD = DOCS / "library.md"
FORMAT_MD = DOCS / "manifest-format.md"
ARCHITECTURE_MD = DOCS / "architecture.md"
MCP_TOOLS_MD = DOCS / "mcp-tools.md"
SECURITY_MD = DOCS / "security.md"
FEDERATION_MD = DOCS / "federation.md"
ALL_DOCS = [README, *sorted(DOCS.glob("*.md"))]


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


COMMANDS = list(every_parser(build_parser()))


def names(path: tuple[str, ...]) -> str:
    return " ".join(("bourdon", *path))


def word(token: str) -> re.Pattern[str]:
    """``token`` standing alone: ``-f`` must not match inside ``--file`` or ``-foo``."""
    return re.compile(r"(?<![\w-])" + re.escape(token) + r"(?![\w-])")


def section(markdown: str, heading: str) -> str:
    """The text under a ``## heading`` up to the next heading of the same level."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    assert match, f"no '## {heading}' section"
    return match.group(1)


def code_blocks(markdown: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", markdown, re.M | re.S)


# -- docs/cli.md names every command, verb and option ------------------------------------------


def test_the_parser_has_the_commands_the_docs_are_about() -> None:
    paths = {path for path, _ in COMMANDS}
    assert ("commit",) in paths and ("staging", "promote") in paths


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS if p], ids=names)
def test_every_command_and_verb_has_a_heading_or_synopsis_in_cli_md(path: tuple[str, ...]) -> None:
    wanted = names(path)
    pattern = re.compile(rf"^(?:#+ )?`?{re.escape(wanted)}(?=[\s`]|$)", re.M)
    assert pattern.search(text(CLI_MD)), f"docs/cli.md has no heading or synopsis for '{wanted}'"


@pytest.mark.parametrize(
    ("path", "option"),
    [
        (path, option)
        for path, parser in COMMANDS
        for action in parser._actions
        for option in action.option_strings
    ],
    ids=lambda value: names(value) if isinstance(value, tuple) else value,
)
def test_every_option_of_every_command_is_in_cli_md(path: tuple[str, ...], option: str) -> None:
    assert word(option).search(text(CLI_MD)), f"'{names(path)}' option {option} is not documented"


def test_every_option_with_a_default_shows_that_default_in_cli_md() -> None:
    doc = text(CLI_MD)
    for path, parser in COMMANDS:
        for action in parser._actions:
            default = action.default
            if not action.option_strings or default in (None, False, [], argparse.SUPPRESS):
                continue  # no default to show (an empty list is "none" for a repeatable option)
            rows = [line for line in doc.splitlines() if line.startswith("|")]
            assert any(
                word(action.option_strings[0]).search(row) and f"`{default}`" in row for row in rows
            ), f"'{names(path)} {action.option_strings[0]}' default {default!r} not in a table"


def error_classes() -> list[type[errors.BourdonError]]:
    return [
        cls
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, errors.BourdonError)
    ]


@pytest.mark.parametrize("cls", error_classes(), ids=lambda cls: cls.__name__)
def test_every_error_class_is_in_the_exit_code_table_with_its_code(
    cls: type[errors.BourdonError],
) -> None:
    row = re.compile(
        rf"^\| {cls.exit_code} \|.*`{cls.__name__}`.*\| `{cls.code}` \| {cls.status} \|", re.M
    )
    assert row.search(text(CLI_MD)), (
        f"docs/cli.md's exit code table has no row '| {cls.exit_code} | `{cls.__name__}` | "
        f"`{cls.code}` | {cls.status} |'"
    )


@pytest.mark.parametrize("command", sorted({p[0] for p, _ in COMMANDS if p}))
def test_every_command_is_in_the_table_at_the_top_of_cli_md(command: str) -> None:
    table = text(CLI_MD).split("## Global options")[0]
    assert re.search(rf"^\| \[`bourdon {re.escape(command)}`\]\(#", table, re.M), command


@pytest.mark.parametrize("code", [0, 130])
def test_the_exit_codes_outside_the_error_tree_are_in_the_table(code: int) -> None:
    assert re.search(rf"^\| {code} \|", text(CLI_MD), re.M)


def test_cli_md_says_how_the_library_path_is_chosen() -> None:
    doc = text(CLI_MD)
    for needle in ("--library", "$BOURDON_LIBRARY", "~/agent-library"):
        assert needle in doc


# -- README ------------------------------------------------------------------------------------


def test_readme_quick_start_is_make_demo_then_make_test() -> None:
    quick = section(text(README), "Quick start")
    blocks = code_blocks(quick, "sh")
    assert blocks, "the quick start has no sh block"
    assert [line for line in blocks[0].splitlines() if line.strip()] == ["make demo", "make test"]
    assert "`make demo`" in quick and "`make test`" in quick


def test_readme_names_the_requirements() -> None:
    readme = text(README)
    assert "Python >= 3.11" in readme and "git" in readme


def test_the_make_targets_the_docs_name_exist() -> None:
    makefile = text(ROOT / "Makefile")
    for target in set(re.findall(r"`make (\w+)`", "".join(text(p) for p in ALL_DOCS))):
        assert re.search(rf"^{target}:", makefile, re.M), f"no make target {target}"


# -- docs/library.md ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", TRAILERS)
def test_every_trailer_is_in_library_md(name: str) -> None:
    assert word(f"Bourdon-{name}").search(text(LIBRARY_MD))


@pytest.mark.parametrize(
    "method",
    sorted(
        name
        for name, member in vars(Library).items()
        if not name.startswith("_") and (callable(member) or isinstance(member, classmethod))
    ),
)
def test_every_public_library_method_is_in_library_md(method: str) -> None:
    assert re.search(rf"`(?:Library\.)?{method}\(", text(LIBRARY_MD)), method


# -- docs/manifest-format.md -------------------------------------------------------------------


def schema_fields() -> set[str]:
    full = schema()
    found = set(full["properties"])
    for part in ("agent", "visibility_policy"):
        found |= set(full["properties"][part]["properties"])
    for definition in full["$defs"].values():
        found |= set(definition.get("properties", {}))
    return found


@pytest.mark.parametrize("field", sorted(schema_fields()))
def test_every_schema_field_is_in_manifest_format_md(field: str) -> None:
    assert f"`{field}`" in text(FORMAT_MD)


@pytest.mark.parametrize(("section_name", "limit"), sorted(row_limits().items()))
def test_row_limits_in_manifest_format_md_match_the_schema(section_name: str, limit: int) -> None:
    row = re.compile(rf"^\| `{section_name}` \|.*at most ({limit}|{limit:,})\b", re.M)
    assert row.search(text(FORMAT_MD))


def test_yaml_limits_in_manifest_format_md_match_the_reader() -> None:
    doc = text(FORMAT_MD)
    assert f"{yamlio.MAX_BYTES // 2**20} MiB ({yamlio.MAX_BYTES:,} bytes)" in doc
    assert f"at most {yamlio.MAX_DEPTH} levels" in doc
    assert f"{yamlio.MAX_STRING:,} characters" in doc


def test_the_example_manifest_is_valid_and_written_exactly_as_bourdon_writes_it() -> None:
    example = code_blocks(text(FORMAT_MD), "yaml")[0]
    manifest = load_manifest(example, what="docs/manifest-format.md example")
    assert yamlio.dump(manifest.data).decode("utf-8") == example


def test_the_commit_input_examples_commit_as_the_docs_say(tmp_path: Path) -> None:
    cli_example = code_blocks(text(CLI_MD), "yaml")[0]
    readme_examples = code_blocks(text(README), "yaml")
    with Library.init(tmp_path / "lib") as library:
        result = library.commit("example", yamlio.load(cli_example))
        assert result.created and result.totals["total"] == 4
        counts = []
        for example in readme_examples:  # rows.yaml, then more.yaml, as the README runs them
            result = library.commit("claude-code", yamlio.load(example))
            counts.append(
                (result.stats.total_added, result.stats.total_updated, result.totals["total"])
            )
        assert counts == [(3, 0, 3), (1, 1, 4)]
        again = library.commit("claude-code", yamlio.load(readme_examples[-1]))
        assert again.no_op


# -- docs/architecture.md ----------------------------------------------------------------------


def documented_layers() -> list[str]:
    """The first code block of architecture.md's 'Layers' section: one layer a line, top first."""
    doc = text(ARCHITECTURE_MD)
    section = doc[doc.index("\n## Layers\n") :]
    block = section.split("```")[1]
    return [" ".join(line.split()) for line in block.strip().splitlines()]


def test_architecture_md_draws_the_layers_of_the_contract() -> None:
    assert documented_layers() == [
        " ".join(layer.split()) for layer in contract("layers")["layers"]
    ]


@pytest.mark.parametrize("contract_id", [c["id"] for c in importlinter_config()["contracts"]])
def test_architecture_md_explains_every_contract(contract_id: str) -> None:
    assert f"`{contract_id}`" in text(ARCHITECTURE_MD)


def package_modules() -> list[str]:
    """Every module of bourdon/, as its path below bourdon/ (``store/library.py``), and every
    package, as its folder (``readers/common/``)."""
    package = ROOT / "bourdon"
    found = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if path.name == "__init__.py":
            if rel != "__init__.py":
                found.append(rel.removesuffix("__init__.py"))
        else:
            found.append(rel)
    return found


@pytest.mark.parametrize("module", package_modules())
def test_architecture_md_describes_every_module(module: str) -> None:
    assert f"`{module}`" in text(ARCHITECTURE_MD)


# -- docs/mcp-tools.md: every tool and resource the server registers ---------------------------


@dataclass(frozen=True)
class Registered:
    tools: list[Any]
    resources: list[str]


@pytest.fixture(scope="module")
def registered(tmp_path_factory: pytest.TempPathFactory) -> Registered:
    """What ``create_server`` registers, as an MCP client lists it."""
    import anyio
    from mcp import Client

    from bourdon.serve.server import create_server

    base = tmp_path_factory.mktemp("server")
    Library.init(base / "lib").close()
    server = create_server(base / "lib", watch=False, home=base / "home")

    async def listing() -> Registered:
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
            uris = [str(r.uri) for r in (await client.list_resources()).resources]
            uris += [
                r.uri_template for r in (await client.list_resource_templates()).resource_templates
            ]
        return Registered(list(tools), uris)

    return anyio.run(listing)


def py_type(schema: dict[str, Any]) -> str:
    """A JSON Schema type as the Python annotation it came from: ``int | None``, ``list[dict]``."""
    if "anyOf" in schema:
        return " | ".join(py_type(part) for part in schema["anyOf"])
    kind = schema.get("type")
    if kind == "array":
        return f"list[{py_type(schema['items'])}]" if "items" in schema else "list"
    names = {"string": "str", "integer": "int", "boolean": "bool", "number": "float"}
    return names.get(kind, "dict" if kind == "object" else "None")


def signature(tool: Any) -> str:
    """``name(param: type = default, ...) -> dict``, as the server registers the tool."""
    schema = tool.input_schema
    required = set(schema.get("required", []))
    params = []
    for name, prop in schema.get("properties", {}).items():
        item = f"{name}: {py_type(prop)}"
        if name not in required:
            item += f" = {prop.get('default')!r}"
        params.append(item)
    return f"{tool.name}({', '.join(params)}) -> dict"


def test_the_server_registers_the_tools_the_docs_are_about(registered: Registered) -> None:
    names = {t.name for t in registered.tools}
    assert {"find_entity", "commit_to_federation", "prepare_recognition_context"} <= names


def test_every_tool_has_a_section_with_its_exact_signature(registered: Registered) -> None:
    doc = text(MCP_TOOLS_MD)
    headings = set(re.findall(r"^### (\w+)$", doc, re.M))
    missing = [
        signature(tool)
        for tool in registered.tools
        if tool.name not in headings or signature(tool) not in doc
    ]
    assert missing == [], "docs/mcp-tools.md lacks a '### name' section with these signatures"


def test_every_tool_names_each_of_its_parameters(registered: Registered) -> None:
    doc = text(MCP_TOOLS_MD)
    for tool in registered.tools:
        part = doc.split(f"### {tool.name}\n", 1)[-1].split("\n### ", 1)[0]
        for param in tool.input_schema.get("properties", {}):
            assert word(param).search(part), f"{tool.name}: parameter {param} not in its section"


def test_the_tool_table_gives_each_tool_its_annotations_and_policy_rule(
    registered: Registered,
) -> None:
    from bourdon.access.policy import DENY, QUARANTINED_RULES

    doc = text(MCP_TOOLS_MD)
    for tool in registered.tools:
        row = re.search(rf"^\| \[`{tool.name}`\]\(#{tool.name}\) \|(.*)$", doc, re.M)
        assert row, f"no row for {tool.name} in the tool table of docs/mcp-tools.md"
        hints = tool.annotations
        wanted = "destructive" if hints.destructive_hint else "read-only"
        assert hints.read_only_hint == (wanted == "read-only")
        assert wanted in row.group(1), f"{tool.name} is {wanted}"
        rule = QUARANTINED_RULES.get(tool.name, DENY)
        assert f"`{rule}`" in row.group(1), f"{tool.name}: quarantined rule is {rule}"


def test_every_resource_is_in_mcp_tools_md(registered: Registered) -> None:
    assert len(registered.resources) >= 3
    for uri in registered.resources:
        assert f"`{uri}`" in text(MCP_TOOLS_MD), uri


def test_every_error_status_is_in_the_error_table_of_mcp_tools_md() -> None:
    part = text(MCP_TOOLS_MD).split("## Errors", 1)[1].split("\n## ", 1)[0]
    for cls in error_classes():
        assert re.search(rf"^\| {cls.status} \|", part, re.M), cls.__name__


def test_the_tools_that_take_federation_hop_are_the_federated_ones_in_federation_md(
    registered: Registered,
) -> None:
    part = text(FEDERATION_MD).split("### Which tools ask peers", 1)[1].split("\n### ", 1)[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", part, re.M))
    hop = {t.name for t in registered.tools if "federation_hop" in t.input_schema["properties"]}
    assert listed == hop


def test_the_turn_start_bounds_in_the_docs_match_the_code() -> None:
    from bourdon.federation import client as federation
    from bourdon.query import context

    for doc in (text(FEDERATION_MD), text(MCP_TOOLS_MD)):
        assert f"{context.MAX_CHARS:,} characters and {context.MAX_LINES} lines" in doc
    doc = text(FEDERATION_MD)
    assert f"{federation.DEFAULT_DEADLINE:g} s for the tools" in doc
    assert f"{federation.RECOGNITION_DEADLINE:g} s for `prepare_recognition_context`" in doc


# -- docs/security.md --------------------------------------------------------------------------


def policy_rules() -> list[tuple[str, str]]:
    from bourdon.access.policy import QUARANTINED_RULES

    return sorted(QUARANTINED_RULES.items())


@pytest.mark.parametrize(("op", "rule"), policy_rules(), ids=[op for op, _ in policy_rules()])
def test_every_policy_rule_is_in_the_table_of_security_md(op: str, rule: str) -> None:
    assert re.search(rf"^\| `{re.escape(op)}` \| `{rule}` \|", text(SECURITY_MD), re.M), (
        f"docs/security.md's policy table has no row '| `{op}` | `{rule}` |'"
    )


def test_the_http_door_checks_are_listed_in_the_order_the_code_makes_them() -> None:
    from bourdon.serve import httpgate

    order = [
        int(s) for s in re.findall(r"^\d\. .*?-> (\d{3})", httpgate.__doc__ or "", re.M | re.S)
    ]
    assert order == [400, 421, 403, 413, 401]
    part = text(SECURITY_MD).split("## The HTTP door", 1)[1].split("\n## ", 1)[0]
    items = re.split(r"^\d\. ", part, flags=re.M)[1:]
    assert [int(re.search(r"\*\*(\d{3})\*\*", item).group(1)) for item in items] == order  # type: ignore[union-attr]


def test_security_md_states_the_limits_the_code_enforces() -> None:
    from bourdon.access import audit, trust
    from bourdon.serve import httpgate

    doc = text(SECURITY_MD)
    hex_chars = len(trust.new_token()) - len(trust.TOKEN_PREFIX)
    assert f"`{trust.TOKEN_PREFIX}` followed by {hex_chars} hex characters" in doc
    assert f"{httpgate.MAX_BODY:,} bytes" in doc
    assert f"cut to {audit.MAX_DETAIL} characters" in doc


# -- every doc ---------------------------------------------------------------------------------

_MACHINE_PATH = re.compile(r"(?<![\w.~<>-])(/work\b|/tmp/|/root\b)")


@pytest.mark.parametrize("path", ALL_DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_docs_hold_no_absolute_path_of_this_machine(path: Path) -> None:
    found = [
        f"line {n}: {line.strip()}"
        for n, line in enumerate(text(path).splitlines(), 1)
        if _MACHINE_PATH.search(line)
    ]
    assert found == []


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    plain = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return plain.replace(" ", "-")


@pytest.mark.parametrize("path", ALL_DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_point_at_files_and_headings_that_exist(path: Path) -> None:
    for target in re.findall(r"\]\(([^)\s]+)\)", text(path)):
        if re.match(r"\w+://", target):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        assert linked.exists(), f"{path.name} links to missing {target}"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", text(linked), re.M)
            assert anchor in {slug(h) for h in headings}, f"{path.name}: no heading #{anchor}"
