"""`openai_agents_tools`: code mode as OpenAI Agents SDK `FunctionTool`s
(`pip install 'clawcell[openai-agents]'`).

Definitions come from the catalog in the Responses shape, so `wait` is strict and `exec`
(optional properties) is not. A rejected call returns its message as the tool output, which
is how the SDK reports tool failures to the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import CodeMode
from ..._lazy import install_hint
from ...errors import ConfigurationError
from ._answers import answer

if TYPE_CHECKING:
    from agents import FunctionTool

__all__ = ["openai_agents_tools"]


def openai_agents_tools(mode: CodeMode) -> list[FunctionTool]:
    """`exec` and `wait` as `agents.FunctionTool`s over `mode` (yours to close)."""
    try:
        from agents import FunctionTool
    except ImportError as exc:
        raise ConfigurationError(
            f"`openai_agents_tools` needs the OpenAI Agents SDK: {install_hint('openai-agents')}."
        ) from exc

    def bind(name: str) -> Any:
        async def invoke(_context: Any, arguments: str) -> str:
            return (await answer(mode, name, arguments)).text

        return invoke

    return [
        FunctionTool(
            name=d["name"],
            description=d["description"],
            params_json_schema=d["parameters"],
            on_invoke_tool=bind(d["name"]),
            strict_json_schema=d["strict"],
        )
        for d in mode.model_tools("openai-responses")
    ]
