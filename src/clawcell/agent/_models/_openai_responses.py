"""`OpenAIResponsesModel`: the Responses API through the official `openai` SDK, streamed.

Transcript → input items: user and assistant text become messages, `toolCall` blocks become
`function_call` items and `toolResult` messages `function_call_output` items, joined by
`call_id`. The whole transcript is sent each time (no `previous_response_id`), so a session
works the same after a restart. Function calls are read from `response.output_item.done`
events (their arguments stream in pieces before that); usage from `response.completed`.

A stream counts only when it reached `response.completed` (or `response.incomplete` for the
output limit, which is a cut answer: `stop_reason` `length`); one that ended before (or an
empty one) is a `ModelError`. Reasoning items that carry `encrypted_content` (ask for it with
`include=["reasoning.encrypted_content"]`) are kept as `thinking` blocks and sent back before
the calls they led to. Needs `pip install 'clawcell[openai]'`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from ...errors import ModelError
from .._attachments import Attachment, attachments_of, file_part_text
from .._model import ModelEvent, ModelRequest, ModelResponse, ModelText, ToolCall
from .._transcript import arguments_json, message_text, thinking_of, tool_calls_of
from ._openai_chat import OpenAICall, model_error, parse_arguments

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIResponsesModel", "to_responses_input"]

_FAILED = ("response.failed", "error")
_RESERVED = ("model", "input", "tools", "instructions")


class OpenAIResponsesModel:
    """A model over the OpenAI Responses API (`function_call`/`function_call_output`).

    Args:
        model: The model name, such as `"gpt-5.1"`.
        client: An `openai.AsyncOpenAI`; by default one built from the environment.
        stream: `False` makes one non-streaming request per model call.
        options: More `responses.create` parameters (`reasoning`, `store`, `include`,
            ...), each checked against the installed SDK when the model is built.

    Raises:
        ConfigurationError: An option the SDK call does not take, or one the adapter sets.
    """

    tool_style: Literal["openai-responses"] = "openai-responses"

    def __init__(self, model: str, *, client: openai.AsyncOpenAI | None = None, **options: Any):
        call = OpenAICall.build(
            "OpenAIResponsesModel", client, "responses.create", options, reserved=_RESERVED
        )
        self._sdk, self._client, self._model = call.sdk, call.client, model
        self._streaming, self._options = call.streaming, call.options

    @property
    def name(self) -> str:
        """The model name."""
        return self._model

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """One Responses API call; see `Model.stream`."""
        params: dict[str, Any] = {
            "model": self._model,
            "input": to_responses_input(request.messages, model=self._model),
            "tools": list(request.tools),
            "stream": self._streaming,
            **self._options,
        }
        if request.instructions:
            params["instructions"] = request.instructions
        collected = _Collected()
        try:
            answer = await self._client.responses.create(**params)
            if not self._streaming:
                collected.add_whole(answer)
            else:
                async for event in answer:
                    text = collected.add(event)
                    if text:
                        yield ModelText(text=text)
        except (self._sdk.APIError, ValueError) as exc:
            raise model_error(self._sdk, "Responses", self._model, exc) from exc
        if collected.failure is not None:
            raise ModelError(
                f"the OpenAI Responses API call for model {self._model!r} ended with "
                f"{collected.failure}.",
                status_code=200,
                error_type=collected.failure_type,
            )
        if collected.stop is None:
            raise ModelError(
                f"the OpenAI Responses API answered model {self._model!r} with "
                f"{collected.what_came()}, before `response.completed`: the connection was "
                "cut or the server stopped, so none of it was used; send the message again."
            )
        if not self._streaming and collected.text:
            yield ModelText(text="".join(collected.text))
        yield collected.response()


class _Collected:
    """What one response said: text, finished items, usage, and how it ended."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.reasoning: list[dict[str, Any]] = []
        self.usage: Any = None
        self.stop: str | None = None
        """`stop`/`toolUse`/`length` once the response ended; `None` until then."""
        self.failure: str | None = None
        self.failure_type: str | None = None
        """The error's `code` (`server_error`, ...), when it gave one."""
        self.events = 0

    def what_came(self) -> str:
        if self.events == 0:
            return "an empty stream (no events)"
        return "a stream that ended"

    def add(self, event: Any) -> str:
        self.events += 1
        kind = getattr(event, "type", None)
        if kind == "response.output_text.delta":
            self.text.append(event.delta)
            return str(event.delta)
        if kind == "response.output_item.done":
            self._item(event.item)
        elif kind in ("response.completed", "response.incomplete"):
            self._end(event.response)
        elif kind in _FAILED:
            self.failure, self.failure_type = _failure(event)
        return ""

    def add_whole(self, response: Any) -> None:
        """A non-streamed `Response`: its output items, then its end."""
        self.events += 1
        for item in response.output or ():
            self._item(item)
            if item.type == "message":
                self.text.extend(c.text for c in item.content if c.type == "output_text")
        if response.status == "failed":
            self.failure = f"status `failed`: {getattr(response.error, 'message', None)}"
            self.failure_type = getattr(response.error, "code", None)
        else:
            self._end(response)

    def _item(self, item: Any) -> None:
        if item.type == "function_call":
            arguments = parse_arguments(item.arguments or "")
            self.calls.append(ToolCall(id=item.call_id, name=item.name, arguments=arguments))
        elif item.type == "reasoning" and getattr(item, "encrypted_content", None):
            self.reasoning.append(_thinking(item))

    def _end(self, response: Any) -> None:
        self.usage = response.usage
        if response.status == "completed":
            self.stop = "toolUse" if self.calls else "stop"
            return
        details = getattr(response, "incomplete_details", None)
        reason = getattr(details, "reason", None)
        if reason == "max_output_tokens":
            self.stop = "length"
        else:
            self.failure = f"status `{response.status}` ({reason or 'no reason given'})"

    def response(self) -> ModelResponse:
        usage = self.usage
        return ModelResponse(
            text="".join(self.text),
            tool_calls=tuple(self.calls),
            input_tokens=usage.input_tokens if usage is not None else None,
            output_tokens=usage.output_tokens if usage is not None else None,
            stop_reason=self.stop,
            reasoning=tuple(self.reasoning),
        )


