"""clawcell: code mode and a rich output protocol for AI agents."""

from __future__ import annotations

import gc as _gc

# No automatic collection while the package imports: the import builds tens of thousands of
# long-lived objects (functions, classes, their dicts) and the collector would walk them dozens
# of times on the way (docs/benchmarks.md, "Cold start, third pass"). The collector is left as
# the importer had it, a failed import included; its thresholds are not touched.
_collecting = _gc.isenabled()
_gc.disable()
try:
    import importlib
    import typing

    from ._codemode import CodeMode
    from ._config import CodeModeOptions
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
        ModelError,
        RuntimeUnavailableError,
        SnapshotError,
        StoreRangeError,
        StoreTypeError,
        StoreUnavailableError,
        ToolError,
        TurnLimitError,
    )
    from .store import MemoryStore, SessionStore
finally:
    if _collecting:
        # What the import made (modules, classes, functions: alive as long as the process)
        # would be walked by the collection its allocations made due, a middle one of ~20,000
        # objects (5 ms, a twelfth of the import; docs/benchmarks.md, "Cold start, fifth
        # pass"). `freeze` then `unfreeze` moves every tracked object to the oldest generation
        # without walking it, where surviving that collection would soon have put it; nothing
        # stays frozen. A program that froze objects itself is left as it was.
        if _gc.get_freeze_count() == 0:
            _gc.freeze()
            _gc.unfreeze()
        _gc.enable()

if typing.TYPE_CHECKING:
    from .store import PostgresStore as PostgresStore
    from .store import SQLiteStore

__all__ = [
    "CellUpdate",
    "ClawcellError",
    "ClosedError",
    "CodeMode",
    "CodeModeOptions",
    "ConfigurationError",
    "ContractError",
    "InputError",
    "Limits",
    "McpError",
    "MemoryStore",
    "ModelError",
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
    "TurnLimitError",
    "render",
]


def __getattr__(name: str) -> object:
    """`clawcell.mcp`, `clawcell.reply` and the durable stores load on first use (they are
    not needed to run cells)."""
    if name in {"mcp", "reply"}:
        return importlib.import_module(f"{__name__}.{name}")
    if name in {"SQLiteStore", "PostgresStore"}:  # durable backends: not needed to run cells
        value = getattr(importlib.import_module(f"{__name__}.store"), name)
        if name in __all__:  # `PostgresStore` is reachable here, not exported
            globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
