"""`OpenAIChatModel` against the strict fake Chat Completions API: what real streams do.

Streams cut before their `finish_reason`, empty streams, an error inside the stream, the
output limit (`finish_reason: "length"`), options the SDK call cannot take, non-streaming.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import openai
import pytest

import clawcell
from clawcell.agent import OpenAIChatModel, ReplyEvent, TextDelta
from tests.agent import _fake_chat as fake
from tests.agent._sessions import Outcome, assert_the_next_turn_works, session_on_wire
from tests.agent._wire import Answer, WireServer
from tests.conftest import run

CUT_MARKER = "\n\n[cut off: the answer reached the model's output limit]"
EXEC = fake.arguments("return 6 * 7")


def tool_call(
    pieces: list[str] = EXEC, *, finish: str | None = "tool_calls", done: bool = True
) -> Answer:
    end = [fake.chunk({}, finish), fake.usage()] if finish else []
    return fake.stream([*fake.call_chunks("call_1", pieces), *end], done=done)


def _model(server: WireServer, **options: Any) -> OpenAIChatModel:
    client = openai.AsyncOpenAI(api_key="test-key", base_url=f"{server.url}/v1", max_retries=0)
    return OpenAIChatModel("gpt-test", client=client, **options)


async def _session(
    answers: list[Answer], texts: list[str], **options: Any
) -> tuple[list[Outcome], list[dict[str, Any]], WireServer]:
    model_on = partial(_model, **options)
    return await session_on_wire(model_on, answers, texts, check=fake.check)


IN_STREAM_ERROR = Answer(
    sse=[
        *fake.data_events([fake.chunk({"content": "Hel"})])[:-1],
        'data: {"error": {"message": "The server had an error", "type": "server_error"}}\n\n',
    ]
)

FAULTS: dict[str, tuple[list[Answer], str]] = {
    "stream cut inside a tool call": (
        [tool_call(EXEC[:2], finish=None, done=False)],
        "model_error",
    ),
    "stream cut inside the answer": (
        [fake.stream([fake.chunk({"content": "The answer "})], done=False)],
        "model_error",
    ),
    "[DONE] without a finish_reason": (
        [fake.stream([fake.chunk({"content": "The answer "})])],
        "model_error",
    ),
    "empty 200 stream": ([Answer(sse=("",))], "model_error"),
    "only [DONE]": ([fake.stream([])], "model_error"),
    "error inside the stream": ([IN_STREAM_ERROR], "model_error"),
    "answer cut by length": ([fake.text("The answer is", finish="length")], "reply"),
    "tool call cut by length": (
        [tool_call(EXEC[:2], finish="length"), fake.text("shorter now")],
        "reply",
    ),
    "whitespace-only answer": ([fake.text("\n\n")], "reply"),
    "HTTP 500": ([fake.refusal("The server had an error", status=500)], "model_error"),
    "malformed chunk": ([Answer(sse=["data: {not json\n\n"])], "model_error"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_session_survives_each_fault_and_the_next_turn_works(fault: str) -> None:
    answers, first = FAULTS[fault]
    outcomes, _, server = run(_session([*answers, fake.text("recovered")], ["one", "two"]))
    assert_the_next_turn_works(outcomes, server, first)


def test_a_stream_cut_before_its_finish_reason_is_a_model_error_and_no_cell_runs() -> None:
    (one,), transcript, _ = run(_session([tool_call(EXEC[:2], finish=None, done=False)], ["hi"]))
    assert one.kinds() == ["turn_started", "error"]
    assert one.error is not None and one.error.message == (
        "the OpenAI Chat Completions API answered model 'gpt-test' with a stream that ended, "
        "without a `finish_reason`: the connection was cut or the server stopped, so none of "
        "it was used; send the message again."
    )
    assert [m["role"] for m in transcript] == ["user"]


def test_an_empty_stream_is_a_model_error() -> None:
    (one,), _, _ = run(_session([Answer(sse=("",))], ["hi"]))
    assert isinstance(one.error, clawcell.ModelError)
    assert "with an empty stream (no chunks), without a `finish_reason`" in one.error.message


def test_an_error_inside_the_stream_keeps_its_type() -> None:
    (one,), _, _ = run(_session([IN_STREAM_ERROR], ["hi"]))
    error = one.error
    assert isinstance(error, clawcell.ModelError)
    assert error.error_type == "server_error"
    assert error.message == (
        "the OpenAI Chat Completions API call for model 'gpt-test' failed: The server had an error"
    )


def test_an_answer_cut_by_length_is_delivered_with_a_marker_and_stop_reason_length() -> None:
    (one,), transcript, _ = run(_session([fake.text("The answer is", finish="length")], ["hi"]))
    assert one.reply == "The answer is" + CUT_MARKER
    assert [e.text for e in one.events if isinstance(e, TextDelta)][-1] == CUT_MARKER
    assert next(e for e in one.events if isinstance(e, ReplyEvent)).stop_reason == "length"
    assert transcript[-1]["stopReason"] == "length"


def test_a_tool_call_cut_by_length_is_not_run_and_the_model_is_told() -> None:
    answers = [tool_call(EXEC[:2], finish="length"), fake.text("shorter")]
    (one,), transcript, server = run(_session(answers, ["hi"]))
    assert "cell_started" not in one.kinds() and one.reply == "shorter"
    tool = server.requests[1].body["messages"][-1]
    assert (tool["role"], tool["tool_call_id"]) == ("tool", "call_1")
    assert tool["content"].startswith("not run: your response reached its output limit")
    assert transcript[1]["stopReason"] == "length"
    assert transcript[2]["isError"] is True


def test_stop_reasons_are_stored_in_the_transcripts_words() -> None:
    answers = [tool_call(), fake.text("42")]
    _, transcript, _ = run(_session(answers, ["hi"]))
    assert [m.get("stopReason") for m in transcript] == [None, "toolUse", None, "stop"]


def test_options_the_sdk_call_does_not_take_are_refused_when_the_model_is_built() -> None:
    client = openai.AsyncOpenAI(api_key="k")
    with pytest.raises(clawcell.ConfigurationError) as caught:
        OpenAIChatModel("gpt-test", client=client, max_output_tokens=5)
    assert caught.value.message.startswith(
        "`OpenAIChatModel` option 'max_output_tokens' is not a parameter of "
        "`chat.completions.create` in the installed SDK (it takes "
    )
    with pytest.raises(clawcell.ConfigurationError, match="sets `stream_options`"):
        OpenAIChatModel("gpt-test", client=client, stream_options={})
    OpenAIChatModel("gpt-test", client=client, temperature=0.2, max_completion_tokens=64)


def test_stream_false_makes_one_plain_request_per_model_call() -> None:
    (one,), transcript, server = run(_session([fake.whole("plain answer")], ["hi"], stream=False))
    assert one.reply == "plain answer"
    assert "stream" not in server.requests[0].body
    assert "stream_options" not in server.requests[0].body
    assert transcript[-1]["usage"] == {"input": 3, "output": 1}


def test_stream_false_runs_a_tool_call_from_a_whole_completion() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "exec", "arguments": json.dumps({"code": "return 6 * 7"})},
    }
    whole = fake.whole(None, finish="tool_calls")
    whole.body["choices"][0]["message"]["tool_calls"] = [call]
    (one,), _, server = run(_session([whole, fake.whole("42")], ["hi"], stream=False))
    assert one.reply == "42" and "cell_started" in one.kinds()
    assert json.loads(server.requests[1].body["messages"][-1]["content"])["value"] == 42
