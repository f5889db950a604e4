"""No module reaches into another folder's private modules or names (STYLE.md, issues 9, 40).

Each top folder of the package (`clawcell.store`, `clawcell.agent`, the engine stages
`clawcell._runs`, `clawcell._cell`, `clawcell._source`, …) is a unit: its private modules and
private names are its own. Anything another unit needs from it is a name its `__init__`
exports. The root's own modules (`clawcell._limits`, `clawcell._lazy`, …: the parent's
internals, the shared vocabulary) may be imported by every unit, but a private *name* in them
(`clawcell._limits._RANGES`) belongs to the root.

The faces (`cli`, `mcp_server`) are held to more: from the root they import only what it
exports (`clawcell.CodeMode`, not `clawcell._codemode.CodeMode`) and the shared vocabulary
(`_lazy`'s install hints, `_session_ids`), never the root's stages (`_codemode`, `_config`,
`_runs`, `_cell`, `_source`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
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


def _unit(parts: Sequence[str]) -> tuple[str, ...]:
    """The top folder a dotted name lies in (`clawcell.store`, `clawcell._runs`), or the root
    package for the root's own modules."""
    if len(parts) > 1 and (SOURCE / parts[0] / parts[1]).is_dir():
        return tuple(parts[:2])
    return tuple(parts[:1])


def foreign_private(name: str, package: tuple[str, ...]) -> bool:
    """Whether `name` reaches a private module or name of a unit `package` is not in."""
    parts = name.split(".")
    if parts[0] != "clawcell" or _unit(parts) == _unit(package):
        return False
    return any(p.startswith("_") and not p.startswith("__") for p in parts[2:])


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
        ("clawcell.agent._agent", ("clawcell", "cli"), True),
        ("clawcell.agent.Agent", ("clawcell", "cli"), False),
        ("clawcell.catalog._names", ("clawcell", "cli"), True),
        ("clawcell.mcp._sdk", ("clawcell", "mcp_server"), True),
        ("clawcell.ui._app", ("clawcell", "mcp_server"), True),
        ("json._private", ("clawcell", "cli"), False),
        ("clawcell.tools._web._fetch", ("clawcell", "tools"), False),
        ("clawcell._cell._cell.Cell", ("clawcell", "_runs"), True),
        ("clawcell._cell.Cell", ("clawcell", "_runs"), False),
        ("clawcell._runs._host", ("clawcell",), True),
        ("clawcell._runs.CellHost", ("clawcell",), False),
        ("clawcell._limits._RANGES", ("clawcell", "cli"), True),
        ("clawcell._limits._RANGES", ("clawcell",), False),
        ("clawcell._lazy.install_hint", ("clawcell", "cli"), False),
    ],
)
def test_the_rule_tells_foreign_private_names_from_allowed_ones(
    name: str, package: tuple[str, ...], foreign: bool
) -> None:
    assert foreign_private(name, package) is foreign


FACES = ("cli", "mcp_server")


def face_violations(path: Path, exported: Sequence[str]) -> list[str]:
    """`<line>: <name>` for every import of a face that reaches past the root's exports: a
    root stage (`clawcell._codemode`, `clawcell._runs`, …), or a name the root exports taken
    from the vocabulary module it lives in."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            found += [
                f"{node.lineno}: {name}"
                for name in dict.fromkeys(_imported(node, _package(path)))
                if _past_the_root(name.split("."), exported)
            ]
    return found


def _past_the_root(parts: list[str], exported: Sequence[str]) -> bool:
    if parts[0] != "clawcell" or len(parts) < 2 or not parts[1].startswith("_"):
        return False
    # What every folder may use of the root besides its exports: the vocabulary (`LAYERS`).
    if LAYERS.get(parts[1]) != 0:
        return not parts[1].startswith("__")
    return len(parts) > 2 and parts[2] in exported


def _root_exports() -> list[str]:
    tree = ast.parse((SOURCE / "clawcell" / "__init__.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
            return list(ast.literal_eval(node.value))
    raise AssertionError("clawcell/__init__.py has no __all__")


FACE_MODULES = [p for p in MODULES if _package(p)[:2] in {("clawcell", f) for f in FACES}]


@pytest.mark.parametrize("path", FACE_MODULES, ids=lambda p: str(p.relative_to(SOURCE)))
def test_a_face_takes_from_the_root_only_what_it_exports_and_the_vocabulary(path: Path) -> None:
    assert face_violations(path, _root_exports()) == []


@pytest.mark.parametrize(
    ("name", "past"),
    [
        ("clawcell._codemode.CodeMode", True),
        ("clawcell._runs", True),
        ("clawcell._limits.Limits", True),
        ("clawcell.CodeMode", False),
        ("clawcell._lazy.install_hint", False),
        ("clawcell._session_ids.check_session_id", False),
        ("clawcell.__version__", False),
        ("clawcell.errors.ConfigurationError", False),
    ],
)
def test_the_face_rule_tells_the_roots_exports_from_its_internals(name: str, past: bool) -> None:
    assert _past_the_root(name.split("."), _root_exports()) is past


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
    # (its stack frames, its parser) is needed to read them (issue 40, item 2). `_lazy`'s
    # `value_class` (the standard library's dataclass at less import cost) is not the engine.
    others = set(LAYERS) - {"_source", "errors", "_lazy"}
    assert _imports_between(import_graph(), "_source", others) == []
