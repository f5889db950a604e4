"""`AnthropicModel` against the strict fake Messages API: what real streams do.

Whitespace-only text, signed thinking, streams cut before `message_stop`, empty streams,
in-stream errors, the output limit, options the SDK call cannot take, and non-streaming.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import anthropic
import pytest

import clawcell
from clawcell.agent import AnthropicModel, CellFinished, ReplyEvent, TextDelta
from tests.agent import _fake_messages as fake
from tests.agent._sessions import Outcome, assert_the_next_turn_works, session_on_wire
from tests.agent._wire import Answer, WireServer
from tests.conftest import run

CUT_MARKER = "\n\n[cut off: the answer reached the model's output limit]"
EXEC = ['{"code": "retu', 'rn 6 * 7"}']


def text(*pieces: str, stop: str = "end_turn") -> Answer:
    return fake.stream([fake.start(), *fake.text_block(0, *pieces), *fake.end(stop)])


def tool_use(*blocks: list[dict[str, Any]], stop: str = "tool_use") -> Answer:
    """A message of the given content blocks, ending with `stop`."""
    return fake.stream([fake.start(), *(e for b in blocks for e in b), *fake.end(stop)])


def _model(server: WireServer, max_retries: int = 0, **options: Any) -> AnthropicModel:
    client = anthropic.AsyncAnthropic(
        api_key="test-key", base_url=server.url, max_retries=max_retries
    )
    return AnthropicModel("claude-test", client=client, max_tokens=1024, **options)


async def _session(
    answers: list[Answer],
    texts: list[str],
    *,
    api: fake.MessagesAPI | None = None,
    max_retries: int = 0,
    **options: Any,
) -> tuple[list[Outcome], list[dict[str, Any]], WireServer]:
    api = api or fake.MessagesAPI()
    model_on = partial(_model, max_retries=max_retries, **options)
    return await session_on_wire(model_on, answers, texts, check=api.check)


def _cut(answer: Answer, keep: int) -> Answer:
    return Answer(sse=answer.sse[:keep])


EMPTY = Answer(sse=("",))
OVERLOADED = Answer(
    sse=[
        *fake.named_events([fake.start()]),
        fake.error_event("overloaded_error", "Overloaded"),
    ]
)

FAULTS: dict[str, tuple[list[Answer], str]] = {
    "whitespace text before tool_use": (
        [tool_use(fake.text_block(0, "\n\n"), fake.tool_block(1, "toolu_1", EXEC)), text("42")],
        "reply",
    ),
    "whitespace-only final answer": ([text("\n\n")], "reply"),
    "stream cut inside a tool_use": (
        [_cut(tool_use(fake.tool_block(0, "toolu_1", EXEC)), 4)],
        "model_error",
    ),
    "stream cut inside the answer": ([_cut(text("The answer ", "is 42."), 4)], "model_error"),
    "empty 200 stream": ([EMPTY], "model_error"),
    "overloaded inside the stream": ([OVERLOADED], "model_error"),
    "answer cut by max_tokens": ([text("The answer is", stop="max_tokens")], "reply"),
    "tool_use cut by max_tokens": (
        [
            tool_use(fake.tool_block(0, "toolu_1", EXEC[:1], stop=False), stop="max_tokens"),
            text("shorter now"),
        ],
        "reply",
    ),
    "HTTP 529 overloaded": ([fake.refusal("Overloaded", "overloaded_error", 529)], "model_error"),
    "malformed event": ([Answer(sse=["event: message_start\ndata: {oops\n\n"])], "model_error"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_session_survives_each_fault_and_the_next_turn_works(fault: str) -> None:
    answers, first = FAULTS[fault]
    outcomes, _, server = run(_session([*answers, text("recovered")], ["first", "second"]))
    assert_the_next_turn_works(outcomes, server, first)


def test_whitespace_only_text_is_not_sent_back() -> None:
    answers = [
        tool_use(fake.text_block(0, "\n\n"), fake.tool_block(1, "toolu_1", EXEC)),
        text(" \n"),
    ]
    _, transcript, server = run(_session([*answers, text("ok")], ["one", "two"]))
    assert [m["role"] for m in server.requests[2].body["messages"]] == ["user", "assistant", "user"]
    assistant, results = server.requests[1].body["messages"][1:]
    assert [b["type"] for b in assistant["content"]] == ["tool_use"]
    # the stored transcript keeps what the model wrote
    assert transcript[1]["content"][0] == {"type": "text", "text": "\n\n"}
    assert results["content"][0]["tool_use_id"] == "toolu_1"


def test_the_fake_refuses_whitespace_text_as_the_real_api_does() -> None:
    async def main() -> Any:
        async with WireServer([], check=fake.MessagesAPI().check) as server:
            client = anthropic.AsyncAnthropic(api_key="k", base_url=server.url, max_retries=0)
            messages: Any = [{"role": "user", "content": [{"type": "text", "text": "\n\n"}]}]
            await client.messages.create(model="m", max_tokens=5, messages=messages)

    with pytest.raises(anthropic.BadRequestError, match="non-whitespace text"):
        run(main())


def test_signed_thinking_goes_back_first_and_a_cell_turn_finishes() -> None:
    api = fake.MessagesAPI()
    first = tool_use(
        api.thinking_block(0, "Multiply."),
        api.redacted_block(1),
        fake.text_block(2, "\n\n"),
        fake.tool_block(3, "toolu_1", EXEC),
    )
    thinking = {"type": "enabled", "budget_tokens": 1024}
    outcomes, transcript, server = run(
        _session(
            [first, text("It is 42."), text("again")], ["6*7?", "more"], api=api, thinking=thinking
        )
    )
    assert [o.error for o in outcomes] == [None, None]
    assert outcomes[0].reply == "It is 42."
    assert server.refused == []
    sent = server.requests[1].body["messages"][1]["content"]
    assert [b["type"] for b in sent] == ["thinking", "redacted_thinking", "tool_use"]
    assert sent[0] == {"type": "thinking", "thinking": "Multiply.", "signature": "sig-1"}
    assert sent[1] == {"type": "redacted_thinking", "data": "redacted-2"}
    stored = transcript[1]["content"][:2]
    assert stored == [
        {"type": "thinking", "thinking": "Multiply.", "thinkingSignature": "sig-1"},
        {"type": "thinking", "thinking": "", "thinkingSignature": "redacted-2", "redacted": True},
    ]


def test_without_its_thinking_block_the_fake_refuses_the_cell_result() -> None:
    api = fake.MessagesAPI()
    request: dict[str, Any] = {
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "exec", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
        ],
    }
    refused = api.check(_request(request))
    assert refused is not None
    assert refused.body["error"]["message"].startswith(
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        "`tool_use`."
    )


def _request(body: dict[str, Any]) -> Any:
    from tests.agent._wire import Request

    return Request(method="POST", path="/v1/messages", headers={}, body=body)


def test_a_stream_cut_inside_a_tool_use_is_a_model_error_and_no_cell_runs() -> None:
    cut = _cut(tool_use(fake.text_block(0, "Let me."), fake.tool_block(1, "toolu_1", EXEC)), 7)
    outcomes, transcript, _ = run(_session([cut], ["6*7?"]))
    (one,) = outcomes
    assert one.kinds() == ["turn_started", "text_delta", "error"]
    assert one.error is not None and one.error.message == (
        "the Anthropic Messages API answered model 'claude-test' with a stream that ended "
        "before its `message_stop` event: the connection was cut or the server stopped, so "
        "none of it was used; send the message again."
    )
    assert [m["role"] for m in transcript] == ["user"]


def test_an_empty_stream_is_a_model_error() -> None:
    (one,), _, _ = run(_session([EMPTY], ["hi"]))
    assert isinstance(one.error, clawcell.ModelError)
    assert "with an empty stream (no events)" in one.error.message


def test_an_overload_inside_the_stream_keeps_its_type_and_is_retried_with_backoff(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    delays: list[float] = []

    async def pause(seconds: float) -> None:
        delays.append(seconds)

    monkeypatch.setattr("clawcell.agent._models._sdk_call.pause", pause)
    (one,), _, server = run(_session([OVERLOADED, OVERLOADED, text("fine")], ["hi"], max_retries=2))
    assert one.error is None and one.reply == "fine"
    assert len(server.requests) == 3
    assert 0.375 <= delays[0] <= 0.5 and 0.75 <= delays[1] <= 1.0


def test_an_overload_inside_the_stream_past_the_retries_is_a_typed_model_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def pause(seconds: float) -> None:
        pass

    monkeypatch.setattr("clawcell.agent._models._sdk_call.pause", pause)
    (one,), _, server = run(_session([OVERLOADED, OVERLOADED], ["hi"], max_retries=1))
    error = one.error
    assert isinstance(error, clawcell.ModelError)
    assert (error.status_code, error.error_type) == (200, "overloaded_error")
    assert error.message == (
        "the Anthropic Messages API answered with an error inside its stream for model "
        "'claude-test': Overloaded (`overloaded_error`)"
    )
    assert len(server.requests) == 2


def test_an_overload_after_text_was_streamed_is_not_retried() -> None:
    late = Answer(
        sse=[
            *fake.named_events([fake.start(), *fake.text_block(0, "Half")]),
            fake.error_event("overloaded_error", "Overloaded"),
        ]
    )
    (one,), _, server = run(_session([late, text("never")], ["hi"], max_retries=2))
    assert one.error is not None and one.error.code == "model_error"
    assert len(server.requests) == 1


def test_an_answer_cut_by_max_tokens_is_delivered_with_a_marker_and_stop_reason_length() -> None:
    (one,), transcript, _ = run(_session([text("The answer is", stop="max_tokens")], ["hi"]))
    assert one.reply == "The answer is" + CUT_MARKER
    assert [e.text for e in one.events if isinstance(e, TextDelta)][-1] == CUT_MARKER
    reply = next(e for e in one.events if isinstance(e, ReplyEvent))
    assert reply.stop_reason == "length"
    assert reply.to_dict()["stopReason"] == "length"
    assert transcript[-1]["stopReason"] == "length"


def test_a_tool_use_cut_by_max_tokens_is_not_run_and_the_model_is_told() -> None:
    cut = tool_use(fake.tool_block(0, "toolu_1", EXEC[:1], stop=False), stop="max_tokens")
    (one,), transcript, server = run(_session([cut, text("shorter")], ["hi"]))
    assert "cell_started" not in one.kinds() and one.reply == "shorter"
    assert not any(isinstance(e, CellFinished) for e in one.events)
    (result,) = server.requests[1].body["messages"][-1]["content"]
    assert result["is_error"] is True
    assert result["content"].startswith("not run: your response reached its output limit")
    assert transcript[1]["stopReason"] == "length"


def test_options_the_sdk_call_does_not_take_are_refused_when_the_model_is_built() -> None:
    client = anthropic.AsyncAnthropic(api_key="k")
    with pytest.raises(clawcell.ConfigurationError) as caught:
        AnthropicModel("claude-test", client=client, temperature=0.2)
    assert caught.value.message.startswith(
        "`AnthropicModel` option 'temperature' is not a parameter of `messages.stream` in the "
        "installed SDK (it takes "
    )
    with pytest.raises(clawcell.ConfigurationError, match=r"sets `system` of `messages\.stream`"):
        AnthropicModel("claude-test", client=client, system="x")
    with pytest.raises(clawcell.ConfigurationError, match=r"`stream=False` makes"):
        AnthropicModel("claude-test", client=client, stream="no")
    with pytest.raises(clawcell.ConfigurationError, match="pass `timeout=`"):
        AnthropicModel("claude-test", client=client, stream=False, max_tokens=64000)


def test_stream_false_makes_one_plain_request_per_model_call() -> None:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": "plain"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    (one,), _, server = run(_session([Answer(body=message)], ["hi"], stream=False))
    assert one.reply == "plain"
    assert "stream" not in server.requests[0].body
    assert json.loads(json.dumps(server.requests[0].body))["max_tokens"] == 1024
