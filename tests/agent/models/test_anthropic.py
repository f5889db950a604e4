"""`AnthropicModel` with the real `anthropic` SDK against a loopback Messages API server."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import anthropic
import pytest

import clawcell
from clawcell.agent import AnthropicModel, CellFinished, ReplyEvent, TurnFinished
from tests.agent import _fake_messages as fake
from tests.agent._helpers import last_of, types
from tests.agent._sessions import turn_on_wire
from tests.agent._wire import Answer, WireServer, error_answer
from tests.conftest import run


def tool_use_stream() -> Answer:
    """Text, then a `tool_use` block whose input JSON arrives in three pieces."""
    pieces = ['{"code": "retu', "rn 6 ", '* 7"}']
    return fake.stream(
        [
            fake.start(25),
            *fake.text_block(0, "Let me ", "compute."),
            *fake.tool_block(1, "toolu_1", pieces),
            *fake.end("tool_use", 30),
        ]
    )


def text_stream(*pieces: str) -> Answer:
    return fake.stream([fake.start(60), *fake.text_block(0, *pieces), *fake.end("end_turn", 5)])


def _model(server: WireServer, max_retries: int = 0) -> AnthropicModel:
    client = anthropic.AsyncAnthropic(
        api_key="test-key", base_url=server.url, max_retries=max_retries
    )
    return AnthropicModel("claude-test", client=client, max_tokens=1024)


async def _turn(answers: list[Answer], *, max_retries: int = 0) -> tuple[list[Any], WireServer]:
    model_on = partial(_model, max_retries=max_retries)
    return await turn_on_wire(model_on, answers, check=fake.MessagesAPI().check)


def test_a_streamed_tool_use_runs_a_cell_and_the_tool_result_goes_back() -> None:
    events, server = run(_turn([tool_use_stream(), text_stream("The answer ", "is 42.")]))
    assert types(events)[:4] == ["turn_started", "text_delta", "text_delta", "cell_started"]
    assert last_of(events, CellFinished).envelope["value"] == 42
    assert last_of(events, ReplyEvent).payloads[0]["text"] == "The answer is 42."
    usage = last_of(events, TurnFinished).usage
    assert (usage.input_tokens, usage.output_tokens) == (85, 35)
    first, second = (request.body for request in server.requests)
    assert server.requests[0].path == "/v1/messages"
    assert (first["system"], first["max_tokens"], first["stream"]) == ("Be brief.", 1024, True)
    assert [tool["name"] for tool in first["tools"]] == ["exec", "wait"]
    assert "input_schema" in first["tools"][0]
    assistant, results = second["messages"][1:]
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me compute."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "exec",
                "input": {"code": "return 6 * 7"},
            },
        ],
    }
    (result,) = results["content"]
    assert (results["role"], result["type"], result["tool_use_id"]) == (
        "user",
        "tool_result",
        "toolu_1",
    )
    assert result["is_error"] is False
    assert json.loads(result["content"])["value"] == 42


def test_a_429_with_retry_after_is_retried_by_the_sdk() -> None:
    throttled = error_answer(429, "rate limited", **{"retry-after": "0.01"})
    events, server = run(_turn([throttled, text_stream("fine")], max_retries=2))
    assert len(server.requests) == 2
    assert last_of(events, ReplyEvent).payloads[0]["text"] == "fine"


def test_a_500_is_a_model_error_with_the_api_message() -> None:
    with pytest.raises(clawcell.ModelError) as caught:
        run(_turn([error_answer(500, "overloaded here")]))
    assert caught.value.status_code == 500
    assert caught.value.message == (
        "the Anthropic Messages API answered HTTP 500 for model 'claude-test': overloaded here "
        "(`api_error`)"
    )


def test_a_malformed_event_is_a_model_error() -> None:
    broken = Answer(sse=["event: message_start\ndata: {oops\n\n"])
    with pytest.raises(clawcell.ModelError, match="the Anthropic Messages API call"):
        run(_turn([broken]))


def test_consecutive_tool_results_share_one_user_message() -> None:
    two_calls = fake.stream(
        [
            fake.start(10),
            *fake.tool_block(0, "a", ['{"code": "return 1"}']),
            *fake.tool_block(1, "b", ['{"runId": "cm_x"}'], name="wait"),
            *fake.end("tool_use", 9),
        ]
    )
    _, server = run(_turn([two_calls, text_stream("done")]))
    results = server.requests[1].body["messages"][-1]["content"]
    assert [(r["tool_use_id"], r["is_error"]) for r in results] == [("a", False), ("b", True)]
    assert results[1]["content"] == "code mode run is unavailable or expired."
