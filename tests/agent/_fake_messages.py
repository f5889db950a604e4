"""A strict fake of the Anthropic Messages API, for `AnthropicModel` through the real SDK.

Streams are built from events that the SDK's own `RawMessageStreamEvent` type validates, so
a fake event cannot drift from what the SDK parses. Requests are checked for what the real
API refuses, with its 400 shape and messages: whitespace-only text blocks, empty messages,
`tool_use` without its `tool_result` right after (and the reverse), and, with `thinking` on,
an assistant turn that answers tools without its signed thinking block first.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from typing import Any

import pydantic
from anthropic.types import RawMessageStreamEvent

from tests.agent._wire import Answer, Request, named_events

_EVENTS: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(RawMessageStreamEvent)

THINKING_MISSING = (
    "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`{found}`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
    "recommend you include thinking blocks from previous turns. To avoid this requirement, "
    "disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
WHITESPACE = "messages: text content blocks must contain non-whitespace text"


def refusal(message: str, kind: str = "invalid_request_error", status: int = 400) -> Answer:
    """An API error answer in the Messages API's shape."""
    body = {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"}
    return Answer(status=status, body=body, headers={"request-id": "req_fake"})


def stream(events: Iterable[dict[str, Any]]) -> Answer:
    """An SSE answer of `events`, each validated by the SDK's event type first."""
    events = list(events)
    for event in events:
        _EVENTS.validate_python(event)
    return Answer(sse=named_events(events))


def error_event(kind: str, message: str) -> str:
    """An `error` event inside a stream (the SDK raises it as a status error)."""
    data = {"type": "error", "error": {"type": kind, "message": message}}
    return f"event: error\ndata: {json.dumps(data)}\n\n"


def start(input_tokens: int = 10) -> dict[str, Any]:
    message: dict[str, Any] = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-test",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    return {"type": "message_start", "message": message}


def end(stop_reason: str = "end_turn", output_tokens: int = 5) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def block(
    index: int, content: dict[str, Any], deltas: Sequence[dict[str, Any]], *, stop: bool = True
) -> list[dict[str, Any]]:
    """One content block: its start, its deltas and (unless cut) its stop."""
    events = [{"type": "content_block_start", "index": index, "content_block": content}]
    events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
    return events + ([{"type": "content_block_stop", "index": index}] if stop else [])


def text_block(index: int, *pieces: str) -> list[dict[str, Any]]:
    return block(
        index, {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces]
    )


def tool_block(
    index: int, call_id: str, pieces: Sequence[str], *, stop: bool = True, name: str = "exec"
) -> list[dict[str, Any]]:
    content: dict[str, Any] = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
    return block(index, content, deltas, stop=stop)


class MessagesAPI:
    """Scripted answers and the request checks of one fake Messages API."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.signatures: set[str] = set()
        """Every thinking signature and redacted `data` this API gave out."""

    def thinking_block(self, index: int, text: str) -> list[dict[str, Any]]:
        signature = f"sig-{next(self._ids)}"
        self.signatures.add(signature)
        deltas = [
            {"type": "thinking_delta", "thinking": text},
            {"type": "signature_delta", "signature": signature},
        ]
        return block(index, {"type": "thinking", "thinking": "", "signature": ""}, deltas)

    def redacted_block(self, index: int) -> list[dict[str, Any]]:
        data = f"redacted-{next(self._ids)}"
        self.signatures.add(data)
        return block(index, {"type": "redacted_thinking", "data": data}, [])

    def check(self, request: Request) -> Answer | None:
        """The real API's 400 for what it refuses, else `None`."""
        body = request.body
        messages: list[dict[str, Any]] = body["messages"]
        for index, message in enumerate(messages):
            problem = self._problem(index, message, messages)
            if problem is not None:
                return refusal(problem)
        if body.get("thinking", {}).get("type") == "enabled":
            problem = self._thinking_problem(messages)
            return None if problem is None else refusal(problem)
        return None

    def _problem(
        self, index: int, message: dict[str, Any], messages: list[dict[str, Any]]
    ) -> str | None:
        content = message["content"]
        last = index == len(messages) - 1
        if not content and not (last and message["role"] == "assistant"):
            return (
                f"messages.{index}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        if isinstance(content, str):
            return WHITESPACE if not content.strip() else None
        for block in content:
            if block["type"] == "text" and not block["text"].strip():
                return WHITESPACE
            if block["type"] == "thinking" and block["signature"] not in self.signatures:
                return f"messages.{index}.content: Invalid `signature` in `thinking` block"
            if block["type"] == "redacted_thinking" and block["data"] not in self.signatures:
                return f"messages.{index}.content: Invalid `data` in `redacted_thinking` block"
        return _pairing_problem(index, messages)

    @staticmethod
    def _thinking_problem(messages: list[dict[str, Any]]) -> str | None:
        if len(messages) < 2 or not _ids(messages[-1], "tool_result", "tool_use_id"):
            return None
        index = len(messages) - 2
        first = messages[index]["content"][0]["type"]
        if first in ("thinking", "redacted_thinking"):
            return None
        return THINKING_MISSING.format(index=index, found=first)


def _ids(message: dict[str, Any], kind: str, key: str) -> list[str]:
    content = message["content"]
    return [] if isinstance(content, str) else [b[key] for b in content if b["type"] == kind]


def _pairing_problem(index: int, messages: list[dict[str, Any]]) -> str | None:
    message = messages[index]
    uses = _ids(message, "tool_use", "id")
    following = messages[index + 1] if index + 1 < len(messages) else None
    if uses and following is not None:
        missing = [i for i in uses if i not in _ids(following, "tool_result", "tool_use_id")]
        if missing:
            return (
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
    results = _ids(message, "tool_result", "tool_use_id")
    previous = _ids(messages[index - 1], "tool_use", "id") if index else []
    stray = [i for i in results if i not in previous]
    if stray:
        return (
            f"messages.{index}.content.0: unexpected `tool_use_id` found in `tool_result` "
            f"blocks: {stray[0]}. Each `tool_result` block must have a corresponding "
            "`tool_use` block in the previous message."
        )
    return None
