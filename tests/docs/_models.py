"""Loopback model APIs for the documentation's agent examples.

Each example talks to a vendor SDK that reads its address from the environment
(`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`), so the documentation can show the code a user
writes while the tests point it at a scripted `WireServer` on 127.0.0.1. Every script is the
same conversation: the model runs one cell that finds the unpaid shipment, then answers.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any

from tests.agent._wire import Answer, WireServer
from tests.agent.models.test_openai_chat import text_stream, tool_call_stream

CELL = "const rows = await list_shipments(); return rows.filter((r) => !r.paid).map((r) => r.id);"
ANSWER = "b-202 is unpaid."


def chat_stream() -> list[Answer]:
    """Chat Completions, streamed (clawcell's `OpenAIChatModel`)."""
    return [tool_call_stream(CELL, text=()), text_stream("b-202 is ", "unpaid.")]


def responses_json() -> list[Answer]:
    """The Responses API, one JSON body per answer (the OpenAI Agents SDK and pydantic-ai)."""
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec",
            "arguments": json.dumps({"code": CELL}), "status": "completed"}  # fmt: skip
    part: dict[str, Any] = {"type": "output_text", "text": ANSWER, "annotations": []}
    text = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [part]}  # fmt: skip
    return [Answer(body=_response(call)), Answer(body=_response(text))]


def messages_json() -> list[Answer]:
    """Anthropic Messages, one JSON body per answer (the SDK's tool runner)."""
    use = {"type": "tool_use", "id": "toolu_1", "name": "exec", "input": {"code": CELL}}
    return [
        _message([use], "tool_use"),
        _message([{"type": "text", "text": ANSWER}], "end_turn"),
    ]


def _response(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": "completed",
        "output": [item],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 1,
            "output_tokens": 1,
            "total_tokens": 2,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _message(content: list[dict[str, Any]], stop: str) -> Answer:
    return Answer(
        body={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": content,
            "model": "claude-test",
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )


@contextmanager
def serving(answers: list[Answer]) -> Generator[WireServer]:
    """`WireServer(answers)` on a loop of its own thread, so an example can `asyncio.run`."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="docs-model-server", daemon=True)
    thread.start()
    server = WireServer(answers)
    try:
        asyncio.run_coroutine_threadsafe(server.__aenter__(), loop).result(timeout=10)
        try:
            yield server
        finally:
            asyncio.run_coroutine_threadsafe(server.__aexit__(), loop).result(timeout=10)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
