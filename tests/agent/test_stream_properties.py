"""Properties: however a stream is cut into chunks, the adapters rebuild the same response."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletionChunk

from clawcell.agent import ModelRequest, ModelResponse, ModelText, OpenAIChatModel, ScriptedModel
from tests.conftest import run

REQUEST = ModelRequest(instructions="", messages=(), tools=())


def _cuts(text: str, points: list[int]) -> list[str]:
    edges = sorted({0, len(text), *(p % (len(text) + 1) for p in points)})
    return [text[a:b] for a, b in itertools.pairwise(edges)]


def _chunk(delta: dict[str, Any], finish: str | None = None) -> ChatCompletionChunk:
    return ChatCompletionChunk.model_validate(
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


class _Completions:
    def __init__(self, chunks: list[ChatCompletionChunk]) -> None:
        self._chunks = chunks

    async def create(self, **_: Any) -> AsyncIterator[ChatCompletionChunk]:
        async def stream() -> AsyncIterator[ChatCompletionChunk]:
            for chunk in self._chunks:
                yield chunk

        return stream()


class _Client:
    """Just enough of `openai.AsyncOpenAI` to hand the adapter prepared chunks."""

    def __init__(self, chunks: list[ChatCompletionChunk]) -> None:
        self.chat = type("Chat", (), {"completions": _Completions(chunks)})()


async def _drain(model: Any) -> tuple[str, ModelResponse]:
    pieces: list[str] = []
    response: ModelResponse | None = None
    async for event in model.stream(REQUEST):
        if isinstance(event, ModelText):
            pieces.append(event.text)
        else:
            response = event
    assert response is not None
    return "".join(pieces), response


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(max_size=40),
    code=st.text(max_size=60),
    text_cuts=st.lists(st.integers(min_value=0), max_size=6),
    argument_cuts=st.lists(st.integers(min_value=0), max_size=8),
)
def test_chat_chunks_are_joined_into_the_same_text_and_tool_call(
    text: str, code: str, text_cuts: list[int], argument_cuts: list[int]
) -> None:
    arguments = json.dumps({"code": code})
    chunks = [_chunk({"content": piece}) for piece in _cuts(text, text_cuts)]
    first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "exec"}}
    chunks.append(_chunk({"tool_calls": [first]}))
    chunks.extend(
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        for piece in _cuts(arguments, argument_cuts)
    )
    chunks.append(_chunk({}, finish="tool_calls"))
    model = OpenAIChatModel("m", client=cast(Any, _Client(chunks)))
    streamed, response = run(_drain(model))
    assert streamed == response.text == text
    (call,) = response.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_1", "exec", {"code": code})
    assert response.stop_reason == "toolUse"


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80))
def test_scripted_text_streams_in_pieces_that_join_to_the_whole(text: str) -> None:
    streamed, response = run(_drain(ScriptedModel([text])))
    assert streamed == response.text == text
