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
    tree = ast.parse("from ..catalog._tool_search import SearchIndex\nfrom ._names import x\n")
    package = _package(module)
    names = [n for node in tree.body if isinstance(node, ast.ImportFrom)
             for n in _imported(node, package)]  # fmt: skip
    assert [n for n in names if foreign_private(n, package)] == [
        "clawcell.catalog._tool_search",
        "clawcell.catalog._tool_search.SearchIndex",
    ]


# The folders, read top-down, are the path of one cell (docs/architecture.md). A module may
# import its own folder and any folder of a lower rank; never one of a higher rank.
LAYERS: dict[str, int] = {
    "__main__": 12,
    "cli": 11,
    "ui": 10,
    # Built-in tools sit with the faces: some of them (automations, sub-agents, sessions) run
    # cells or agents. Nothing below imports them.
    "tools": 9,
    "automations": 9,
    "agent": 9,
    "mcp_server": 9,
    "": 8,  # the face: `clawcell/__init__.py`
    "_codemode": 7,
    "_config": 7,
    "_runs": 6,
    "mcp": 5,
    "catalog": 4,
    "_source": 4,
    "_cell": 4,
    "approvals": 3,
    "runtime": 3,
    "store": 2,
    "envelope": 2,
    "reply": 1,
    **dict.fromkeys(
        (
            "errors",
            "_limits",
            "_progress",
            "_jsjson",
            "_jsonvalue",
            "_random",
            "_lazy",
            "_session_ids",
        ),
        0,
    ),
}


def _module_name(path: Path) -> tuple[str, bool]:
    parts = path.relative_to(SOURCE).with_suffix("").parts
    package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if package else parts), package


def import_graph() -> dict[str, set[str]]:
    """Every clawcell module and the clawcell modules it imports, wherever the statement is
    (module level, inside functions, under `TYPE_CHECKING`). `from package import name`
    depends on the module `package.name` when that is a module, else on `package`."""
    modules = {_module_name(path)[0] for path in MODULES}
    graph: dict[str, set[str]] = {}
    for path in MODULES:
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                found.update(_nearest_module(alias.name, modules) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base, *names = _imported(node, _package(path))
                found.update(
                    name if name in modules else _nearest_module(base, modules) for name in names
                )
        name = _module_name(path)[0]
        graph[name] = {module for module in found if module and module != name}
    return graph


def _nearest_module(dotted: str, modules: set[str]) -> str:
    parts = dotted.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts)


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as `[a, b, …, a]`, or `[]` when the graph has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return []


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """`a -> b` for every import of a module in a higher folder than the importer's."""
    return [
        f"{source} -> {target}"
        for source, targets in sorted(graph.items())
        for target in sorted(targets)
        if LAYERS[layer_of(target)] > LAYERS[layer_of(source)]
    ]


def test_every_folder_and_root_module_has_a_layer() -> None:
    assert {layer_of(module) for module in import_graph()} == set(LAYERS)


def test_no_import_cycle_exists_type_checking_imports_included() -> None:
    assert find_cycle(import_graph()) == []


def test_no_module_imports_from_a_higher_folder() -> None:
    assert upward_imports(import_graph()) == []


def _imports_between(graph: dict[str, set[str]], low: str, targets: set[str]) -> list[str]:
    return [
        f"{source} -> {target}"
        for source, imported in sorted(graph.items())
        if layer_of(source) == low
        for target in sorted(imported)
        if layer_of(target) in targets
    ]


@pytest.mark.parametrize("package", ["agent", "ui", "store"])
def test_agent_ui_and_store_import_nothing_from_the_commands(package: str) -> None:
    assert _imports_between(import_graph(), package, {"cli"}) == []


def test_the_mcp_client_bridge_imports_nothing_of_code_mode() -> None:
    assert _imports_between(import_graph(), "mcp", {"_codemode", "", "mcp_server"}) == []


def test_the_cycle_finder_reports_a_loop_and_passes_a_tree() -> None:
    tree: dict[str, set[str]] = {"a": {"b", "c"}, "b": {"c"}, "c": set()}
    assert find_cycle(tree) == []
    assert find_cycle({**tree, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"x": {"x"}}) == ["x", "x"]


def test_an_import_from_a_higher_folder_is_reported() -> None:
    graph = {"clawcell.store._sqlite": {"clawcell.reply", "clawcell._cell._cell"}}
    assert upward_imports(graph) == ["clawcell.store._sqlite -> clawcell._cell._cell"]


def test_the_source_stage_depends_on_the_error_tree_only() -> None:
    # The model's call and its source are checked before a cell exists: nothing of the engine
    # (its stack frames, its parser) is needed to read them (issue 40, item 2).
    others = set(LAYERS) - {"_source", "errors"}
    assert _imports_between(import_graph(), "_source", others) == []