def _thinking(item: Any) -> dict[str, Any]:
    """A reasoning item as a transcript `thinking` block; the item itself is its signature."""
    summary = "\n\n".join(part.text for part in item.summary or ())
    fields = cast(dict[str, Any], item.model_dump(exclude_none=True, exclude={"status"}))
    return {"type": "thinking", "thinking": summary, "thinkingSignature": json.dumps(fields)}


def _failure(event: Any) -> tuple[str, str | None]:
    """A failure event as the error's words and its `code`."""
    response = getattr(event, "response", None)
    error = getattr(response, "error", None) if response is not None else event
    message, code = getattr(error, "message", None), getattr(error, "code", None)
    what = f"`{event.type}`: {message}" if message else f"`{event.type}`"
    return what, str(code) if code else None


def to_responses_input(
    messages: Sequence[Mapping[str, Any]], *, model: str | None = None
) -> list[dict[str, Any]]:
    """The transcript as Responses API `input` items.

    Args:
        messages: The stored transcript.
        model: The model the request is for: reasoning items of other models are left out.
            `None` keeps them all.
    """
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
        if model is None or message.get("model") == model:
            items.extend(_reasoning_items(message))
        text = message_text(message)
        attachments = attachments_of(message) if role == "user" else []
        if attachments:
            items.append({"role": role, "content": _input_parts(text, attachments)})
        elif text:
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


def _input_parts(text: str, attachments: list[Attachment]) -> list[dict[str, Any]]:
    """A user message with attachments as input parts: images as `input_image` (base64
    `data:` URLs), text files as `input_text`."""
    parts: list[dict[str, Any]] = [{"type": "input_text", "text": text}] if text else []
    for attachment in attachments:
        if attachment.kind == "image":
            url = f"data:{attachment.media_type};base64,{attachment.base64}"
            parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
        else:
            parts.append({"type": "input_text", "text": file_part_text(attachment)})
    return parts


def _reasoning_items(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The reasoning items kept in a message's `thinking` blocks (others are not ours)."""
    items: list[dict[str, Any]] = []
    for block in thinking_of(message):
        try:
            item = json.loads(str(block.get("thinkingSignature", "")))
        except ValueError:
            continue
        if isinstance(item, dict) and cast(dict[str, Any], item).get("type") == "reasoning":
            items.append(cast(dict[str, Any], item))
    return items
