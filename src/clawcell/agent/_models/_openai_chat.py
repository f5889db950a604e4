"""`OpenAIChatModel`: Chat Completions through the official `openai` SDK, streamed.

Works with any OpenAI-compatible server (vLLM, llama.cpp server, Ollama, LM Studio) through
the client's `base_url`. Tool calls arrive split across chunks (by `index`); their pieces are
joined here. Usage is asked for with `stream_options.include_usage` (a server that ignores it
just reports no tokens). A stream counts only when a choice came with its `finish_reason`:
one cut before it (or an empty one) is a `ModelError`, and its half tool call is never run.
`stream=False` makes plain requests, for servers that cannot stream tool calls.
Needs `pip install 'clawcell[openai]'`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal, cast

from ..._lazy import install_hint, value_class
from ...errors import ConfigurationError, ModelError
from .._attachments import attachments_of, file_part_text
from .._model import ModelEvent, ModelRequest, ModelResponse, ModelText, ToolCall
from .._transcript import arguments_json, message_text, tool_calls_of
from ._api_errors import api_error_type, api_message
from ._sdk_call import checked_options, streaming

if TYPE_CHECKING:
    import openai

__all__ = [
    "OpenAICall",
    "OpenAIChatModel",
    "model_error",
    "openai_sdk",
    "parse_arguments",
    "stop_reason",
    "to_chat_messages",
]

_RESERVED = ("model", "messages", "tools", "stream_options")
_STOP_REASONS = {"stop": "stop", "tool_calls": "toolUse", "function_call": "toolUse",
                 "length": "length"}  # fmt: skip


def stop_reason(finish_reason: str, calls: bool) -> str:
    """A Chat Completions `finish_reason` in the transcript's words (`stop`, `toolUse`,
    `length`); some compatible servers say `stop` after tool calls."""
    reason = _STOP_REASONS.get(finish_reason, finish_reason)
    return "toolUse" if calls and reason == "stop" else reason


def openai_sdk(adapter: str) -> Any:
    """The `openai` module, or a `ConfigurationError` naming the extra to install."""
    try:
        import openai
    except ImportError as exc:
        raise ConfigurationError(
            f"`{adapter}` needs the OpenAI SDK: {install_hint('openai')}."
        ) from exc
    return openai


@value_class
class OpenAICall:
    """What an OpenAI adapter fixes when it is built: the SDK module, its client, whether it
    streams, and its options checked against the SDK method it will call."""

    sdk: Any
    client: Any
    streaming: bool
    options: dict[str, Any]

    @classmethod
    def build(
        cls, adapter: str, client: Any, method: str, options: dict[str, Any], *,
        reserved: Sequence[str],
    ) -> OpenAICall:  # fmt: skip
        """Raises `ConfigurationError` for a missing SDK, a bad `stream=` or an option
        `method` does not take (or the adapter sets itself)."""
        sdk = openai_sdk(adapter)
        client = client if client is not None else sdk.AsyncOpenAI()
        stream = streaming(adapter, options)
        checked = checked_options(adapter, client, method, options, reserved=reserved)
        return cls(sdk=sdk, client=client, streaming=stream, options=checked)


def model_error(sdk: Any, api: str, model: str, exc: Exception) -> ModelError:
    """An SDK or stream failure as a `ModelError`."""
    kind = api_error_type(exc)
    if isinstance(exc, sdk.APIStatusError):
        failed: Any = exc
        status, message = int(failed.status_code), api_message(failed)
        return ModelError(
            f"the OpenAI {api} API answered HTTP {status} for model {model!r}: {message}",
            status_code=status,
            error_type=kind,
        )
    return ModelError(
        f"the OpenAI {api} API call for model {model!r} failed: {exc}", error_type=kind
    )


class OpenAIChatModel:
    """A model over OpenAI Chat Completions (streaming, `tool_calls`/`tool` messages).

    Args:
        model: The model name, such as `"gpt-5.1"`, or the name an OpenAI-compatible server
            gives its model.
        client: An `openai.AsyncOpenAI` (pass `base_url=` for a compatible server); by
            default one built from the environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`).
        stream: `False` makes one non-streaming request per model call.
        options: More `chat.completions.create` parameters (`temperature`, ...), each
            checked against the installed SDK when the model is built.

    Raises:
        ConfigurationError: An option the SDK call does not take, or one the adapter sets.
    """

    tool_style: Literal["openai-chat"] = "openai-chat"

    def __init__(self, model: str, *, client: openai.AsyncOpenAI | None = None, **options: Any):
        call = OpenAICall.build(
            "OpenAIChatModel", client, "chat.completions.create", options, reserved=_RESERVED
        )
        self._sdk, self._client, self._model = call.sdk, call.client, model
        self._streaming, self._options = call.streaming, call.options

    @property
    def name(self) -> str:
        """The model name."""
        return self._model

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """One Chat Completions call; see `Model.stream`."""
        params: dict[str, Any] = {
            "model": self._model,
            "messages": to_chat_messages(request.instructions, request.messages),
            "tools": list(request.tools),
            **self._options,
        }
        if self._streaming:
            params |= {"stream": True, "stream_options": {"include_usage": True}}
        accumulator = _Accumulator()
        try:
            answer = await self._client.chat.completions.create(**params)
            if not self._streaming:
                answer = (_as_chunk(answer),)
            async for chunk in _chunks(answer):
                text = accumulator.add(chunk)
                if text:
                    yield ModelText(text=text)
        except (self._sdk.APIError, ValueError) as exc:
            raise model_error(self._sdk, "Chat Completions", self._model, exc) from exc
        if accumulator.finish_reason is None:
            raise ModelError(
                f"the OpenAI Chat Completions API answered model {self._model!r} with "
                f"{accumulator.what_came()}, without a `finish_reason`: the connection was "
                "cut or the server stopped, so none of it was used; send the message again."
            )
        yield accumulator.response()


def _as_chunk(completion: Any) -> Any:
    """A non-streamed `ChatCompletion` as the one chunk that would carry all of it."""
    choices = [
        SimpleNamespace(
            finish_reason=choice.finish_reason,
            delta=SimpleNamespace(
                content=choice.message.content,
                tool_calls=[
                    SimpleNamespace(index=index, id=call.id, function=call.function)
                    for index, call in enumerate(choice.message.tool_calls or ())
                ],
            ),
        )
        for choice in completion.choices or ()
    ]
    return SimpleNamespace(usage=completion.usage, choices=choices)


async def _chunks(answer: Any) -> AsyncIterator[Any]:
    if isinstance(answer, tuple):
        for chunk in cast(tuple[Any, ...], answer):
            yield chunk
        return
    async for chunk in answer:
        yield chunk


class _Accumulator:
    """Joins streamed chunks: text pieces, tool-call pieces by index, usage, finish reason."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, list[str]]] = {}
        """Each call's `id`, `name` and `arguments` in streamed pieces (joined once at the end:
        growing one string per piece would copy it whole every time)."""
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.finish_reason: str | None = None
        self.chunks = 0

    def what_came(self) -> str:
        """What a stream without its end carried, for the error."""
        if self.chunks == 0:
            return "an empty stream (no chunks)"
        return "a stream that ended"

    def add(self, chunk: Any) -> str:
        self.chunks += 1
        if chunk.usage is not None:
            self.input_tokens = chunk.usage.prompt_tokens
            self.output_tokens = chunk.usage.completion_tokens
        text = ""
        for choice in chunk.choices or ():
            self.finish_reason = choice.finish_reason or self.finish_reason
            delta = choice.delta
            if delta is None:
                continue
            text += delta.content or ""
            for piece in delta.tool_calls or ():
                self._add_call(piece)
        self.text.append(text)
        return text

    def _add_call(self, piece: Any) -> None:
        call = self.calls.setdefault(piece.index, {"id": [], "name": [], "arguments": []})
        if piece.id:
            call["id"] = [piece.id]
        function = piece.function
        if function is not None:
            call["name"].append(function.name or "")
            call["arguments"].append(function.arguments or "")

    def response(self) -> ModelResponse:
        calls = tuple(
            ToolCall(
                id="".join(c["id"]),
                name="".join(c["name"]),
                arguments=parse_arguments("".join(c["arguments"])),
            )
            for _, c in sorted(self.calls.items())
        )
        return ModelResponse(
            text="".join(self.text),
            tool_calls=calls,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            stop_reason=stop_reason(self.finish_reason or "", bool(calls)),
        )


def parse_arguments(text: str) -> Mapping[str, Any] | str:
    """A call's JSON arguments as an object; the raw text when it is not one (the loop then
    answers the call with the exact rejection)."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # the loop answers the call with the rejection
        return text
    return cast(Mapping[str, Any], value) if isinstance(value, dict) else text


def to_chat_messages(
    instructions: str, messages: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The transcript as Chat Completions `messages` (a `system` message first)."""
    out: list[dict[str, Any]] = (
        [{"role": "system", "content": instructions}] if instructions else []
    )
    for message in messages:
        role = message.get("role")
        if role == "toolResult":
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message["toolCallId"],
                    "content": message_text(message),
                }
            )
        elif role == "user":
            out.append({"role": "user", "content": _user_content(message)})
        elif role == "assistant":
            out.append(_assistant(message))
    return out


def _user_content(message: Mapping[str, Any]) -> str | list[dict[str, Any]]:
    """A user message's text, or its content parts when it has attachments: images as
    `image_url` parts (base64 `data:` URLs), text files as `text` parts."""
    attachments = attachments_of(message)
    text = message_text(message)
    if not attachments:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for attachment in attachments:
        if attachment.kind == "image":
            url = f"data:{attachment.media_type};base64,{attachment.base64}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            parts.append({"type": "text", "text": file_part_text(attachment)})
    return parts


def _assistant(message: Mapping[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"role": "assistant", "content": message_text(message) or None}
    calls = tool_calls_of(message)
    if calls:
        entry["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments_json(call.arguments)},
            }
            for call in calls
        ]
    elif entry["content"] is None:
        entry["content"] = ""
    return entry
