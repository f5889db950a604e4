"""Every adapter, cut at every point of a stream: before its terminal event the call is a
`ModelError` and yields no `ModelResponse` (so no half tool call can run); from it on, the
call yields exactly one response with the whole tool call.
"""

from __future__ import annotations

from collections.abc import Callable

import anthropic
import openai
import pytest

from clawcell import ModelError
from clawcell.agent import (
    AnthropicModel,
    Model,
    ModelRequest,
    ModelResponse,
    OpenAIChatModel,
    OpenAIResponsesModel,
)
from tests.agent import _fake_chat as chat
from tests.agent import _fake_messages as messages
from tests.agent import _fake_responses as responses
from tests.agent._wire import Answer, WireServer
from tests.conftest import run

EXEC = '{"code": "return 6 * 7"}'
REQUEST = ModelRequest(
    instructions="",
    messages=({"role": "user", "content": [{"type": "text", "text": "hi"}]},),
    tools=(),
)


def _messages_stream() -> tuple[Answer, int]:
    pieces = [EXEC[:9], EXEC[9:]]
    answer = messages.stream(
        [
            messages.start(),
            *messages.text_block(0, "Let me."),
            *messages.tool_block(1, "toolu_1", pieces),
            *messages.end("tool_use"),
        ]
    )
    return answer, len(answer.sse)  # complete only with its last event, `message_stop`


def _chat_stream() -> tuple[Answer, int]:
    chunks = [chat.chunk({"content": "Let me."}), *chat.call_chunks("call_1", [EXEC[:9], EXEC[9:]])]
    answer = chat.stream([*chunks, chat.chunk({}, "tool_calls"), chat.usage()])
    return answer, len(chunks) + 1  # complete from the chunk with the `finish_reason`


def _responses_stream() -> tuple[Answer, int]:
    answer = responses.ResponsesAPI().stream(
        [responses.message("Let me."), responses.function_call("call_1", EXEC)], text=["Let me."]
    )
    return answer, len(answer.sse)  # complete only with `response.completed`


def _anthropic(url: str) -> Model:
    client = anthropic.AsyncAnthropic(api_key="k", base_url=url, max_retries=0)
    return AnthropicModel("claude-test", client=client)


def _openai(kind: type[OpenAIChatModel] | type[OpenAIResponsesModel]) -> Callable[[str], Model]:
    def build(url: str) -> Model:
        return kind("gpt-test", client=openai.AsyncOpenAI(api_key="k", base_url=f"{url}/v1"))

    return build


ADAPTERS: dict[str, tuple[Callable[[], tuple[Answer, int]], Callable[[str], Model]]] = {
    "anthropic": (_messages_stream, _anthropic),
    "openai-chat": (_chat_stream, _openai(OpenAIChatModel)),
    "openai-responses": (_responses_stream, _openai(OpenAIResponsesModel)),
}


async def _call(model: Model) -> ModelResponse | ModelError:
    responses_seen: list[ModelResponse] = []
    try:
        async for event in model.stream(REQUEST):
            if isinstance(event, ModelResponse):
                responses_seen.append(event)
    except ModelError as exc:
        assert responses_seen == []
        return exc
    (response,) = responses_seen
    return response


@pytest.mark.parametrize("adapter", list(ADAPTERS))
def test_a_stream_cut_anywhere_before_its_end_is_an_error_and_never_a_response(
    adapter: str,
) -> None:
    build_stream, build_model = ADAPTERS[adapter]
    whole, complete_at = build_stream()
    cuts = range(len(whole.sse) + 1)

    async def main() -> list[ModelResponse | ModelError]:
        answers = [Answer(sse=(*whole.sse[:cut], "")) for cut in cuts]
        async with WireServer(answers) as server:
            model = build_model(server.url)
            return [await _call(model) for _ in cuts]

    outcomes = run(main())
    for cut, outcome in zip(cuts, outcomes, strict=True):
        if cut < complete_at:
            assert isinstance(outcome, ModelError), (cut, outcome)
        else:
            assert isinstance(outcome, ModelResponse), (cut, outcome)
            (call,) = outcome.tool_calls
            assert (call.name, call.arguments) == ("exec", {"code": "return 6 * 7"})
