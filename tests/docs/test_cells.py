"""The JavaScript cells that docs/state.md shows complete as cells (so their syntax is valid).

`docs/tools.md`'s cell is run by `tests/tools` (`test_docs.py` pins it to the end-to-end test).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from clawcell import CodeMode, Tool
from clawcell.store import MemoryStore
from tests.conftest import run

DOC = Path(__file__).resolve().parents[2] / "docs" / "state.md"
CELLS = re.findall(r"^```js\n(.*?)^```", DOC.read_text("utf-8"), re.M | re.S)


async def read_rows(_: dict[str, Any]) -> dict[str, Any]:
    return {"rows": [{"i": n, "tag": "a"} for n in range(50)]}


def test_the_page_shows_cells() -> None:
    assert len(CELLS) == 2


@pytest.mark.parametrize("cell", CELLS, ids=[f"state.md-cell-{n}" for n in range(len(CELLS))])
def test_each_cell_completes(cell: str) -> None:
    async def main() -> dict[str, Any]:
        tools = [Tool(name="read_rows", execute=read_rows)]
        async with CodeMode(tools, store=MemoryStore(), session_id="docs") as mode:
            return await mode.exec(cell)

    envelope = run(main())
    assert envelope["status"] == "completed", envelope
