"""The three tools of `compare_fastmcp.py`, as clawcell `Tool`s (`--tools bench._mcp_tools:TOOLS`).

`_fastmcp_server.py` defines the same three for FastMCP: same names, arguments and results.
"""

from __future__ import annotations

from typing import Any

from clawcell import Tool

TABLE = {"alpha": 1, "beta": 2, "gamma": 3}


async def _add(params: dict[str, Any]) -> dict[str, Any]:
    return {"sum": params["a"] + params["b"]}


async def _upper(params: dict[str, Any]) -> dict[str, Any]:
    return {"text": str(params["text"]).upper()}


async def _lookup(params: dict[str, Any]) -> dict[str, Any]:
    return {"key": params["key"], "value": TABLE.get(params["key"])}


def _object(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }


TOOLS = [
    Tool(name="add", description="Add two integers.", execute=_add,
         parameters=_object(a="integer", b="integer")),
    Tool(name="upper", description="Upper-case a text.", execute=_upper,
         parameters=_object(text="string")),
    Tool(name="lookup", description="Look a key up in a small table.", execute=_lookup,
         parameters=_object(key="string")),
]  # fmt: skip
