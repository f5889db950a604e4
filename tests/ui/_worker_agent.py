"""The agent each `clawcell serve` worker process of `test_worker_processes.py` serves: a
scripted model that says which user messages it was sent, and tools that hold or need approval,
on the PostgreSQL schema the test names in the environment."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any, Literal

from clawcell import Tool
from clawcell.agent import (
    Agent,
    ModelEvent,
    ModelRequest,
    ModelText,
    ScriptedModel,
    ScriptedTurn,
    exec_call,
)
from clawcell.agent._transcript import message_text
from clawcell.store import PostgresStore

DSN = "CLAWCELL_TEST_WORKER_DSN"
SCHEMA = "CLAWCELL_TEST_WORKER_SCHEMA"
LEASE = "CLAWCELL_TEST_WORKER_LEASE"


def answer(request: ModelRequest) -> ScriptedTurn:
    """`hold…` holds in a cell, `deploy…` asks for approval, anything else is answered with
    the user messages the model was sent (`saw: a | b | c`)."""
    last = request.messages[-1]
    if last.get("role") == "user":
        text = message_text(last)
        if text.startswith("hold"):
            return exec_call('text("holding"); return await hold();')
        if text.startswith("deploy"):
            return exec_call("return await deploy();")
    users = [message_text(m) for m in request.messages if m.get("role") == "user"]
    return "saw: " + " | ".join(users)


async def _hold(_: dict[str, Any]) -> str:
    await asyncio.Event().wait()  # only cancellation (or the process's death) ends it
    return "never"


async def _deploy(_: dict[str, Any]) -> str:
    return "deployed"


TALK = "Once upon a time "
"""What a `talk…` message's reply streams before it hangs (until the worker dies)."""


class _Model:
    """The scripted model; a `talk…` message streams `TALK` and then never ends."""

    name = "worker"
    tool_style: Literal["anthropic"] = "anthropic"

    def __init__(self) -> None:
        self._scripted = ScriptedModel([answer] * 10_000)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        last = request.messages[-1]
        if last.get("role") == "user" and message_text(last).startswith("talk"):
            yield ModelText(text=TALK)
            await asyncio.Event().wait()
        async for part in self._scripted.stream(request):
            yield part


def make_agent() -> Agent:
    store = PostgresStore(os.environ[DSN], schema=os.environ[SCHEMA], max_size=4)
    return Agent(
        model=_Model(),
        tools=[
            Tool(name="hold", execute=_hold),
            Tool(name="deploy", execute=_deploy, approval="always"),
        ],
        store=store,
        turn_lease_seconds=float(os.environ.get(LEASE, "30")),
    )
