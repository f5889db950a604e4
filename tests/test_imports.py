"""No module imports a `_private` module of a sibling subpackage (STYLE.md, issue 9).

A subpackage may use its own private modules and the root package's private helpers
(`clawcell._jsonvalue`, `clawcell._limits`, …: the parent's internals); anything it needs from
another subpackage must be a name that subpackage exports. One exception: the faces that were
split out of a package to break import loops (issue 27) keep access to that package's private
modules: the commands (`cli`, from `agent`, `ui` and `store`) and the MCP server (`mcp_server`,
from `mcp`). They sit above everything and nothing imports them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"
MODULES = sorted((SOURCE / "clawcell").rglob("*.py"))


def _package(path: Path) -> tuple[str, ...]:
    parts = path.relative_to(SOURCE).with_suffix("").parts
    return parts[:-1]


def _imported(node: ast.Import | ast.ImportFrom, package: tuple[str, ...]) -> Iterator[str]:
    """Dotted names a statement imports (modules, and `from` names that may be modules)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = list(package[: len(package) - node.level + 1]) if node.level else []
    module = [*base, *(node.module.split(".") if node.module else [])]
    yield ".".join(module)
    yield from (".".join([*module, alias.name]) for alias in node.names)


SPLIT_FACES: dict[tuple[str, ...], set[tuple[str, ...]]] = {
    ("clawcell", "cli"): {("clawcell", "agent"), ("clawcell", "ui"), ("clawcell", "store")},
    ("clawcell", "mcp_server"): {("clawcell", "mcp")},
}


def foreign_private(name: str, package: tuple[str, ...]) -> bool:
    """Whether `name` reaches a private module owned by a subpackage `package` is not in."""
    parts = name.split(".")
    if parts[0] != "clawcell":
        return False
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            owner = tuple(parts[:index])
            allowed = SPLIT_FACES.get(package[:2], set())
            return len(owner) > 1 and package[: len(owner)] != owner and owner not in allowed
    return False


def violations(path: Path) -> list[str]:
    """`<line>: <name>` for every foreign private import in the module at `path`."""
    package = _package(path)
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            found += [
                f"{node.lineno}: {name}"
                for name in dict.fromkeys(_imported(node, package))
                if foreign_private(name, package)
            ]
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SOURCE)))
def test_no_module_imports_a_private_module_of_another_subpackage(path: Path) -> None:
    assert violations(path) == []


@pytest.mark.parametrize(
    ("name", "package", "foreign"),
    [
        ("clawcell.catalog._names.locale_key", ("clawcell", "mcp"), True),
        ("clawcell.catalog._names", ("clawcell",), True),
        ("clawcell.catalog.locale_key", ("clawcell", "mcp"), False),
        ("clawcell.mcp._names", ("clawcell", "mcp"), False),
        ("clawcell._jsonvalue", ("clawcell", "mcp"), False),
        ("clawcell.store._postgres", ("clawcell", "store", "sub"), False),
        ("clawcell.cli._db.__name__", ("clawcell", "cli"), False),
        ("clawcell.agent._agent", ("clawcell", "cli"), False),
        ("clawcell.catalog._names", ("clawcell", "cli"), True),
        ("clawcell.mcp._sdk", ("clawcell", "mcp_server"), False),
        ("clawcell.ui._app", ("clawcell", "mcp_server"), True),
        ("json._private", ("clawcell", "cli"), False),
    ],
)
def test_the_rule_tells_foreign_private_names_from_allowed_ones(
    name: str, package: tuple[str, ...], foreign: bool
) -> None:
    assert foreign_private(name, package) is foreign


def test_relative_imports_are_resolved_against_the_importing_package() -> None:
    module = SOURCE / "clawcell" / "mcp" / "_example.py"
    tree = ast.parse("from ..catalog._search import SearchIndex\nfrom ._names import x\n")
    package = _package(module)
    names = [n for node in tree.body if isinstance(node, ast.ImportFrom)
             for n in _imported(node, package)]  # fmt: skip
    assert [n for n in names if foreign_private(n, package)] == [
        "clawcell.catalog._search",
        "clawcell.catalog._search.SearchIndex",
    ]
