"""Running several messages of one session against a model, keeping each turn's outcome."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clawcell import ClawcellError
from clawcell.agent import Agent, AgentEvent, Model, ReplyEvent


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
