"""One sub-agent run: its record, how it is driven, cancelled and reported."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ClawcellError
from ._agent import Agent
from ._events import ReplyEvent, TurnFinished
from ._subagent_contracts import REPLY_MAX_CHARS

__all__ = ["RunStatus", "SubagentRun", "cancel", "drive", "settled"]

RunStatus = Literal["running", "completed", "failed", "cancelled"]


@dataclass(kw_only=True)
class SubagentRun:
    """A run's record, as `agents_list` and `agents_wait` report it."""

    run_id: str
    session_id: str
    parent: str
    profile: str
    label: str | None
    task: str
    started_at: float = field(default_factory=time.time)
    status: RunStatus = "running"
    reply: str | None = None
    error: str | None = None
    usage: dict[str, Any] | None = None
    handle: asyncio.Task[None] | None = None

    def summary(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "sessionId": self.session_id,
            "profile": self.profile,
            "label": self.label,
            "status": self.status,
            "startedAt": self.started_at,
        }

    def result(self) -> dict[str, Any]:
        reply, truncated = self.reply, False
        if reply is not None and len(reply) > REPLY_MAX_CHARS:
            reply, truncated = reply[:REPLY_MAX_CHARS], True
        return {
            "runId": self.run_id,
            "sessionId": self.session_id,
            "profile": self.profile,
            "label": self.label,
            "status": self.status,
            "reply": reply,
            "truncated": truncated,
            "error": self.error,
            "usage": self.usage,
        }


async def drive(run: SubagentRun, agent: Agent) -> None:
    """Run the child turn of `run` to its end; record reply, usage and status; never raises."""
    try:
        async with aclosing(agent.run(run.session_id, run.task)) as events:
            async for event in events:
                if isinstance(event, ReplyEvent):
                    run.reply = _text(event.content)
                elif isinstance(event, TurnFinished):
                    run.usage = _usage(event)
                    if event.state == "waiting_approval":
                        run.status, run.error = "failed", _WAITING_APPROVAL
        if run.status == "running":
            run.status = "completed"
    except asyncio.CancelledError:
        run.status = "cancelled"
        run.error = run.error or "cancelled."
    except ClawcellError as exc:
        run.status, run.error = "failed", exc.message
    except Exception as exc:  # a child must never take the parent down
        run.status, run.error = "failed", f"{type(exc).__name__}: {exc}"


_WAITING_APPROVAL = (
    "the sub-agent's turn waits for an approval in its own session; decide it there "
    "(`Subagents.child(profile).decide(...)`), then spawn again or read its transcript."
)


def settled(run: SubagentRun) -> None:
    """A run task cancelled before it started never ran `drive`'s handlers."""
    if run.status == "running":
        run.status, run.error = "cancelled", run.error or "cancelled."


def cancel(run: SubagentRun, reason: str) -> None:
    """Cancel a run in flight, saying why."""
    if run.handle is not None and not run.handle.done():
        run.error = reason
        run.handle.cancel()


def _text(content: Sequence[Mapping[str, Any]]) -> str:
    return "".join(str(b.get("text", "")) for b in content if b.get("type") == "text")


def _usage(event: TurnFinished) -> dict[str, Any]:
    usage = event.usage
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "modelTurns": usage.model_turns,
        "cells": usage.cells,
        "toolCalls": usage.tool_calls,
        "wallMs": usage.wall_ms,
    }
