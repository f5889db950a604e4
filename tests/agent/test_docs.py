"""`docs/agents.md` shows each framework integration (`tests/docs` runs every example)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
BLOCKS = re.findall(r"```python[^\n]*\n(.*?)```", DOC.read_text("utf-8"), re.S)


def test_the_page_has_an_example_per_integration() -> None:
    text = "\n".join(BLOCKS)
    for name in [
        "pydantic_ai_toolset",
        "openai_agents_tools",
        "anthropic_runner_tools",
        "langchain_tools",
    ]:
        assert name in text
