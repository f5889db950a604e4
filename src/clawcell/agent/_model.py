"""The `Model` seam: what the agent loop needs from a model API, and nothing more.

A model gets a `ModelRequest` (instructions, the transcript so far, the `exec`/`wait` tool
definitions in its own `tool_style`) and streams back `ModelText` pieces followed by exactly
one `ModelResponse` (the whole text, the tool calls and the token usage). The adapters over
the official SDKs and `ScriptedModel` all implement it; so can any other API.

Transcript messages are JSON-shaped dicts (see `clawcell.agent` docs): `user` and
`assistant` messages with `content` blocks (`text`, `toolCall`, `canvas`), and `toolResult`
messages answering a `toolCall` by its `toolCallId`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

from .._lazy import value_class
from ..catalog import ModelToolStyle

__all__ = ["Model", "ModelEvent", "ModelRequest", "ModelResponse", "ModelText", "ToolCall"]


@value_class
class ToolCall:
    """One tool call a model made.

    Attributes:
        id: The call id the model API assigned; its result answers it.
        name: The tool's name (`exec` or `wait` unless the model made one up).
        arguments: The argument object, or the raw text when it was not a JSON object.
    """

    id: str
    name: str
    arguments: Mapping[str, Any] | str


@value_class
class ModelText:
    """A piece of streamed assistant text."""

    text: str


@value_class
class ModelResponse:
    """The end of one model call.

    Attributes:
        text: The whole assistant text of this call (may be empty).
        tool_calls: The tool calls, in order; none means this is the final answer.
        input_tokens: Prompt tokens, when the API reported them.
        output_tokens: Completion tokens, when the API reported them.
        stop_reason: Why the call ended: `"stop"` (an answer), `"toolUse"` (tool calls),
            `"length"` (the output limit cut it: the loop then runs none of its calls and
            marks a cut answer), or the API's own name for anything else.
        reasoning: The model's reasoning as transcript `thinking` blocks (`{"type":
            "thinking", "thinking", "thinkingSignature", "redacted"?}`), kept with the tool
            calls and sent back first, as the APIs that sign their reasoning require.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop_reason: str | None = None
    reasoning: tuple[Mapping[str, Any], ...] = ()


ModelEvent: TypeAlias = ModelText | ModelResponse
"""What `Model.stream` yields: text pieces, then one `ModelResponse`."""


@value_class
class ModelRequest:
    """One model call.

    Attributes:
        instructions: The system prompt.
        messages: The transcript so far, oldest first (JSON-shaped messages).
        tools: The `exec` and `wait` definitions in the model's `tool_style`.
    """

    instructions: str
    messages: Sequence[Mapping[str, Any]]
    tools: Sequence[Mapping[str, Any]]


@runtime_checkable
class Model(Protocol):
    """A model the agent loop can call.

    Attributes:
        name: The model's name, for traces and display.
        tool_style: The `tools` shape its API takes (`CodeMode.model_tools(style)`).
    """

    @property
    def name(self) -> str:
        """The model's name."""
        ...

    @property
    def tool_style(self) -> ModelToolStyle:
        """The `tools` shape of its API."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one model call: `ModelText` pieces, then exactly one `ModelResponse`.

        Raises:
            ModelError: The API call failed.
        """
        ...
