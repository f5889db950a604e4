"""One tool call's steps that need none of the catalog's state: the approval gate and the
result as the guest's JSON text."""

from __future__ import annotations

from typing import Any

from .._jsonvalue import json_text
from ..approvals import gate_context, rule_reason
from ..errors import ApprovalDeniedError
from ._bindings import Binding
from ._tool import ToolResult

__all__ = ["approve", "guest_text"]


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
