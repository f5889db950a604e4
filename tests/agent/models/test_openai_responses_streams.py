"""`OpenAIResponsesModel` against the strict fake Responses API: what real streams do.

Streams cut before `response.completed`, empty streams, error events, the output limit
(`response.incomplete` for `max_output_tokens`), reasoning items sent back, options the SDK
call cannot take, and non-streaming.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import openai
import pytest

import clawcell
from clawcell.agent import OpenAIResponsesModel, ReplyEvent
from tests.agent import _fake_responses as fake
from tests.agent._sessions import Outcome, assert_the_next_turn_works, session_on_wire
from tests.agent._wire import Answer, WireServer
from tests.conftest import run

CUT_MARKER = "\n\n[cut off: the answer reached the model's output limit]"
EXEC = '{"code": "return 6 * 7"}'
API = fake.ResponsesAPI()


def _model(server: WireServer, **options: Any) -> OpenAIResponsesModel:
    client = openai.AsyncOpenAI(api_key="test-key", base_url=f"{server.url}/v1", max_retries=0)
    return OpenAIResponsesModel("gpt-test", client=client, **options)


async def _session(
    answers: list[Answer], texts: list[str], *, api: fake.ResponsesAPI = API, **options: Any
) -> tuple[list[Outcome], list[dict[str, Any]], WireServer]:
    model_on = partial(_model, **options)
    return await session_on_wire(model_on, answers, texts, check=api.check)


def _half_call() -> Answer:
    """A function call whose arguments stop half way, and nothing after."""
    item = fake.function_call("call_1", "", status="in_progress")
    return fake.sse(
        [
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {
                "type": "response.function_call_arguments.delta",
                "item_id": "fc_call_1",
                "output_index": 0,
                "delta": EXEC[:9],
            },
        ]
    )


ERROR_EVENT = fake.sse(
    [{"type": "error", "code": "server_error", "message": "The server had an error", "param": None}]
)
LENGTH_CALL = API.stream(
    [fake.function_call("call_1", EXEC[:9], status="incomplete")],
    end="response.incomplete",
    reason="max_output_tokens",
)

FAULTS: dict[str, tuple[list[Answer], str]] = {
    "stream cut inside a function call": ([_half_call()], "model_error"),
    "stream cut inside the answer": (
        [API.stream([], text=["The answer "], end=None)],
        "model_error",
    ),
    "empty 200 stream": ([Answer(sse=("",))], "model_error"),
    "error event": ([ERROR_EVENT], "model_error"),
    "response.failed": ([API.stream([], end="response.failed")], "model_error"),
    "incomplete for content_filter": (
        [API.stream([], end="response.incomplete", reason="content_filter")],
        "model_error",
    ),
    "answer cut by max_output_tokens": (
        [
            API.stream(
                [fake.message("The answer is")],
                text=["The answer is"],
                end="response.incomplete",
                reason="max_output_tokens",
            )
        ],
        "reply",
    ),
    "function call cut by max_output_tokens": ([LENGTH_CALL, API.text("shorter")], "reply"),
    "HTTP 500": ([fake.refusal("The server had an error", status=500)], "model_error"),
    "malformed event": ([Answer(sse=["event: response.created\ndata: {nope\n\n"])], "model_error"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_session_survives_each_fault_and_the_next_turn_works(fault: str) -> None:
    answers, first = FAULTS[fault]
    outcomes, _, server = run(_session([*answers, API.text("recovered")], ["one", "two"]))
    assert_the_next_turn_works(outcomes, server, first)


def test_a_stream_cut_before_response_completed_is_a_model_error() -> None:
    (one,), transcript, _ = run(_session([_half_call()], ["hi"]))
    assert one.kinds() == ["turn_started", "error"]
    assert one.error is not None and one.error.message == (
        "the OpenAI Responses API answered model 'gpt-test' with a stream that ended, before "
        "`response.completed`: the connection was cut or the server stopped, so none of it "
        "was used; send the message again."
    )
    assert [m["role"] for m in transcript] == ["user"]


def test_an_empty_stream_is_a_model_error() -> None:
    (one,), _, _ = run(_session([Answer(sse=("",))], ["hi"]))
    assert isinstance(one.error, clawcell.ModelError)
    assert "with an empty stream (no events), before `response.completed`" in one.error.message


def test_an_error_event_keeps_its_code() -> None:
    (one,), _, _ = run(_session([ERROR_EVENT], ["hi"]))
    error = one.error
    assert isinstance(error, clawcell.ModelError)
    assert (error.status_code, error.error_type) == (200, "server_error")
    assert error.message == (
        "the OpenAI Responses API call for model 'gpt-test' ended with `error`: "
        "The server had an error."
    )


def test_an_answer_cut_by_max_output_tokens_is_delivered_with_a_marker() -> None:
    cut = API.stream(
        [fake.message("The answer is")],
        text=["The answer is"],
        end="response.incomplete",
        reason="max_output_tokens",
    )
    (one,), transcript, _ = run(_session([cut], ["hi"]))
    assert one.reply == "The answer is" + CUT_MARKER
    assert next(e for e in one.events if isinstance(e, ReplyEvent)).stop_reason == "length"
    assert transcript[-1]["stopReason"] == "length"


def test_a_function_call_cut_by_max_output_tokens_is_not_run_and_the_model_is_told() -> None:
    (one,), _, server = run(_session([LENGTH_CALL, API.text("shorter")], ["hi"]))
    assert "cell_started" not in one.kinds() and one.reply == "shorter"
    output = server.requests[1].body["input"][-1]
    assert (output["type"], output["call_id"]) == ("function_call_output", "call_1")
    assert output["output"].startswith("not run: your response reached its output limit")


def test_reasoning_items_with_encrypted_content_go_back_before_their_call() -> None:
    api = fake.ResponsesAPI()
    reasoning = api.reasoning("Multiply.")
    first = api.stream([reasoning, fake.function_call("call_1", EXEC)])
    outcomes, transcript, server = run(
        _session([first, api.text("42"), api.text("again")], ["6*7?", "more"], api=api)
    )
    assert [o.error for o in outcomes] == [None, None]
    assert server.refused == []
    sent = server.requests[1].body["input"][1:3]
    assert [i["type"] for i in sent] == ["reasoning", "function_call"]
    assert sent[0]["encrypted_content"] == "enc-1"
    thinking = transcript[1]["content"][0]
    assert (thinking["type"], thinking["thinking"]) == ("thinking", "Multiply.")
    assert json.loads(thinking["thinkingSignature"])["id"] == "rs_1"


def test_reasoning_items_without_encrypted_content_are_not_kept() -> None:
    bare: dict[str, Any] = {"type": "reasoning", "id": "rs_9", "summary": []}
    first = API.stream([bare, fake.function_call("call_1", EXEC)])
    (one,), transcript, server = run(_session([first, API.text("42")], ["hi"]))
    assert one.reply == "42" and server.refused == []
    assert [b["type"] for b in transcript[1]["content"]] == ["toolCall"]


def test_options_the_sdk_call_does_not_take_are_refused_when_the_model_is_built() -> None:
    client = openai.AsyncOpenAI(api_key="k")
    with pytest.raises(clawcell.ConfigurationError) as caught:
        OpenAIResponsesModel("gpt-test", client=client, max_tokens=5)
    assert caught.value.message.startswith(
        "`OpenAIResponsesModel` option 'max_tokens' is not a parameter of `responses.create` "
        "in the installed SDK (it takes "
    )
    with pytest.raises(clawcell.ConfigurationError, match="sets `input`"):
        OpenAIResponsesModel("gpt-test", client=client, input=[])


def test_stream_false_makes_one_plain_request_per_model_call() -> None:
    body = fake.response([fake.message("plain answer")])
    (one,), _, server = run(_session([Answer(body=body)], ["hi"], stream=False))
    assert one.reply == "plain answer"
    assert server.requests[0].body["stream"] is False
