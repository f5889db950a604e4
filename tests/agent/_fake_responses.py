"""A strict fake of the OpenAI Responses API, for `OpenAIResponsesModel` through the SDK.

Events are validated by the SDK's own `ResponseStreamEvent` type (whole answers by
`Response`) before they are sent. Requests are checked for what the real API refuses, with
its 400 shape: a `function_call_output` without its `function_call`, a `function_call`
without its output, and a reasoning item this API did not give out (with `encrypted_content`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import pydantic
from openai.types.responses import Response, ResponseStreamEvent

from tests.agent._fake_chat import refusal
from tests.agent._wire import Answer, Request, named_events

__all__ = ["ResponsesAPI", "function_call", "message", "refusal", "response", "sse"]

_EVENTS: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ResponseStreamEvent)


def response(
    output: list[dict[str, Any]], *, status: str = "completed", reason: str | None = None
) -> dict[str, Any]:
    """A `Response` object as the API sends it."""
    body: dict[str, Any] = {
        "id": "resp_fake",
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": status,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "incomplete_details": {"reason": reason} if reason else None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    Response.model_validate(body)
    return body


def message(text: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "output_text", "text": text, "annotations": []}]
    return {
        "type": "message",
        "id": "msg_fake",
        "role": "assistant",
        "status": "completed",
        "content": content,
    }


def function_call(call_id: str, arguments: str, status: str = "completed") -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": "exec",
        "arguments": arguments,
        "status": status,
    }


def sse(events: list[dict[str, Any]]) -> Answer:
    """An SSE answer of `events`, numbered and each validated by the SDK's event type."""
    for number, event in enumerate(events):
        event["sequence_number"] = number
        _EVENTS.validate_python(event)
    return Answer(sse=named_events(events))


class ResponsesAPI:
    """Scripted answers and the request checks of one fake Responses API."""

    def __init__(self) -> None:
        self._numbers = itertools.count(1)
        self.encrypted: set[str] = set()
        """The `encrypted_content` of every reasoning item this API gave out."""

    def reasoning(self, summary: str) -> dict[str, Any]:
        number = next(self._numbers)
        self.encrypted.add(f"enc-{number}")
        return {
            "type": "reasoning",
            "id": f"rs_{number}",
            "encrypted_content": f"enc-{number}",
            "summary": [{"type": "summary_text", "text": summary}],
        }

    def stream(
        self,
        items: Iterable[dict[str, Any]],
        *,
        text: Iterable[str] = (),
        end: str | None = "response.completed",
        reason: str | None = None,
    ) -> Answer:
        """Text deltas, then each item's `output_item.done`, then the `end` event."""
        items = list(items)
        events: list[dict[str, Any]] = [
            {
                "type": "response.output_text.delta",
                "item_id": "msg_fake",
                "output_index": 0,
                "content_index": 0,
                "delta": piece,
                "logprobs": [],
                "sequence_number": 0,
            }
            for piece in text
        ]
        events += [
            {
                "type": "response.output_item.done",
                "output_index": n,
                "item": item,
                "sequence_number": 0,
            }
            for n, item in enumerate(items)
        ]
        if end is not None:
            status = "completed" if end == "response.completed" else end.split(".")[1]
            body = response(items, status=status, reason=reason)
            events.append({"type": end, "response": body, "sequence_number": 0})
        return sse(events)

    def text(self, text: str) -> Answer:
        return self.stream([message(text)], text=[text])

    def check(self, request: Request) -> Answer | None:
        """The real API's 400 for what it refuses, else `None`."""
        items: list[dict[str, Any]] = request.body["input"]
        calls = {i["call_id"] for i in items if i.get("type") == "function_call"}
        outputs = {i["call_id"] for i in items if i.get("type") == "function_call_output"}
        for item in items:
            kind = item.get("type")
            if kind == "function_call_output" and item["call_id"] not in calls:
                return refusal(
                    f"No tool call found for function call output with call_id {item['call_id']}.",
                    "input",
                )
            if kind == "function_call" and item["call_id"] not in outputs:
                return refusal(
                    f"No tool output found for function call {item['call_id']}.", "input"
                )
            if kind == "reasoning" and item.get("encrypted_content") not in self.encrypted:
                return refusal(
                    f"Item with id '{item.get('id')}' not found. Items are not persisted when "
                    "`store` is set to false. Try again with `store` set to true, or remove "
                    "this item from your input.",
                    "input",
                )
        return None
