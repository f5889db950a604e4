"""`before_tool_call` / `after_tool_call` hooks around catalog calls.

A before hook sees the callable name and the input; it may return `HookDecision(params=...)`
to rewrite the input, `HookDecision(block=True, reason=...)` to stop the call before the tool
runs, or `HookDecision(approval="why")` to make the call wait for a person's decision. An
after hook sees the input the tool actually ran with and its result, and may return a
replacement `ToolResult`. Contracts are checked on the final, post-hook values.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from .._lazy import value_class
from ._tool import ToolResult

__all__ = ["AfterToolCall", "BeforeToolCall", "HookDecision", "ToolCallEvent", "run_maybe_async"]


@value_class
class ToolCallEvent:
    """What hooks observe about one call.

    Attributes:
        callable_name: The guest-facing name of the tool.
        tool_name: The tool's own name.
        params: The input (for after hooks: the input the tool ran with).
        result: For after hooks, the tool's result; `None` before the call.
    """

    callable_name: str
    tool_name: str
    params: dict[str, Any]
    result: ToolResult | None = None


@value_class
class HookDecision:
    """A before hook's verdict; `None` from a hook means "carry on unchanged"."""

    params: dict[str, Any] | None = None
    block: bool = False
    reason: str = "Tool call blocked by policy"
    approval: str | None = None
    """Ask a person before the call runs; the text is the reason shown to them."""


BeforeToolCall: TypeAlias = Callable[
    [ToolCallEvent], Awaitable[HookDecision | None] | HookDecision | None
]
AfterToolCall: TypeAlias = Callable[
    [ToolCallEvent], Awaitable[ToolResult | None] | ToolResult | None
]


async def run_maybe_async(hook: Callable[[ToolCallEvent], Any], event: ToolCallEvent) -> Any:
    """Call a sync or async hook and return its value."""
    value = hook(event)
    return await value if inspect.isawaitable(value) else value
