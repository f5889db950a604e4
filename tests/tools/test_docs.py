"""`docs/tools.md` shows the generated declarations, quick index and cell, so they cannot drift."""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast

import pytest

from clawcell import Tool

from ..automations.test_cell import CELL as AUTOMATIONS_CELL
from ._declarations import HINTLESS, ORDER, declarations, quick_index
from .shell.test_shell_cell import BUILD
from .shell.test_shell_cell import CELL as SHELL_CELL
from .web.test_cell import CELL

DOC = Path(__file__).resolve().parents[2] / "docs" / "tools.md"
TEXT = DOC.read_text("utf-8")


@pytest.mark.parametrize("name", ORDER)
def test_the_docs_show_each_tools_generated_declaration(name: str) -> None:
    assert f"```ts\n{declarations()[name].rstrip()}\n```" in TEXT


def test_the_docs_show_the_generated_quick_index() -> None:
    assert "```text\n" + "\n".join(quick_index()) + "\n```" in TEXT


def test_every_built_in_tool_has_an_output_hint_in_the_quick_index() -> None:
    lines = quick_index()
    assert len(lines) == len(ORDER)
    hintless = [line.split()[1] for line in lines if line.endswith("-> ?")]
    assert hintless == HINTLESS


def test_the_docs_show_the_cell_the_end_to_end_test_runs() -> None:
    assert f"```js\n{CELL.strip()}\n```" in TEXT


def test_the_docs_show_the_shell_cell_and_build_script_the_test_runs() -> None:
    assert f"```js\n{SHELL_CELL.strip()}\n```" in TEXT
    assert f"```sh\n{BUILD.strip()}\n```" in TEXT


def test_the_docs_show_the_automations_cell_the_test_runs() -> None:
    assert f"```js\n{AUTOMATIONS_CELL.strip()}\n```" in TEXT


def test_the_config_example_in_the_docs_builds_its_tools() -> None:
    example = next(
        b for b in re.findall(r"```python[^\n]*\n(.*?)```", TEXT, re.S) if "from_config" in b
    )
    namespace: dict[str, object] = {}
    exec(example, namespace)  # the documentation's own example
    tools = cast(list[Tool], namespace["tools"])
    assert [tool.name for tool in tools][-2:] == [
        "web_fetch",
        "web_search",
    ]
