"""One sub-agent run: its record, how it is driven, cancelled and reported."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast

from ...errors import ClawcellError
from ...store import transcript_text
from .._agent import Agent
from .._events import ReplyEvent, TurnFinished
from ._contracts import REPLY_MAX_CHARS

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
    depth: int = 1
    started_at: float = field(default_factory=time.time)
    status: RunStatus = "running"
    reply: str | None = None
    error: str | None = None
    usage: dict[str, Any] | None = None
    owner: str = ""
    alive_at: float = field(default_factory=time.time)
    interrupted: bool = False
    resumes: int = 0
    handle: asyncio.Task[None] | None = None

    def orphaned(self, now: float, stale_s: float) -> bool:
        """Running, with no process driving it: closed while it ran, or silent too long."""
        return self.status == "running" and (self.interrupted or now - self.alive_at > stale_s)

    def record(self) -> dict[str, Any]:
        """The run as its stored record (`RunBook`)."""
        return {
            "runId": self.run_id,
            "sessionId": self.session_id,
            "parent": self.parent,
            "profile": self.profile,
            "label": self.label,
            "task": self.task,
            "depth": self.depth,
            "startedAt": self.started_at,
            "status": self.status,
            "reply": self.reply,
            "error": self.error,
            "usage": self.usage,
            "owner": self.owner,
            "aliveAt": self.alive_at,
            "interrupted": self.interrupted,
            "resumes": self.resumes,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> SubagentRun:
        """A run from its stored record.

        Raises:
            KeyError, TypeError, ValueError: The record is not one `record()` wrote.
        """
        status = record["status"]
        if status not in _STATUSES:
            raise ValueError(f"unknown status {status!r}")
        usage = record.get("usage")
        return cls(
            run_id=_str(record["runId"]),
            session_id=_str(record["sessionId"]),
            parent=_str(record["parent"]),
            profile=_str(record["profile"]),
            label=_opt(record.get("label")),
            task=_str(record["task"]),
            depth=int(record.get("depth", 1)),
            started_at=float(record["startedAt"]),
            status=status,
            reply=_opt(record.get("reply")),
            error=_opt(record.get("error")),
            usage=cast(dict[str, Any], usage) if isinstance(usage, dict) else None,
            owner=str(record.get("owner", "")),
            alive_at=float(record.get("aliveAt", 0.0)),
            interrupted=record.get("interrupted") is True,
            resumes=int(record.get("resumes", 0)),
        )

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


async def drive(run: SubagentRun, agent: Agent, text: str | None = None) -> None:
    """Run the child turn of `run` (for `text`, by default its task) to its end; record reply,
    usage and status; never raises. A run cancelled with `interrupted` set stays `running`
    (its process is closing; a later one resumes it)."""
    try:
        async with aclosing(agent.run(run.session_id, text or run.task)) as events:
            async for event in events:
                if isinstance(event, ReplyEvent):
                    run.reply = transcript_text({"content": event.content})
                elif isinstance(event, TurnFinished):
                    run.usage = _usage(event)
                    if event.state == "waiting_approval":
                        run.status, run.error = "failed", _WAITING_APPROVAL
        if run.status == "running":
            run.status = "completed"
    except asyncio.CancelledError:
        if not run.interrupted:
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
    if run.status == "running" and not run.interrupted:
        run.status, run.error = "cancelled", run.error or "cancelled."


def cancel(run: SubagentRun, reason: str) -> None:
    """Cancel a run in flight, saying why."""
    if run.handle is not None and not run.handle.done():
        run.error = reason
        run.handle.cancel()


_STATUSES: Final = ("running", "completed", "failed", "cancelled")


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


def _opt(value: object) -> str | None:
    return None if value is None else _str(value)


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
