"""Running several messages of one session against a model, keeping each turn's outcome; and
the same against a model adapter talking to a strict fake API (`tests.agent._wire`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from clawcell import ClawcellError
from clawcell.agent import Agent, AgentEvent, Model, ReplyEvent
from tests.agent._helpers import collect
from tests.agent._wire import Answer, Request, WireServer


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """One turn: its events and the error that ended it, if one did."""

    events: list[AgentEvent]
    error: ClawcellError | None

    @property
    def reply(self) -> str:
        """The reply's text (the turn must have replied)."""
        reply = next(e for e in reversed(self.events) if isinstance(e, ReplyEvent))
        return str(reply.payloads[0]["text"])

    def kinds(self) -> list[str]:
        return [e.type for e in self.events]


async def run_session(
    model: Model, texts: Sequence[str]
) -> tuple[list[Outcome], list[dict[str, Any]]]:
    """Each message of `texts` as a turn of session `s`; the outcomes and the transcript."""
    outcomes: list[Outcome] = []
    async with Agent(model=model, instructions="Be brief.") as agent:
        for text in texts:
            events: list[AgentEvent] = []
            error: ClawcellError | None = None
            try:
                async for event in agent.run("s", text):
                    events.append(event)
            except ClawcellError as exc:
                error = exc
            outcomes.append(Outcome(events=events, error=error))
        return outcomes, await agent.transcript("s")


Check = Callable[[Request], Answer | None]
"""A fake API's check of each request: the refusal the real API would give, or `None`."""


async def session_on_wire(
    model_on: Callable[[WireServer], Model],
    answers: list[Answer],
    texts: Sequence[str],
    *,
    check: Check,
) -> tuple[list[Outcome], list[dict[str, Any]], WireServer]:
    """Each message of `texts` as a turn of a model built by `model_on` for a fake server that
    plays `answers` and refuses what `check` refuses: the outcomes, transcript and server."""
    async with WireServer(answers, check=check) as server:
        outcomes, transcript = await run_session(model_on(server), texts)
        return outcomes, transcript, server


async def turn_on_wire(
    model_on: Callable[[WireServer], Model], answers: list[Answer], *, check: Check
) -> tuple[list[AgentEvent], WireServer]:
    """One turn ("What is 6 * 7?") of a model built by `model_on` for a fake server that plays
    `answers` and refuses what `check` refuses: its events and the server."""
    async with WireServer(answers, check=check) as server:
        agent = Agent(model=model_on(server), instructions="Be brief.")
        async with agent:
            return await collect(agent, "s", "What is 6 * 7?"), server


def assert_the_next_turn_works(
    outcomes: list[Outcome], server: WireServer, first: str, *, recovered: str = "recovered"
) -> None:
    """After a fault in the first of two turns: that turn replied (`first == "reply"`) or failed
    with the error code `first` before any cell ran, and the second turn replied `recovered`.
    Every request was one the real API accepts."""
    one, two = outcomes
    if first == "reply":
        assert one.error is None, one.error
    else:
        assert one.error is not None and one.error.code == first
        assert "cell_started" not in one.kinds()
    assert two.error is None, two.error
    assert two.reply == recovered
    assert server.refused == []
