"""A parent agent whose cell spawns one sub-agent run that waits on a gate: the run (and the
parent's turn) stays running until the test opens it. Shared by the sub-agent row tests of the
turn stream and of the browser."""

from __future__ import annotations

import asyncio
from typing import Any

from clawcell import Limits, Tool
from clawcell.agent import (
    Agent,
    ModelRequest,
    ScriptedModel,
    SubagentProfile,
    exec_call,
    subagent_tools,
)
from clawcell.store import MemoryStore

GATED = """
const h = await sessions_spawn({profile: "slow", task: "Wait for the gate.", label: "gated"});
return (await agents_wait({runIds: [h.runId]})).runs[0].reply;
"""
CHILD_REPLY = "The gate opened."


def gated_agent(gate: asyncio.Event) -> Agent:
    """The parent agent (not yet entered): its first turn runs `GATED`, the child answers
    `CHILD_REPLY` once `gate` is set."""

    async def wait_for_gate(_: dict[str, Any]) -> str:
        await gate.wait()
        return "opened"

    def child(request: ModelRequest) -> Any:
        if request.messages[-1]["role"] == "user":
            return exec_call("return await gate();")
        return CHILD_REPLY

    slow = SubagentProfile(
        name="slow",
        model=ScriptedModel([child, child], name="slow-model"),
        tools=[Tool(name="gate", execute=wait_for_gate)],
        limits={"timeout_ms": 60_000},
    )
    parent = ScriptedModel([exec_call(GATED), "The gated run is done."])
    agent = Agent(model=parent, store=MemoryStore(), limits=Limits(timeout_ms=60_000))
    subagent_tools(agent, [slow])
    return agent
