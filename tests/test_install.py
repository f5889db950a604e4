"""Every message that names an optional extra says how to add it the same way: from a built
wheel and in a clawcell checkout (`clawcell._lazy.install_hint`)."""

from __future__ import annotations

import ast
from pathlib import Path

from clawcell._lazy import install_hint

SOURCE = Path(__file__).resolve().parents[1] / "src" / "clawcell"


def test_the_hint_names_the_wheel_and_the_checkout_ways() -> None:
    assert install_hint("ui") == (
        "`pip install 'clawcell[ui]'` (in a clawcell checkout: `.venv/bin/pip install -e '.[ui]'`)"
    )


def _docstrings(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            ids.add(id(body[0].value))
    return ids


def test_no_message_spells_an_install_command_by_hand() -> None:
    found: list[str] = []
    for path in sorted(SOURCE.rglob("*.py")):
        if path.relative_to(SOURCE).as_posix() == "_lazy/__init__.py":  # where the hint is worded
            continue
        tree = ast.parse(path.read_text("utf-8"))
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
                and "pip install" in node.value
                and "clawcell[" in node.value
            ):
                found.append(f"{path.relative_to(SOURCE)}:{node.lineno}")
    assert found == []
