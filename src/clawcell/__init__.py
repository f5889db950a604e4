"""clawcell: code mode and a rich output protocol for AI agents."""

from __future__ import annotations

import importlib

from ._codemode import CodeMode
from ._limits import Limits
from ._progress import CellUpdate
from .catalog import Tool, ToolResult
from .envelope import render
from .errors import (
    ClawcellError,
    ClosedError,
    ConfigurationError,
    ContractError,
    InputError,
    McpError,
    RuntimeUnavailableError,
    SnapshotError,
    StoreRangeError,
    StoreTypeError,
    StoreUnavailableError,
    ToolError,
)
from .store import MemoryStore, SessionStore, SQLiteStore

__all__ = [
    "CellUpdate",
    "ClawcellError",
    "ClosedError",
    "CodeMode",
    "ConfigurationError",
    "ContractError",
    "InputError",
    "Limits",
    "McpError",
    "MemoryStore",
    "RuntimeUnavailableError",
    "SQLiteStore",
    "SessionStore",
    "SnapshotError",
    "StoreRangeError",
    "StoreTypeError",
    "StoreUnavailableError",
    "Tool",
    "ToolError",
    "ToolResult",
    "render",
]


def __getattr__(name: str) -> object:
    """`clawcell.mcp` and `clawcell.reply` load on first use (they are not needed to run cells)."""
    if name in {"mcp", "reply"}:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
