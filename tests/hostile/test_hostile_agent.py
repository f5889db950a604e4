"""Hostile agent turns: lone surrogates from the model, the guest or the user, deeply nested
tool-call arguments, and models that misbehave. Each turn ends cleanly (a reply, or an `error`
event and a `ClawcellError`), every executed call is in the stored transcript, and the next
turn of the same session works."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal, cast

import openai
import pytest

from clawcell import CodeMode, SQLiteStore
from clawcell.agent import (
    Agent,
    AgentEvent,
    CellFinished,
    ErrorEvent,
    ModelRequest,
    ModelResponse,
    OpenAIChatModel,
    ReplyEvent,
    ScriptedModel,
    ToolCall,
    exec_call,
)
from clawcell.errors import ClawcellError, InputError
from tests.agent._wire import Answer, WireServer, data_events
from tests.conftest import run

DEEP = "[" * 200_000
VALID = "\ufffd"


def _encodes(value: Any) -> bool:
    json.dumps(value, ensure_ascii=False).encode("utf-8")
    return True


async def _turns(
    model: Any, store: SQLiteStore, *texts: str
) -> list[tuple[list[AgentEvent], BaseException | None]]:
    out: list[tuple[list[AgentEvent], BaseException | None]] = []
    async with Agent(model=model, store=store) as agent:
        for text in texts:
            events: list[AgentEvent] = []
            error: BaseException | None = None
            try:
                async for event in agent.run("s", text):
                    events.append(event)
            except Exception as exc:
                error = exc
            out.append((events, error))
    return out


async def _transcript(path: Path) -> list[dict[str, Any]]:
    async with SQLiteStore(path) as store:
        return await store.read_transcript("s")


def _roles(transcript: list[dict[str, Any]]) -> list[str]:
    return [str(m["role"]) for m in transcript]


SURROGATE_SCRIPTS: dict[str, list[Any]] = {
    "model_text_high": ["hello \ud800 world"],
    "model_text_low": ["\udc00 at the start"],
    "code_with_surrogate": [exec_call("return 'a\ud800b';"), "done"],
    "title_with_surrogate": [exec_call("return 1;", title="t\udfff"), "done"],
    "call_id_with_surrogate": [
        ModelResponse(tool_calls=(ToolCall(id="c\ud800", name="exec", arguments={"code": "1"}),)),
        "done",
    ],
    "guest_returns_escaped_surrogate": [exec_call("return 'x\\ud800y';"), "done"],
    "guest_output_escaped_surrogate": [exec_call("text('\\udc01'); return 2;"), "done"],
    "argument_key_with_surrogate": [
        ModelResponse(
            tool_calls=(ToolCall(id="c1", name="exec", arguments={"code": "1", "\ud800": 1}),)
        ),
        "done",
    ],
}


@pytest.mark.parametrize("script", SURROGATE_SCRIPTS.values(), ids=SURROGATE_SCRIPTS.keys())
def test_lone_surrogates_are_replaced_and_every_call_is_recorded(
    script: list[Any], tmp_path: Path
) -> None:
    path = tmp_path / "s.db"
    model = ScriptedModel([*script, "second turn"])
    (events, error), (after, after_error) = run(_turns(model, SQLiteStore(path), "first", "again"))
    assert error is None, error
    assert after_error is None and isinstance(after[-2], ReplyEvent)
    assert all(_encodes(e.to_dict()) for e in events)
    transcript = run(_transcript(path))
    calls = sum(1 for s in script if isinstance(s, ModelResponse) and s.tool_calls)
    calls += sum(1 for s in script if isinstance(s, ToolCall))
    assert _roles(transcript).count("toolResult") == calls
    assert _encodes(transcript)
    assert transcript[-1]["content"][0]["text"] == "second turn"


def test_a_user_message_with_a_lone_surrogate_is_stored_replaced(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    (events, error), (_, after_error) = run(
        _turns(ScriptedModel(["ok", "ok"]), SQLiteStore(path), "bad \ud83d text", "fine")
    )
    assert (error, after_error) == (None, None)
    assert events[0].to_dict()["text"] == f"bad {VALID} text"
    assert run(_transcript(path))[0]["content"][0]["text"] == f"bad {VALID} text"


def test_a_surrogate_pair_given_as_two_code_points_becomes_its_character(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    run(_turns(ScriptedModel(["\ud83d\ude00"]), SQLiteStore(path), "smile"))
    assert run(_transcript(path))[-1]["content"][0]["text"] == "\U0001f600"


def test_deeply_nested_arguments_are_rejected_and_the_turn_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    deep = ModelResponse(tool_calls=(ToolCall(id="c1", name="exec", arguments=DEEP),))
    model = ScriptedModel([deep, "handled", "second"])
    (events, error), (_, after_error) = run(_turns(model, SQLiteStore(path), "go", "again"))
    assert (error, after_error) == (None, None)
    finished = next(e for e in events if isinstance(e, CellFinished))
    assert finished.error is not None and "must be a JSON object" in finished.error
    assert _roles(run(_transcript(path))).count("toolResult") == 1


@pytest.mark.parametrize("tool", ["exec", "wait"])
@pytest.mark.parametrize(
    "text", [DEEP, '{"a":' * 100_000, "[{" * 60_000], ids=["list", "obj", "mix"]
)
def test_call_tool_refuses_deep_json_with_an_input_error(tool: str, text: str) -> None:
    async def main() -> tuple[BaseException | None, Any]:
        async with CodeMode([]) as mode:
            caught: BaseException | None = None
            try:
                await mode.call_tool(tool, text)
            except Exception as exc:
                caught = exc
            return caught, (await mode.call_tool("exec", '{"code": "return 3"}'))["value"]

    caught, after = run(main())
    assert isinstance(caught, InputError)
    assert after == 3


class _Broken:
    """A model whose stream fails in a way no adapter translated."""

    def __init__(self, failure: Callable[[], Any]) -> None:
        self._failure = failure
        self._calls = 0

    @property
    def name(self) -> str:
        return "broken"

    @property
    def tool_style(self) -> Literal["anthropic", "openai-chat", "openai-responses"]:
        return "openai-chat"

    async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
        self._calls += 1
        if self._calls == 1:
            yield self._failure()
        yield ModelResponse(text="recovered")


def _raise() -> Any:
    raise RuntimeError("the SDK broke")


@pytest.mark.parametrize(
    "failure", [_raise, object, lambda: RecursionError], ids=["raises", "junk", "type"]
)
def test_an_unexpected_model_failure_is_an_error_event_and_a_clawcell_error(
    failure: Callable[[], Any], tmp_path: Path
) -> None:
    path = tmp_path / "s.db"
    (events, error), (after, after_error) = run(
        _turns(_Broken(failure), SQLiteStore(path), "one", "two")
    )
    assert isinstance(error, ClawcellError) and error.code == "internal_error"
    assert isinstance(events[-1], ErrorEvent) and events[-1].code == "internal_error"
    assert after_error is None
    assert after[-2].to_dict()["payloads"][0]["text"] == "recovered"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [choice]}  # fmt: skip


def _call(arguments: str) -> Answer:
    call = {"index": 0, "id": "call_1", "type": "function",
            "function": {"name": "exec", "arguments": arguments}}  # fmt: skip
    return Answer(sse=data_events([_chunk({"tool_calls": [call]}), _chunk({}, "tool_calls")]))


def _text(text: str) -> Answer:
    return Answer(sse=data_events([_chunk({"content": text}), _chunk({}, "stop")]))


OPENAI_CASES = {
    "reply_text": [_text("bad \ud800 reply"), _text("second")],
    "call_arguments": [_call(json.dumps({"code": "return '\udc00';"})), _text("x"), _text("y")],
    "deep_arguments": [_call(DEEP), _text("x"), _text("second")],
}


@pytest.mark.parametrize("answers", OPENAI_CASES.values(), ids=OPENAI_CASES.keys())
def test_a_streamed_openai_reply_with_bad_text_never_breaks_the_next_request(
    answers: list[Answer], tmp_path: Path
) -> None:
    path = tmp_path / "s.db"

    async def main() -> tuple[list[tuple[list[AgentEvent], BaseException | None]], Any]:
        async with WireServer(answers) as server:
            client = openai.AsyncOpenAI(api_key="k", base_url=f"{server.url}/v1", max_retries=0)
            model = OpenAIChatModel("m", client=client)
            return await _turns(model, SQLiteStore(path), "one", "two"), server

    results, server = run(main())
    assert [error for _, error in results] == [None, None]
    assert len(server.requests) == len(answers)  # every request was sent, as valid JSON
    assert _encodes([r.body for r in server.requests])
    assert _encodes(run(_transcript(path)))


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (
            lambda: ScriptedModel("hello"),
            "takes a list of turns, such as `ScriptedModel(['hello'])`",
        ),
        (lambda: ScriptedModel(cast(Any, 42)), "takes a list of turns"),
        (lambda: ScriptedModel(["x"], tool_style=cast(Any, "gemini")), "`tool_style` must be one"),
    ],
    ids=["a_string", "a_number", "unknown_tool_style"],
)
def test_a_scripted_model_refuses_what_it_cannot_replay(
    build: Callable[[], Any], words: str, tmp_path: Path
) -> None:
    with pytest.raises(ClawcellError) as caught:
        build()
    assert words in caught.value.message
    ((events, error),) = run(_turns(ScriptedModel(["fine"]), SQLiteStore(tmp_path / "s.db"), "hi"))
    assert error is None and isinstance(events[-2], ReplyEvent)
