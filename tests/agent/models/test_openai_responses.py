"""`OpenAIResponsesModel` with the real `openai` SDK against a loopback Responses server."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import openai
import pytest

import clawcell
from clawcell.agent import CellFinished, OpenAIResponsesModel, ReplyEvent, TurnFinished
from tests.agent import _fake_responses as fake
from tests.agent._helpers import last_of, types
from tests.agent._sessions import turn_on_wire
from tests.agent._wire import Answer, WireServer, error_answer
from tests.conftest import run


def _response(output: list[dict[str, Any]], usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": usage[0],
            "output_tokens": usage[1],
            "total_tokens": sum(usage),
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _message(text: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "output_text", "text": text, "annotations": []}]
    return {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": content}  # fmt: skip


def _text_deltas(pieces: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": piece,
            "logprobs": [],
            "sequence_number": n,
        }
        for n, piece in enumerate(pieces)
    ]


def _done(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index, "item": item,
            "sequence_number": 90 + index}  # fmt: skip


def function_call_stream() -> Answer:
    """Text, then an `exec` function call whose arguments stream in pieces."""
    arguments = '{"code": "return 6 * 7"}'
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec",
            "arguments": arguments, "status": "completed"}  # fmt: skip
    pieces = [arguments[:9], arguments[9:]]
    return fake.sse(
        [
            *_text_deltas(["Let me ", "compute."]),
            _done(0, _message("Let me compute.")),
            {
                "type": "response.output_item.added",
                "output_index": 1,
                "item": {**call, "arguments": "", "status": "in_progress"},
                "sequence_number": 10,
            },
            *(
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": "fc_1",
                    "output_index": 1,
                    "delta": piece,
                    "sequence_number": 11 + n,
                }
                for n, piece in enumerate(pieces)
            ),
            _done(1, call),
            {
                "type": "response.completed",
                "sequence_number": 99,
                "response": _response([_message("Let me compute."), call], (25, 30)),
            },
        ]
    )


def text_stream(*pieces: str) -> Answer:
    text = "".join(pieces)
    return fake.sse(
        [
            *_text_deltas(list(pieces)),
            _done(0, _message(text)),
            {
                "type": "response.completed",
                "sequence_number": 99,
                "response": _response([_message(text)], (60, 5)),
            },
        ]
    )


def _model(server: WireServer, max_retries: int = 0) -> OpenAIResponsesModel:
    client = openai.AsyncOpenAI(
        api_key="test-key", base_url=f"{server.url}/v1", max_retries=max_retries
    )
    return OpenAIResponsesModel("gpt-test", client=client)


async def _turn(answers: list[Answer], *, max_retries: int = 0) -> tuple[list[Any], WireServer]:
    model_on = partial(_model, max_retries=max_retries)
    return await turn_on_wire(model_on, answers, check=fake.ResponsesAPI().check)


def test_a_function_call_runs_a_cell_and_its_output_goes_back_by_call_id() -> None:
    events, server = run(_turn([function_call_stream(), text_stream("The answer ", "is 42.")]))
    assert types(events)[:4] == ["turn_started", "text_delta", "text_delta", "cell_started"]
    assert last_of(events, CellFinished).envelope["value"] == 42
    assert last_of(events, ReplyEvent).payloads[0]["text"] == "The answer is 42."
    usage = last_of(events, TurnFinished).usage
    assert (usage.input_tokens, usage.output_tokens) == (85, 35)
    first, second = (request.body for request in server.requests)
    assert server.requests[0].path == "/v1/responses"
    assert (first["instructions"], first["stream"]) == ("Be brief.", True)
    assert first["input"] == [{"role": "user", "content": "What is 6 * 7?"}]
    assert [(t["type"], t["name"], t["strict"]) for t in first["tools"]] == [
        ("function", "exec", False),
        ("function", "wait", True),
    ]
    text, call, output = second["input"][1:]
    assert text == {"role": "assistant", "content": "Let me compute."}
    assert call == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "exec",
        "arguments": '{"code": "return 6 * 7"}',
    }
    assert (output["type"], output["call_id"]) == ("function_call_output", "call_1")
    assert json.loads(output["output"])["value"] == 42


def test_a_429_with_retry_after_is_retried_by_the_sdk() -> None:
    throttled = error_answer(429, "slow down", **{"retry-after": "0.01"})
    events, server = run(_turn([throttled, text_stream("fine")], max_retries=2))
    assert len(server.requests) == 2
    assert last_of(events, ReplyEvent).payloads[0]["text"] == "fine"


def test_a_500_is_a_model_error_with_the_api_message() -> None:
    with pytest.raises(clawcell.ModelError) as caught:
        run(_turn([error_answer(500, "try later")]))
    assert caught.value.message == (
        "the OpenAI Responses API answered HTTP 500 for model 'gpt-test': try later"
    )


def test_a_failed_response_event_is_a_model_error() -> None:
    failed = {**_response([], (1, 0)), "status": "failed",
              "error": {"code": "server_error", "message": "it broke"}}  # fmt: skip
    answer = fake.sse([{"type": "response.failed", "response": failed}])
    with pytest.raises(clawcell.ModelError) as caught:
        run(_turn([answer]))
    assert caught.value.message == (
        "the OpenAI Responses API call for model 'gpt-test' ended with `response.failed`: it broke."
    )


def test_a_malformed_event_is_a_model_error() -> None:
    broken = Answer(sse=["event: response.output_text.delta\ndata: {nope\n\n"])
    with pytest.raises(clawcell.ModelError, match="the OpenAI Responses API call"):
        run(_turn([broken]))
