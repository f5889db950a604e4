"""`OpenAIChatModel` with the real `openai` SDK against a loopback Chat Completions server."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import openai
import pytest

import clawcell
from clawcell.agent import Agent, CellFinished, OpenAIChatModel, ReplyEvent, TurnFinished
from tests.agent import _fake_chat as fake
from tests.agent._helpers import collect, last_of, types
from tests.agent._sessions import turn_on_wire
from tests.agent._wire import Answer, WireServer, error_answer
from tests.conftest import run

_chunk = fake.chunk
_usage = fake.usage


def tool_call_stream(
    code: str = "return 6 * 7", text: tuple[str, ...] = ("Let me ", "compute.")
) -> Answer:
    """Text, then an `exec` call whose id, name and arguments arrive in separate chunks."""
    arguments = json.dumps({"code": code})
    third = len(arguments) // 3

    def call(piece: dict[str, Any]) -> dict[str, Any]:
        return _chunk({"tool_calls": [{"index": 0, **piece}]})

    return fake.stream(
        [
            _chunk({"role": "assistant", "content": ""}),
            *(_chunk({"content": piece}) for piece in text),
            call({"id": "call_1", "type": "function", "function": {"name": "ex"}}),
            call({"function": {"name": "ec", "arguments": arguments[:third]}}),
            call({"function": {"arguments": arguments[third : 2 * third]}}),
            call({"function": {"arguments": arguments[2 * third :]}}),
            _chunk({}, finish="tool_calls"),
            _usage(25, 30),
        ]
    )


def text_stream(*pieces: str) -> Answer:
    return fake.stream(
        [*(_chunk({"content": piece}) for piece in pieces), _chunk({}, "stop"), _usage(60, 5)]
    )


def _model(server: WireServer, max_retries: int = 0) -> OpenAIChatModel:
    client = openai.AsyncOpenAI(
        api_key="test-key", base_url=f"{server.url}/v1", max_retries=max_retries
    )
    return OpenAIChatModel("gpt-test", client=client)


async def _turn(answers: list[Answer], *, max_retries: int = 0) -> tuple[list[Any], WireServer]:
    model_on = partial(_model, max_retries=max_retries)
    return await turn_on_wire(model_on, answers, check=fake.check)


def test_a_streamed_tool_call_split_across_chunks_runs_a_cell_and_the_answer_streams() -> None:
    events, server = run(_turn([tool_call_stream(), text_stream("The answer ", "is 42.")]))
    assert types(events)[:4] == ["turn_started", "text_delta", "text_delta", "cell_started"]
    assert last_of(events, CellFinished).envelope["value"] == 42
    assert last_of(events, ReplyEvent).payloads[0]["text"] == "The answer is 42."
    usage = last_of(events, TurnFinished).usage
    assert (usage.input_tokens, usage.output_tokens, usage.model_turns) == (85, 35, 2)
    first, second = (request.body for request in server.requests)
    assert server.requests[0].path == "/v1/chat/completions"
    assert first["stream"] is True
    assert first["stream_options"] == {"include_usage": True}
    assert first["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 6 * 7?"},
    ]
    assert [tool["function"]["name"] for tool in first["tools"]] == ["exec", "wait"]
    assistant, tool = second["messages"][2:]
    assert assistant == {
        "role": "assistant",
        "content": "Let me compute.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "exec", "arguments": '{"code": "return 6 * 7"}'},
            }
        ],
    }
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == "call_1"
    assert json.loads(tool["content"])["value"] == 42


def test_a_429_with_retry_after_is_retried_by_the_sdk() -> None:
    throttled = error_answer(429, "slow down", **{"retry-after": "0.01"})
    events, server = run(_turn([throttled, text_stream("fine")], max_retries=2))
    assert len(server.requests) == 2
    assert last_of(events, ReplyEvent).payloads[0]["text"] == "fine"


def test_a_500_is_a_model_error_event_then_a_model_error() -> None:
    with pytest.raises(clawcell.ModelError) as caught:
        run(_turn([error_answer(500, "the server broke")]))
    assert caught.value.status_code == 500
    assert caught.value.message == (
        "the OpenAI Chat Completions API answered HTTP 500 for model 'gpt-test': the server broke"
    )


def test_a_malformed_chunk_is_a_model_error_and_the_session_goes_on() -> None:
    broken = Answer(sse=["data: {not json\n\n"])

    async def main() -> tuple[list[str], list[Any]]:
        async with WireServer([broken, text_stream("recovered")]) as server:
            agent = Agent(model=_model(server))
            async with agent:
                seen: list[str] = []
                with pytest.raises(clawcell.ModelError, match="Chat Completions API call"):
                    async for event in agent.run("s", "hi"):
                        seen.append(event.type)
                return seen, await collect(agent, "s", "again")

    seen, after = run(main())
    assert seen == ["turn_started", "error"]
    assert last_of(after, ReplyEvent).payloads[0]["text"] == "recovered"


def test_arguments_that_are_not_json_go_back_to_the_model_as_the_rejection() -> None:
    bad = fake.stream([*fake.call_chunks("call_9", ["return 1"]), _chunk({}, finish="tool_calls")])
    events, server = run(_turn([bad, text_stream("oops")]))
    assert last_of(events, CellFinished).error == (
        'exec arguments must be a JSON object such as {"code": "return 1"}, got str.'
    )
    tool = server.requests[1].body["messages"][-1]
    assert tool["content"] == last_of(events, CellFinished).error
    assert server.requests[1].body["messages"][-2]["tool_calls"][0]["function"]["arguments"] == (
        "return 1"
    )


def test_the_client_base_url_reaches_an_openai_compatible_server() -> None:
    async def main() -> str:
        async with WireServer([text_stream("local model here")]) as server:
            client = openai.AsyncOpenAI(api_key="unused", base_url=f"{server.url}/v1")
            model = OpenAIChatModel("llama-3.1-8b-instruct", client=client)
            async with Agent(model=model) as agent:
                events = await collect(agent, "s", "who are you?")
            assert server.requests[0].body["model"] == "llama-3.1-8b-instruct"
            return last_of(events, ReplyEvent).payloads[0]["text"]

    assert run(main()) == "local model here"
