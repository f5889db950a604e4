"""`langchain_tools`: code mode as LangChain `StructuredTool`s
(`pip install 'clawcell[langchain]'`).

The tools take the catalog's JSON Schemas as `args_schema`. A rejected call raises
`ToolException`, which the tools hand back as the tool message (`handle_tool_error=True`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import CodeMode
from ..._lazy import install_hint
from ...errors import ConfigurationError
from ._answers import answer, definitions

if TYPE_CHECKING:
    from langchain_core.tools import StructuredTool

__all__ = ["langchain_tools"]


def langchain_tools(mode: CodeMode) -> list[StructuredTool]:
    """`exec` and `wait` as async `StructuredTool`s over `mode` (yours to close)."""
    try:
        from langchain_core.tools import StructuredTool, ToolException
    except ImportError as exc:
        raise ConfigurationError(
            f"`langchain_tools` needs LangChain: {install_hint('langchain')}."
        ) from exc

    def bind(name: str) -> Any:
        async def call(**arguments: Any) -> str:
            result = await answer(mode, name, arguments)
            if result.rejected:
                raise ToolException(result.text)
            return result.text

        return call

    return [
        StructuredTool.from_function(
            coroutine=bind(d["name"]),
            name=d["name"],
            description=d["description"],
            args_schema=d["input_schema"],
            handle_tool_error=True,
        )
        for d in definitions(mode)
    ]
