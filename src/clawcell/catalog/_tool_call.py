"""One tool call's steps that need none of the catalog's state: its hooks, the approval
gate and the result as the guest's JSON text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._jsonvalue import json_text, json_value
from ..approvals import gate_context, rule_reason
from ..errors import ApprovalDeniedError, ToolError
from ._bindings import Binding
from ._tool import ToolResult

if TYPE_CHECKING:
    from ._hooks import AfterToolCall, BeforeToolCall

__all__ = ["approve", "guest_text", "run_after_hooks", "run_before_hooks"]


async def run_before_hooks(
    hooks: tuple[BeforeToolCall, ...], binding: Binding, params: Any, asked: list[str]
) -> Any:
    """The input `hooks` leave for the call (each may rewrite it, block the call or ask for
    approval: its reason is appended to `asked`)."""
    from ._hooks import HookDecision, ToolCallEvent, run_maybe_async

    for hook in hooks:
        event = ToolCallEvent(
            callable_name=binding.callable_name, tool_name=binding.tool.name, params=params
        )
        decision = await run_maybe_async(hook, event)
        if isinstance(decision, HookDecision) and decision.block:
            raise ToolError(
                f'Tool "{binding.callable_name}" was blocked before execution: {decision.reason}'
            )
        if isinstance(decision, HookDecision) and decision.params is not None:
            params = json_value(decision.params)
        if isinstance(decision, HookDecision) and decision.approval:
            asked.append(decision.approval)
    return params


async def run_after_hooks(
    hooks: tuple[AfterToolCall, ...], binding: Binding, params: Any, result: ToolResult
) -> ToolResult:
    """The result `hooks` leave for the call (each may replace it)."""
    from ._hooks import ToolCallEvent, run_maybe_async

    for hook in hooks:
        event = ToolCallEvent(
            callable_name=binding.callable_name,
            tool_name=binding.tool.name,
            params=params,
            result=result,
        )
        replacement = await run_maybe_async(hook, event)
        if isinstance(replacement, ToolResult):
            result = replacement
    return result


async def approve(binding: Binding, params: Any, hook_reason: str | None) -> None:
    """Wait for the run's approval gate; a call outside any run may not need approval."""
    context = gate_context.get()
    if context is None:
        if hook_reason is not None or rule_reason(binding.tool.approval, params) is not None:
            raise ApprovalDeniedError(
                f'Tool "{binding.callable_name}" needs approval, and this call is not part of '
                "a Code Mode run that can wait for one."
            )
        return
    gate, request_id = context
    await gate.check(request_id, binding.tool.name, params, binding.tool.approval, hook_reason)


def guest_text(result: ToolResult) -> str:
    """`json_text(guest_value(result))`, without the copy (`json_text` keeps its policy)."""
    if result.details is not None or not result.content:
        return json_text(result.details)
    return json_text({"content": list(result.content)})
