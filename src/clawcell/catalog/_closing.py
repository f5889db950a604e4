"""Releasing what tools own (a shell's processes, a browser's Chromium) when their holder closes.

One path for every holder: a `CodeMode` closing its runtime, an `Agent` closing (its tools
are shared by its sessions), the automations worker stopping. `Tool.on_close` may be a
plain function or return an awaitable; it may run more than once, so it is idempotent.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable

from ._tool import Tool

__all__ = ["close_tools"]

_log = logging.getLogger("clawcell.catalog")


async def close_tools(tools: Iterable[Tool]) -> None:
    """Call each tool's `on_close` (awaiting it when it returns an awaitable); never raises.

    A closer that fails is logged with the tool's name and the next one still runs, so one
    broken tool never keeps the others' processes alive.
    """
    for tool in tools:
        if tool.on_close is None:
            continue
        try:
            result = tool.on_close()
            if inspect.isawaitable(result):
                await result
        except Exception:
            _log.exception("Closing the tool %r failed; its resources may stay open.", tool.name)
