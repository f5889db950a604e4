"""`AnthropicModel`: the Messages API through the official `anthropic` SDK, streamed.

Transcript → Messages: user text stays a user message; an assistant message's `toolCall`
blocks become `tool_use` blocks; consecutive `toolResult` messages become one user message of
`tool_result` blocks (with `is_error`). Canvas blocks are for people and are not sent back.
Needs `pip install 'clawcell[anthropic]'`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from .._lazy import install_hint
from ..errors import ConfigurationError, ModelError
from ._api_errors import api_message
from ._model import ModelEvent, ModelRequest, ModelResponse, ModelText, ToolCall
from ._transcript import message_text, tool_calls_of

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicModel", "anthropic_sdk", "to_anthropic_messages"]


def anthropic_sdk() -> Any:
    """The `anthropic` module, or a `ConfigurationError` naming the extra to install."""
    try:
        import anthropic
    except ImportError as exc:
        raise ConfigurationError(
            f"`AnthropicModel` needs the Anthropic SDK: {install_hint('anthropic')}."
        ) from exc
    return anthropic


class AnthropicModel:
    """A Claude model over the Anthropic Messages API (streaming, `tool_use`/`tool_result`).

    Args:
        model: The model name, such as `"claude-sonnet-4-5"`.
        client: An `anthropic.AsyncAnthropic`; by default one built from the environment
            (`ANTHROPIC_API_KEY`). Its own retries (429 with `retry-after`, 5xx) apply.
        max_tokens: The `max_tokens` of each call.
        options: More `messages.create` parameters (`temperature`, `thinking`, ...).
    """

    tool_style: Literal["anthropic"] = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        max_tokens: int = 8192,
        **options: Any,
    ) -> None:
        sdk = anthropic_sdk()
        self._client: Any = client if client is not None else sdk.AsyncAnthropic()
        self._sdk = sdk
        self._model = model
        self._max_tokens = max_tokens
        self._options = options

    @property
    def name(self) -> str:
        """The model name."""
        return self._model

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """One streamed Messages API call; see `Model.stream`."""
        params: dict[str, Any] = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "messages": to_anthropic_messages(request.messages),
            "tools": list(request.tools),
            **self._options,
        }
        if request.instructions:
            params["system"] = request.instructions
        try:
            async with self._client.messages.stream(**params) as stream:
                async for event in stream:
                    if event.type == "text" and event.text:
                        yield ModelText(text=event.text)
                message = await stream.get_final_message()
        except self._sdk.APIStatusError as exc:
            raise ModelError(
                f"the Anthropic Messages API answered HTTP {exc.status_code} for model "
                f"{self._model!r}: {api_message(exc)}",
                status_code=exc.status_code,
            ) from exc
        except (self._sdk.APIError, ValueError) as exc:
            raise ModelError(
                f"the Anthropic Messages API call for model {self._model!r} failed: {exc}"
            ) from exc
        yield _response(message)


def _response(message: Any) -> ModelResponse:
    text = "".join(block.text for block in message.content if block.type == "text")
    calls = tuple(
        ToolCall(id=block.id, name=block.name, arguments=cast(Mapping[str, Any], block.input))
        for block in message.content
        if block.type == "tool_use"
    )
    usage = message.usage
    return ModelResponse(
        text=text,
        tool_calls=calls,
        input_tokens=usage.input_tokens if usage is not None else None,
        output_tokens=usage.output_tokens if usage is not None else None,
        stop_reason=message.stop_reason,
    )


def to_anthropic_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The transcript as Messages API `messages`."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            block = {
                "type": "tool_result",
                "tool_use_id": message["toolCallId"],
                "content": message_text(message),
                "is_error": bool(message.get("isError")),
            }
            if out and out[-1]["role"] == "user" and out[-1].get("_results"):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block], "_results": True})
        elif role in ("user", "assistant"):
            content = _content(message)
            if content:
                out.append({"role": role, "content": content})
    return [{k: v for k, v in m.items() if k != "_results"} for m in out]


def _content(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    text = message_text(message)
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content.extend(
        {
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": call.arguments if isinstance(call.arguments, Mapping) else {},
        }
        for call in tool_calls_of(message)
    )
    return content
