"""Closing the tools that hold resources (a `browser` tool's Chromium) with their agent."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterable

from .. import Tool

__all__ = ["close_tools"]


async def close_tools(tools: Iterable[Tool]) -> None:
    """Await `tool.execute.aclose()` for each tool whose `execute` has one; never raises."""
    for tool in tools:
        closer = getattr(tool.execute, "aclose", None)
        if callable(closer):
            with contextlib.suppress(Exception):
                result = closer()
                if inspect.isawaitable(result):
                    await result
