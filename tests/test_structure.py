"""The shape of the source tree: module size budgets (STYLE.md, "Size budgets")."""

from __future__ import annotations

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
