"""`anthropic_runner_tools`: code mode for the Anthropic SDK's tool runner
(`client.beta.messages.tool_runner(...)`; `pip install 'clawcell[anthropic]'`).

The tools are `beta_async_tool`s with the catalog's own schemas. A rejected call raises the
SDK's `ToolError`, which the runner sends back as a `tool_result` with `is_error: true`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import CodeMode
from ..._lazy import install_hint
from ...errors import ConfigurationError
from ._answers import answer, definitions

if TYPE_CHECKING:
    from anthropic.lib.tools import BetaAsyncFunctionTool

__all__ = ["anthropic_runner_tools"]


def anthropic_runner_tools(mode: CodeMode) -> list[BetaAsyncFunctionTool[Any]]:
    """`exec` and `wait` as `beta_async_tool`s for `client.beta.messages.tool_runner`."""
    try:
        from anthropic import beta_async_tool
        from anthropic.lib.tools import ToolError
    except ImportError as exc:
        raise ConfigurationError(
            f"`anthropic_runner_tools` needs the Anthropic SDK: {install_hint('anthropic')}."
        ) from exc

    def bind(name: str) -> Any:
        async def call(**arguments: Any) -> str:
            result = await answer(mode, name, arguments)
            if result.rejected:
                raise ToolError(result.text)
            return result.text

        return call

    return [
        beta_async_tool(
            bind(d["name"]),
            name=d["name"],
            description=d["description"],
            input_schema=d["input_schema"],
        )
        for d in definitions(mode)
    ]
