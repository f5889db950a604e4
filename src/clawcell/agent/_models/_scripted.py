"""`ScriptedModel`: a model that replays a fixed list of turns, for tests, demos and benches.

It goes through exactly the loop a real model does: it receives each `ModelRequest` (kept in
`requests`), streams its text word by word and answers with a `ModelResponse`.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import Any, Final, Literal, TypeAlias, cast

from ...errors import ConfigurationError, ModelError
from .._model import ModelEvent, ModelRequest, ModelResponse, ModelText, ToolCall

__all__ = ["ScriptedModel", "ScriptedTurn", "exec_call", "wait_call"]

ScriptedTurn: TypeAlias = "str | ToolCall | ModelResponse | Callable[[ModelRequest], ScriptedTurn]"
"""One scripted model turn: a final text, one tool call, a whole `ModelResponse`, or a
function of the request returning one of those (to answer with a `runId` it saw)."""

_WORDS = re.compile(r"\S+\s*|\s+")


def exec_call(code: str, *, title: str | None = None, id: str | None = None) -> ToolCall:
    """A scripted `exec` tool call."""
    arguments: dict[str, Any] = {"code": code}
    if title is not None:
        arguments["title"] = title
    return ToolCall(id=id or "", name="exec", arguments=arguments)


def wait_call(run_id: str, *, id: str | None = None) -> ToolCall:
    """A scripted `wait` tool call."""
    return ToolCall(id=id or "", name="wait", arguments={"runId": run_id})


class ScriptedModel:
    """Replays `turns` in order, one per model call.

    Args:
        turns: The model's turns (see `ScriptedTurn`). Tool calls without an id get
            `call_<n>`.
        name: The model name reported in traces and transcripts.
        tool_style: The `tools` shape it asks for (only recorded in `requests`).

    Raises:
        ModelError: (from `stream`) when asked for a turn after the last one.
    """

    def __init__(
        self,
        turns: Iterable[ScriptedTurn],
        *,
        name: str = "scripted",
        tool_style: Literal["anthropic", "openai-chat", "openai-responses"] = "anthropic",
    ) -> None:
        if isinstance(turns, str) or not isinstance(cast(object, turns), Iterable):
            raise ConfigurationError(
                f"`ScriptedModel` takes a list of turns, such as `ScriptedModel([{turns!r}])`, "
                f"got {turns!r}."
            )
        if tool_style not in _STYLES:
            raise ConfigurationError(
                f"`tool_style` must be one of {', '.join(_STYLES)}, got {tool_style!r}."
            )
        self._turns = list(turns)
        if not all(_is_turn(turn) for turn in self._turns):
            raise ConfigurationError(
                f"`ScriptedModel` turns must be text, a `ToolCall`, a `ModelResponse` or a "
                f"function of the request, got {self._turns!r}."
            )
        self._name = name
        self._tool_style: Literal["anthropic", "openai-chat", "openai-responses"] = tool_style
        self._next = 0
        self._calls = 0
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        """The model name."""
        return self._name

    @property
    def tool_style(self) -> Literal["anthropic", "openai-chat", "openai-responses"]:
        """The `tools` shape it asks for."""
        return self._tool_style

    @property
    def remaining(self) -> int:
        """Turns not replayed yet."""
        return len(self._turns) - self._next

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Replay the next turn; see `Model.stream`."""
        self.requests.append(request)
        if self._next >= len(self._turns):
            raise ModelError(
                f"`ScriptedModel` has no turn left after {len(self._turns)}; "
                "add the turns the conversation needs."
            )
        turn = self._turns[self._next]
        self._next += 1
        response = self._response(turn, request)
        for word in _WORDS.findall(response.text):
            yield ModelText(text=word)
        yield response

    def _response(self, turn: ScriptedTurn, request: ModelRequest) -> ModelResponse:
        while callable(turn) and not isinstance(turn, ToolCall | ModelResponse):
            turn = turn(request)
        if isinstance(turn, str):
            return ModelResponse(text=turn, stop_reason="stop")
        if isinstance(turn, ToolCall):
            turn = ModelResponse(tool_calls=(turn,), stop_reason="toolUse")
        return ModelResponse(
            text=turn.text,
            tool_calls=tuple(self._with_id(call) for call in turn.tool_calls),
            input_tokens=turn.input_tokens,
            output_tokens=turn.output_tokens,
            stop_reason=turn.stop_reason,
            reasoning=turn.reasoning,
        )

    def _with_id(self, call: ToolCall) -> ToolCall:
        self._calls += 1
        if call.id:
            return call
        arguments: Mapping[str, Any] | str = call.arguments
        return ToolCall(id=f"call_{self._calls}", name=call.name, arguments=arguments)


_STYLES: Final = ("anthropic", "openai-chat", "openai-responses")


def _is_turn(turn: object) -> bool:
    return isinstance(turn, str | ToolCall | ModelResponse) or callable(turn)
