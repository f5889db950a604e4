"""`OpenAIResponsesModel`: the Responses API through the official `openai` SDK, streamed.

Transcript → input items: user and assistant text become messages, `toolCall` blocks become
`function_call` items and `toolResult` messages `function_call_output` items, joined by
`call_id`. The whole transcript is sent each time (no `previous_response_id`), so a session
works the same after a restart. Function calls are read from `response.output_item.done`
events (their arguments stream in pieces before that); usage from `response.completed`.
Needs `pip install 'clawcell[openai]'`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ModelError
from ._model import ModelEvent, ModelRequest, ModelResponse, ModelText, ToolCall
from ._openai_chat import model_error, openai_sdk, parse_arguments
from ._transcript import arguments_json, message_text, tool_calls_of

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIResponsesModel", "to_responses_input"]

_FAILED = ("response.failed", "response.incomplete", "error")


class OpenAIResponsesModel:
    """A model over the OpenAI Responses API (`function_call`/`function_call_output`).

    Args:
        model: The model name, such as `"gpt-5.1"`.
        client: An `openai.AsyncOpenAI`; by default one built from the environment.
        options: More `responses.create` parameters (`reasoning`, `store`, ...).
    """

    tool_style: Literal["openai-responses"] = "openai-responses"

    def __init__(self, model: str, *, client: openai.AsyncOpenAI | None = None, **options: Any):
        self._sdk = openai_sdk("OpenAIResponsesModel")
        self._client: Any = client if client is not None else self._sdk.AsyncOpenAI()
        self._model = model
        self._options = options

    @property
    def name(self) -> str:
        """The model name."""
        return self._model

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """One streamed Responses API call; see `Model.stream`."""
        params: dict[str, Any] = {
            "model": self._model,
            "input": to_responses_input(request.messages),
            "tools": list(request.tools),
            "stream": True,
            **self._options,
        }
        if request.instructions:
            params["instructions"] = request.instructions
        collected = _Collected()
        try:
            stream = await self._client.responses.create(**params)
            async for event in stream:
                text = collected.add(event)
                if text:
                    yield ModelText(text=text)
        except (self._sdk.APIError, ValueError) as exc:
            raise model_error(self._sdk, "Responses", self._model, exc) from exc
        if collected.failure is not None:
            raise ModelError(
                f"the OpenAI Responses API call for model {self._model!r} ended with "
                f"{collected.failure}."
            )
        yield collected.response()


class _Collected:
    """What one streamed response said: text, finished function calls, usage, status."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.usage: Any = None
        self.status: str | None = None
        self.failure: str | None = None

    def add(self, event: Any) -> str:
        kind = getattr(event, "type", None)
        if kind == "response.output_text.delta":
            self.text.append(event.delta)
            return str(event.delta)
        if kind == "response.output_item.done" and event.item.type == "function_call":
            item = event.item
            arguments = parse_arguments(item.arguments or "")
            self.calls.append(ToolCall(id=item.call_id, name=item.name, arguments=arguments))
        elif kind == "response.completed":
            self.usage = event.response.usage
            self.status = event.response.status
        elif kind in _FAILED:
            self.failure = _failure(event)
        return ""

    def response(self) -> ModelResponse:
        usage = self.usage
        return ModelResponse(
            text="".join(self.text),
            tool_calls=tuple(self.calls),
            input_tokens=usage.input_tokens if usage is not None else None,
            output_tokens=usage.output_tokens if usage is not None else None,
            stop_reason=self.status,
        )


def _failure(event: Any) -> str:
    response = getattr(event, "response", None)
    error = getattr(response, "error", None) if response is not None else event
    message = getattr(error, "message", None)
    return f"`{event.type}`: {message}" if message else f"`{event.type}`"


def to_responses_input(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The transcript as Responses API `input` items."""
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message["toolCallId"],
                    "output": message_text(message),
                }
            )
            continue
        if role not in ("user", "assistant"):
            continue
        text = message_text(message)
        if text:
            items.append({"role": role, "content": text})
        items.extend(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": arguments_json(call.arguments),
            }
            for call in tool_calls_of(message)
        )
    return items
