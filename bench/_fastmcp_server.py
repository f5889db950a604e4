"""FastMCP with its code-mode transform over the three tools of `_mcp_tools.py`, served over
streamable HTTP on `127.0.0.1:<port>` (the only argument) until killed.

Runs in FastMCP's own virtual environment (`fastmcp[code-mode]==4.2.3`), never clawcell's:
`compare_fastmcp.py` starts it there. It imports nothing from clawcell.
"""

# FastMCP is installed in its own environment, not in the one the type checker reads:
# pyright: reportMissingImports=false, reportUnknownMemberType=false
# pyright: reportUnknownVariableType=false, reportUntypedFunctionDecorator=false

from __future__ import annotations

import sys

from fastmcp import FastMCP
from fastmcp.experimental.transforms.code_mode import CodeMode

TABLE = {"alpha": 1, "beta": 2, "gamma": 3}

server = FastMCP("bench", transforms=[CodeMode()])


@server.tool
def add(a: int, b: int) -> dict[str, int]:
    """Add two integers."""
    return {"sum": a + b}


@server.tool
def upper(text: str) -> dict[str, str]:
    """Upper-case a text."""
    return {"text": text.upper()}


@server.tool
def lookup(key: str) -> dict[str, object]:
    """Look a key up in a small table."""
    return {"key": key, "value": TABLE.get(key)}


if __name__ == "__main__":
    server.run(
        transport="http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False,
        log_level="warning",
    )  # fmt: skip
