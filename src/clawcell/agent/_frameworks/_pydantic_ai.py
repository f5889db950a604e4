"""`pydantic_ai_toolset`: code mode as a pydantic-ai toolset
(`pip install 'clawcell[pydantic-ai]'`).

The toolset holds `exec` and `wait` built with `Tool.from_schema` from the catalog's own
definitions (so the model sees clawcell's description and quick index). A rejected call
raises pydantic-ai's `ToolFailed`, which the model sees as a failed tool result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import CodeMode
from ..._lazy import install_hint
from ...errors import ConfigurationError
from ._answers import answer, definitions

if TYPE_CHECKING:
    from pydantic_ai.toolsets import FunctionToolset

__all__ = ["pydantic_ai_toolset"]


def pydantic_ai_toolset(mode: CodeMode) -> FunctionToolset[Any]:
    """A pydantic-ai `FunctionToolset` giving an agent `exec` and `wait` over `mode`.

    Pass it as `pydantic_ai.Agent(..., toolsets=[pydantic_ai_toolset(mode)])`; `mode` stays
    yours to close.
    """
    try:
        from pydantic_ai import Tool
        from pydantic_ai.exceptions import ToolFailed
        from pydantic_ai.toolsets import FunctionToolset
    except ImportError as exc:
        raise ConfigurationError(
            f"`pydantic_ai_toolset` needs pydantic-ai: {install_hint('pydantic-ai')}."
        ) from exc

    def bind(name: str) -> Any:
        async def call(**arguments: Any) -> str:
            result = await answer(mode, name, arguments)
            if result.rejected:
                raise ToolFailed(result.text)
            return result.text

        return call

    tools = [
        Tool.from_schema(
            bind(d["name"]),
            name=d["name"],
            description=d["description"],
            json_schema=d["input_schema"],
        )
        for d in definitions(mode)
    ]
    return FunctionToolset(tools)
