"""A strict fake of OpenAI Chat Completions, for `OpenAIChatModel` through the real SDK.

Chunks are validated by the SDK's own `ChatCompletionChunk` (and whole answers by
`ChatCompletion`) before they are sent. Requests are checked for what the real API refuses,
with its 400 shape: a `tool` message that answers no preceding `tool_calls`, and an assistant
message whose `tool_calls` are not all answered right after it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from openai.types.chat import ChatCompletion, ChatCompletionChunk

from tests.agent._wire import Answer, Request, data_events


def refusal(message: str, param: str | None = None, status: int = 400) -> Answer:
    """An API error answer in OpenAI's shape."""
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    return Answer(status=status, body={"error": error})


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def usage(prompt: int = 10, completion: int = 5) -> dict[str, Any]:
    return {
        **chunk({}),
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def call_chunks(call_id: str, arguments: Sequence[str], name: str = "exec") -> list[dict[str, Any]]:
    """A tool call at index 0: its id and name, then its arguments in pieces."""
    head = {"index": 0, "id": call_id, "type": "function", "function": {"name": name}}
    pieces = [{"index": 0, "function": {"arguments": piece}} for piece in arguments]
    return [chunk({"tool_calls": [piece]}) for piece in [head, *pieces]]


def stream(chunks: Iterable[dict[str, Any]], *, done: bool = True) -> Answer:
    """An SSE answer of `chunks` (each validated by the SDK's type), then `[DONE]`."""
    chunks = list(chunks)
    for each in chunks:
        ChatCompletionChunk.model_validate(each)
    blocks = data_events(chunks)
    return Answer(sse=blocks if done else blocks[:-1])


def text(*pieces: str, finish: str = "stop") -> Answer:
    return stream([*(chunk({"content": p}) for p in pieces), chunk({}, finish), usage()])


def whole(content: str | None, finish: str = "stop") -> Answer:
    """A non-streamed `ChatCompletion`."""
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "logprobs": None,
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }
    ChatCompletion.model_validate(body)
    return Answer(body=body)


def check(request: Request) -> Answer | None:
    """The real API's 400 for what it refuses, else `None`."""
    messages: list[dict[str, Any]] = request.body["messages"]
    for index, message in enumerate(messages):
        if message["role"] == "tool" and not _answers_a_call(messages, index):
            return refusal(
                "Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'.",
                f"messages.[{index}].role",
            )
        calls = [c["id"] for c in message.get("tool_calls") or ()]
        answered = {m.get("tool_call_id") for m in _tool_messages_after(messages, index)}
        missing = [c for c in calls if c not in answered]
        if missing:
            return refusal(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(missing)}",
                "messages",
            )
    return None


def _tool_messages_after(messages: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    following: list[dict[str, Any]] = []
    for message in messages[index + 1 :]:
        if message["role"] != "tool":
            break
        following.append(message)
    return following


def _answers_a_call(messages: list[dict[str, Any]], index: int) -> bool:
    position = index - 1
    while position >= 0 and messages[position]["role"] == "tool":
        position -= 1
    calls = messages[position].get("tool_calls") or () if position >= 0 else ()
    return messages[index]["tool_call_id"] in {c["id"] for c in calls}


def arguments(code: str) -> list[str]:
    """`{"code": code}` as JSON in three pieces."""
    text = json.dumps({"code": code})
    third = len(text) // 3
    return [text[:third], text[third : 2 * third], text[2 * third :]]
