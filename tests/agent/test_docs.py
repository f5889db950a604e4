"""`docs/agents.md`: its Python examples are valid Python (top-level `await` allowed)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text("utf-8"), re.S)


def test_the_page_has_an_example_per_integration() -> None:
    text = "\n".join(BLOCKS)
    for name in [
        "pydantic_ai_toolset",
        "openai_agents_tools",
        "anthropic_runner_tools",
        "langchain_tools",
    ]:
        assert name in text


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block-{n}" for n in range(len(BLOCKS))])
def test_each_example_compiles(block: str) -> None:
    compile(block, str(DOC), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
