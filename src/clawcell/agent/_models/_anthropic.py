"""`AnthropicModel`: the Messages API through the official `anthropic` SDK, streamed.

Transcript → Messages: user text stays a user message; an assistant message's `thinking`
blocks go first (signed, as the API requires before a `tool_use` when thinking is on), then
its text, then its `toolCall` blocks as `tool_use` blocks; consecutive `toolResult` messages
become one user message of `tool_result` blocks (with `is_error`). Whitespace-only text is
left out (the API refuses it, and Claude does write `"\\n\\n"` before a `tool_use`), and
messages of one role in a row are joined. Canvas blocks are for people and are not sent back.

A stream counts only when it reached `message_stop`: one cut before it (or an empty one) is
a `ModelError`, so a half `tool_use` is never run. An `overloaded_error` inside the stream is
retried, with the SDK's backoff and the client's `max_retries`, while none of the answer was
streamed out yet. Needs `pip install 'clawcell[anthropic]'`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from ..._lazy import install_hint
from ...errors import ConfigurationError, ModelError
from .._attachments import Attachment, attachments_of, file_part_text
from .._model import ModelEvent, ModelRequest, ModelResponse, ModelText, ToolCall
from .._transcript import message_text, thinking_of, tool_calls_of
from . import _sdk_call
from ._api_errors import api_error_type, api_message
from ._sdk_call import checked_options, retry_delay, streaming

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicModel", "anthropic_sdk", "to_anthropic_messages"]

_RESERVED = ("model", "messages", "tools", "system")
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "toolUse",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
_NON_STREAMING_TOKENS = 21_333
"""The SDK refuses a non-streaming call with more `max_tokens` unless given a `timeout`."""


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
            (`ANTHROPIC_API_KEY`). Its own retries (429 with `retry-after`, 5xx) apply, and
            its `max_retries` also bounds the retries of an overload inside a stream.
        max_tokens: The `max_tokens` of each call.
        stream: `False` makes one non-streaming `messages.create` call per model call.
        options: More `messages.stream` (or, with `stream=False`, `messages.create`)
            parameters, such as `thinking={"type": "enabled", "budget_tokens": 2048}`; each is
            checked against the installed SDK when the model is built.

    Raises:
        ConfigurationError: An option the SDK call does not take, or one the adapter sets.
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
        self._streaming = streaming("AnthropicModel", options)
        call = "messages.stream" if self._streaming else "messages.create"
        self._options = checked_options(
            "AnthropicModel", self._client, call, options, reserved=_RESERVED
        )
        if not self._streaming and max_tokens > _NON_STREAMING_TOKENS and "timeout" not in options:
            raise ConfigurationError(
                f"`AnthropicModel(stream=False, max_tokens={max_tokens!r})`: the SDK refuses "
                f"non-streaming calls above {_NON_STREAMING_TOKENS} `max_tokens` without a "
                "`timeout=`; pass `timeout=` (seconds), lower `max_tokens`, or stream."
            )

    @property
    def name(self) -> str:
        """The model name."""
        return self._model

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """One Messages API call; see `Model.stream`."""
        params: dict[str, Any] = {
            "model": self._model,
            "max_tokens": self._max_tokens,
            "messages": to_anthropic_messages(request.messages, model=self._model),
            "tools": list(request.tools),
            **self._options,
        }
        if request.instructions:
            params["system"] = request.instructions
        retries_done = 0
        while True:
            streamed = False
            try:
                async for event in self._call(params):
                    streamed = streamed or isinstance(event, ModelText)
                    yield event
                return
            except ModelError as exc:
                if streamed or not self._retry(exc, retries_done):
                    raise
            await _sdk_call.pause(retry_delay(retries_done))
            retries_done += 1

    def _retry(self, exc: ModelError, retries_done: int) -> bool:
        """Whether to retry an overload the SDK could not: one inside a started stream."""
        in_stream = exc.status_code == 200 and exc.error_type == "overloaded_error"
        return in_stream and retries_done < int(getattr(self._client, "max_retries", 0))

    async def _call(self, params: dict[str, Any]) -> AsyncIterator[ModelEvent]:
        try:
            if self._streaming:
                async for event in self._streamed(params):
                    yield event
                return
            message = await self._client.messages.create(**params)
        except self._sdk.APIStatusError as exc:
            status, kind = int(exc.status_code), api_error_type(exc)
            where = "with an error inside its stream" if status == 200 else f"HTTP {status}"
            raise ModelError(
                f"the Anthropic Messages API answered {where} for model {self._model!r}: "
                f"{api_message(exc)}{f' (`{kind}`)' if kind else ''}",
                status_code=status,
                error_type=kind,
            ) from exc
        except (self._sdk.APIError, ValueError) as exc:
            raise ModelError(
                f"the Anthropic Messages API call for model {self._model!r} failed: {exc}"
            ) from exc
        response = _response(message)
        if response.text:
            yield ModelText(text=response.text)
        yield response

    async def _streamed(self, params: dict[str, Any]) -> AsyncIterator[ModelEvent]:
        events, stopped = 0, False
        async with self._client.messages.stream(**params) as stream:
            async for event in stream:
                events += 1
                if event.type == "text" and event.text:
                    yield ModelText(text=event.text)
                stopped = stopped or event.type == "message_stop"
            if not stopped:
                raise ModelError(self._cut(events))
            message = await stream.get_final_message()
        yield _response(message)

    def _cut(self, events: int) -> str:
        what = (
            "an empty stream (no events)"
            if events == 0
            else "a stream that ended before its `message_stop` event"
        )
        return (
            f"the Anthropic Messages API answered model {self._model!r} with {what}: the "
            "connection was cut or the server stopped, so none of it was used; send the "
            "message again."
        )


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
        stop_reason=_STOP_REASONS.get(message.stop_reason, message.stop_reason),
        reasoning=tuple(_thinking(block) for block in message.content if _is_thinking(block)),
    )


def _is_thinking(block: Any) -> bool:
    return block.type in ("thinking", "redacted_thinking")


def _thinking(block: Any) -> dict[str, Any]:
    """A `thinking`/`redacted_thinking` block as a transcript `thinking` block."""
    if block.type == "redacted_thinking":
        return {"type": "thinking", "thinking": "", "thinkingSignature": block.data,
                "redacted": True}  # fmt: skip
    return {"type": "thinking", "thinking": block.thinking, "thinkingSignature": block.signature}


def to_anthropic_messages(
    messages: Sequence[Mapping[str, Any]], *, model: str | None = None
) -> list[dict[str, Any]]:
    """The transcript as Messages API `messages`.

    Args:
        messages: The stored transcript.
        model: The model the request is for: `thinking` blocks another model signed are
            left out (their signatures would not verify). `None` keeps them all.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            role, content = "user", [_tool_result(message)]
        elif role in ("user", "assistant"):
            content = _content(message, model)
        else:
            continue
        if not content:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(content)
        else:
            out.append({"role": role, "content": content})
    return out


def _tool_result(message: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": message["toolCallId"],
        "content": message_text(message),
        "is_error": bool(message.get("isError")),
    }


def _content(message: Mapping[str, Any], model: str | None) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if model is None or message.get("model") == model:
        content.extend(_signed(block) for block in thinking_of(message))
    if message.get("role") == "user":  # files first: Anthropic advises images before text
        content.extend(_attachment_block(a) for a in attachments_of(message))
    text = message_text(message)
    if text.strip():
        content.append({"type": "text", "text": text})
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


def _attachment_block(attachment: Attachment) -> dict[str, Any]:
    """An image as a base64 `image` block; a text file as a `text` block."""
    if attachment.kind == "image":
        source = {"type": "base64", "media_type": attachment.media_type,
                  "data": attachment.base64}  # fmt: skip
        return {"type": "image", "source": source}
    return {"type": "text", "text": file_part_text(attachment)}


def _signed(block: Mapping[str, Any]) -> dict[str, Any]:
    signature = str(block.get("thinkingSignature", ""))
    if block.get("redacted"):
        return {"type": "redacted_thinking", "data": signature}
    return {"type": "thinking", "thinking": str(block.get("thinking", "")), "signature": signature}
