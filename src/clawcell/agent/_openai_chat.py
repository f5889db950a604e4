"""`OpenAIChatModel`: Chat Completions through the official `openai` SDK, streamed.

Works with any OpenAI-compatible server (vLLM, llama.cpp server, Ollama, LM Studio) through
the client's `base_url`. Tool calls arrive split across chunks (by `index`); their pieces are
joined here. Usage is asked for with `stream_options.include_usage` (a server that ignores it
just reports no tokens). Needs `pip install 'clawcell[openai]'`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from .._lazy import install_hint
from ..errors import ConfigurationError, ModelError
from ._api_errors import api_message
from ._model import ModelEvent, ModelRequest, ModelResponse, ModelText, ToolCall
from ._transcript import arguments_json, message_text, tool_calls_of

if TYPE_CHECKING:
    import openai

__all__ = [
    "OpenAIChatModel",
    "model_error",
    "openai_sdk",
    "parse_arguments",
    "to_chat_messages",
]


def openai_sdk(adapter: str) -> Any:
    """The `openai` module, or a `ConfigurationError` naming the extra to install."""
    try:
        import openai
    except ImportError as exc:
        raise ConfigurationError(
            f"`{adapter}` needs the OpenAI SDK: {install_hint('openai')}."
        ) from exc
    return openai


def model_error(sdk: Any, api: str, model: str, exc: Exception) -> ModelError:
    """An SDK or stream failure as a `ModelError`."""
    if isinstance(exc, sdk.APIStatusError):
        failed: Any = exc
        status, message = int(failed.status_code), api_message(failed)
        return ModelError(
            f"the OpenAI {api} API answered HTTP {status} for model {model!r}: {message}",
            status_code=status,
        )
    return ModelError(f"the OpenAI {api} API call for model {model!r} failed: {exc}")


class OpenAIChatModel:
    """A model over OpenAI Chat Completions (streaming, `tool_calls`/`tool` messages).

    Args:
        model: The model name, such as `"gpt-5.1"`, or the name an OpenAI-compatible server
            gives its model.
        client: An `openai.AsyncOpenAI` (pass `base_url=` for a compatible server); by
            default one built from the environment (`OPENAI_API_KEY`, `OPENAI_BASE_URL`).
        options: More `chat.completions.create` parameters (`temperature`, ...).
    """

    tool_style: Literal["openai-chat"] = "openai-chat"

    def __init__(self, model: str, *, client: openai.AsyncOpenAI | None = None, **options: Any):
        self._sdk = openai_sdk("OpenAIChatModel")
        self._client: Any = client if client is not None else self._sdk.AsyncOpenAI()
        self._model = model
        self._options = options

    @property
    def name(self) -> str:
        """The model name."""
        return self._model

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """One streamed Chat Completions call; see `Model.stream`."""
        messages = to_chat_messages(request.instructions, request.messages)
        accumulator = _Accumulator()
        try:
            stream = await self._client.chat.completions.create(
                model=self._model,
                messages=messages,
                tools=list(request.tools),
                stream=True,
                stream_options={"include_usage": True},
                **self._options,
            )
            async for chunk in stream:
                text = accumulator.add(chunk)
                if text:
                    yield ModelText(text=text)
        except (self._sdk.APIError, ValueError) as exc:
            raise model_error(self._sdk, "Chat Completions", self._model, exc) from exc
        yield accumulator.response()


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

    def add(self, chunk: Any) -> str:
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
            stop_reason=self.finish_reason,
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
            out.append({"role": "user", "content": message_text(message)})
        elif role == "assistant":
            out.append(_assistant(message))
    return out


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
