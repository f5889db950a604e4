"""Caps of a turn (model turns, wall time) and bad agent configuration."""

from __future__ import annotations

import asyncio
import math
from typing import Any, cast

import pytest

import clawcell
from clawcell.agent import Agent, ErrorEvent, ScriptedModel, exec_call
from tests.agent._helpers import blocking_tool, collect, types
from tests.conftest import run


def test_the_model_turn_cap_ends_the_turn_with_an_error_event_then_the_typed_error() -> None:
    model = ScriptedModel([exec_call("return 1")] * 5)
    events: list[Any] = []

    async def main() -> list[dict[str, Any]]:
        async with Agent(model=model, max_model_turns=2) as agent:
            with pytest.raises(clawcell.TurnLimitError) as caught:
                async for event in agent.run("s", "loop forever"):
                    events.append(event)
            assert caught.value.code == "max_model_turns"
            return await agent.transcript("s")

    transcript = run(main())
    assert types(events)[-1] == "error"
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert error.to_dict() == {
        "type": "error",
        "turnId": error.turn_id,
        "code": "max_model_turns",
        "message": (
            "the turn reached its cap of 2 model turns (`max_model_turns`) without a final "
            "answer; raise it with `Agent(max_model_turns=...)` or ask for less in one message."
        ),
    }
    assert isinstance(error.error, clawcell.TurnLimitError)
    assert model.remaining == 3
    # Every tool call in the stored transcript has its result: the next turn can go on.
    assert [m["role"] for m in transcript] == ["user", *["assistant", "toolResult"] * 2]


def test_the_wall_time_cap_cancels_a_running_cell_and_the_next_turn_works() -> None:
    started = asyncio.Event()
    model = ScriptedModel([exec_call("return await block()"), "recovered"])

    async def main() -> tuple[list[Any], list[dict[str, Any]], list[Any]]:
        limits = clawcell.Limits(timeout_ms=600_000)
        agent = Agent(model=model, tools=[blocking_tool(started)], limits=limits)
        async with agent:
            events: list[Any] = []
            agent_with_short_cap = Agent(
                model=model,
                tools=[blocking_tool(started)],
                limits=limits,
                max_turn_seconds=1.0,  # the cell blocks forever: only the cap ends it
                store=agent.store,
            )
            async with agent_with_short_cap:
                with pytest.raises(clawcell.TurnLimitError) as caught:
                    async for event in agent_with_short_cap.run("s", "block"):
                        events.append(event)
                assert caught.value.code == "max_turn_seconds"
            after = await collect(agent, "s", "and now?")
            return events, await agent.transcript("s"), after

    events, transcript, after = run(main())
    assert started.is_set()
    assert types(events) == ["turn_started", "cell_started", "error"]
    assert events[-1].message == (
        "the turn reached its wall-clock cap of 1.0 s (`max_turn_seconds`); raise it with "
        "`Agent(max_turn_seconds=...)` or ask for less in one message."
    )
    result = transcript[2]
    assert (result["role"], result["isError"]) == ("toolResult", True)
    assert result["content"][0]["text"].startswith(
        '{"status": "stopped", "code": "cancelled", "error": "the cell was cancelled: the agent '
        'turn stopped before it ended.", "output": ['
    )
    assert types(after)[-1] == "turn_finished"


def test_a_model_error_is_an_error_event_then_the_model_error() -> None:
    events: list[Any] = []

    async def main() -> None:
        async with Agent(model=ScriptedModel([])) as agent:
            with pytest.raises(clawcell.ModelError):
                async for event in agent.run("s", "hi"):
                    events.append(event)

    run(main())
    assert events[-1].to_dict()["code"] == "model_error"
    assert events[-1].message == (
        "`ScriptedModel` has no turn left after 0; add the turns the conversation needs."
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_model_turns": 0}, "`max_model_turns` must be a positive integer, got 0."),
        ({"max_model_turns": True}, "`max_model_turns` must be a positive integer, got True."),
        ({"max_model_turns": 2.5}, "`max_model_turns` must be a positive integer, got 2.5."),
        (
            {"max_turn_seconds": -1},
            "`max_turn_seconds` must be a positive number of seconds, got -1.",
        ),
        (
            {"max_turn_seconds": math.inf},
            "`max_turn_seconds` must be a positive number of seconds, got inf.",
        ),
        ({"instructions": 3}, "`instructions` must be a string, got 3."),
        (
            {"tools": 3},
            "`tools` must be an iterable of `clawcell.Tool`, got 3.",
        ),
    ],
    ids=[
        "zero-turns",
        "bool-turns",
        "float-turns",
        "negative-seconds",
        "inf-seconds",
        "instructions",
        "tools",
    ],
)
def test_bad_configuration_is_refused_with_a_clear_message(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(clawcell.ConfigurationError) as caught:
        Agent(model=ScriptedModel([]), **options)
    assert caught.value.message == message


def test_a_model_that_is_not_a_model_is_refused() -> None:
    with pytest.raises(clawcell.ConfigurationError) as caught:
        Agent(model=cast(Any, "gpt-5.1"))
    assert caught.value.message == (
        "`model` must be a `clawcell.agent.Model` (such as `OpenAIChatModel(...)` or "
        "`ScriptedModel([...])`), got 'gpt-5.1'."
    )


def test_bad_limits_are_refused_when_the_agent_is_built() -> None:
    with pytest.raises(clawcell.ConfigurationError):
        Agent(model=ScriptedModel([]), limits=cast(Any, "fast"))
