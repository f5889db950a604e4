"""clawcell: code mode and a rich output protocol for AI agents."""

from __future__ import annotations

import gc as _gc
import sys as _sys


class _ThawAtFirstFullCollection:
    """A collector callback that unfreezes what the import froze (below) just before the
    first full collection walks the oldest generation, unless the interpreter is exiting or
    the program has called `gc.freeze` since (then everything stays frozen, as it asked)."""

    __slots__ = ("_done", "_get_objects", "_is_finalizing", "_marker", "_unfreeze")

    def __init__(self) -> None:
        self._done = False
        # Made after the import's freeze, so tracked and not frozen: a later `gc.freeze` by
        # the program freezes it too, and frozen objects are not among `gc.get_objects()`.
        self._marker: list[object] = []
        # (held here: the exit clears module globals while collections still run)
        self._is_finalizing = _sys.is_finalizing
        self._unfreeze = _gc.unfreeze
        self._get_objects = _gc.get_objects

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if self._done or phase != "start" or info["generation"] != 2 or self._is_finalizing():
            return
        self._done = True  # (it stays listed: removing it here would skip the next callback)
        marker = self._marker
        if any(tracked is marker for tracked in self._get_objects()):  # once per process
            self._unfreeze()


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
        # objects (5 ms, a twelfth of the import), and again by the collections at the
        # interpreter's exit (9 % of a cold start's instructions; docs/benchmarks.md, "Cold
        # start, fifth pass"). So every tracked object is frozen here, unwalked, and thawed
        # into the oldest generation just before the first full collection (automatic or
        # `gc.collect()`), which then walks them as it would have; the young and middle
        # collections before it never walk the oldest generation anyway. At the exit they
        # stay frozen: the process's memory goes back whole. A program that froze objects
        # itself, before the import or after it, is left as it was.
        if _gc.get_freeze_count() == 0:
            _gc.freeze()
            _gc.callbacks.append(_ThawAtFirstFullCollection())
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
