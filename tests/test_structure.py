"""The shape of the source tree: module size budgets (STYLE.md, "Size budgets"), and how it
makes sockets."""

from __future__ import annotations

import ast
from pathlib import Path

import clawcell

MAX_MODULE_LINES = 400
PACKAGE = Path(clawcell.__file__).parent


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_package_has_modules_to_measure() -> None:
    assert len(list(PACKAGE.rglob("*.py"))) > 50


def test_no_module_is_over_400_lines() -> None:
    too_long = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := _line_count(path)) > MAX_MODULE_LINES
    }
    assert too_long == {}, f"split these modules by concept (limit {MAX_MODULE_LINES} lines)"


def test_the_package_root_holds_at_most_12_python_files() -> None:
    # The face, the error tree, CodeMode and its options, and the shared vocabulary; every
    # stage of a cell lives in the folder of its stage (docs/architecture.md).
    root = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(root) <= 12, root


def test_the_tests_mirror_the_package_folders() -> None:
    tests = Path(__file__).parent
    folders = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    missing = [name for name in folders if not (tests / name.lstrip("_") / "__init__.py").is_file()]
    assert missing == []


MAX_MODULES_PER_FOLDER = 20


def _modules_directly_in(folder: Path) -> int:
    return sum(1 for path in folder.glob("*.py") if path.name != "__init__.py")


def test_no_folder_holds_more_than_20_modules_directly() -> None:
    # About twenty modules is where a reader stops holding a folder in mind at once; past that
    # a family (modules sharing a name prefix) gets a folder of its own (docs/architecture.md).
    crowded = {
        str(folder.relative_to(PACKAGE)): count
        for folder in sorted(path.parent for path in PACKAGE.rglob("__init__.py"))
        if (count := _modules_directly_in(folder)) > MAX_MODULES_PER_FOLDER
    }
    assert crowded == {}, (
        f"give a family of these folders a folder (limit {MAX_MODULES_PER_FOLDER})"
    )


def test_the_tests_mirror_the_family_folders() -> None:
    # `tools/_web/` is tested in `tests/tools/web/`: the leading underscore of a private
    # family folder is dropped, as it is for `_cell/` (`tests/cell/`).
    tests = Path(__file__).parent
    families = sorted(path.parent.relative_to(PACKAGE) for path in PACKAGE.glob("*/*/__init__.py"))
    assert families, "the package has family folders to mirror"
    missing = [
        str(family)
        for family in families
        if not (
            tests.joinpath(*(part.lstrip("_") for part in family.parts)) / "__init__.py"
        ).is_file()
    ]
    assert missing == []


def _sockets_made_without_a_protocol(path: Path) -> list[int]:
    found: list[int] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "socket"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "socket"
            and len(node.args) < 3
            and not any(k.arg in ("proto", "fileno") for k in node.keywords)
        ):
            found.append(node.lineno)
    return found


def test_every_socket_the_package_makes_names_its_protocol() -> None:
    # asyncio sets TCP_NODELAY only on sockets whose `proto` is IPPROTO_TCP (and on what a
    # listener with that `proto` accepts); a listener made with `proto=0` leaves Nagle's
    # algorithm on and every kept-alive response waits ~40 ms for the client's delayed ACK.
    found = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := _sockets_made_without_a_protocol(path))
    }
    assert found == {}, "pass `socket.IPPROTO_TCP` (or the protocol meant) as the third argument"


ENGINE_STAGES = ("_cell", "_runs", "_source")


def _test_file_of(module: Path) -> Path:
    """`src/clawcell/_cell/_cell.py` is tested in `tests/cell/test_cell.py` (STYLE.md, "Tests
    mirror the package tree"; a leading underscore is dropped from folders and modules)."""
    relative = module.relative_to(PACKAGE)
    folders = (part.lstrip("_") for part in relative.parts[:-1])
    return Path(__file__).parent.joinpath(*folders, f"test_{module.stem.lstrip('_')}.py")


def test_every_module_of_an_engine_stage_has_its_test_file() -> None:
    # The stages are where a cell's behaviour is decided; a reader who opens one module looks
    # for its tests beside the mirror path, not in a broader file.
    modules = [
        module
        for stage in ENGINE_STAGES
        for module in sorted((PACKAGE / stage).glob("_*.py"))
        if module.name != "__init__.py"
    ]
    assert len(modules) >= 18
    missing = [
        str(module.relative_to(PACKAGE))
        for module in modules
        if not _test_file_of(module).is_file()
    ]
    assert missing == [], "add the test file of each of these modules (tests mirror the tree)"
