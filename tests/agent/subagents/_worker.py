"""A worker process of `test_worker_processes.py`: an agent with one sub-agent profile on the
PostgreSQL schema the test names in the environment, its turn lease as short as the test says.

`python -m tests.agent.subagents._worker parent` runs one parent turn that spawns a child; the
child's cell holds in its `hold` tool (printing `holding` once it is there) until the process
dies. `… idle` only lives: it never runs a turn. Both print `ready` once their agent is built.
A resumed child turn answers `resumed by <pid>` without calling any tool.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from typing import Any

from clawcell import Tool
from clawcell.agent import (
    Agent,
    ModelRequest,
    ScriptedModel,
    ScriptedTurn,
    SubagentProfile,
    exec_call,
    subagent_tools,
)
from clawcell.store import PostgresStore

DSN = "CLAWCELL_TEST_WORKER_DSN"
SCHEMA = "CLAWCELL_TEST_WORKER_SCHEMA"
LEASE = "CLAWCELL_TEST_WORKER_LEASE"
SPAWN = 'return (await sessions_spawn({profile: "slow", task: "long job"})).runId;'


def _text(message: Mapping[str, Any]) -> str:
    return "".join(str(part.get("text", "")) for part in message.get("content", []))


def _parent(request: ModelRequest) -> ScriptedTurn:
    return exec_call(SPAWN) if request.messages[-1]["role"] == "user" else "spawned"


def _child(request: ModelRequest) -> ScriptedTurn:
    last = request.messages[-1]
    if last["role"] != "user":
        return "held and done"
    if _text(last) == "long job":
        return exec_call("return await hold();")
    return f"resumed by {os.getpid()}"  # the resume message: carry on, no tool


async def _hold(_: dict[str, Any]) -> str:
    print("holding", flush=True)
    await asyncio.Event().wait()  # only the process's death ends it
    return "never"


async def main(role: str) -> None:
    store = PostgresStore(os.environ[DSN], schema=os.environ[SCHEMA], max_size=4)
    agent = Agent(
        model=ScriptedModel([_parent] * 100),
        store=store,
        turn_lease_seconds=float(os.environ[LEASE]),
    )
    child = ScriptedModel([_child] * 100, name="slow-model")
    profile = SubagentProfile(name="slow", model=child, tools=[Tool(name="hold", execute=_hold)])
    async with agent:
        subagent_tools(agent, [profile])
        print("ready", flush=True)
        if role == "parent":
            async for _ in agent.run("chat", "start the long job"):
                pass
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
