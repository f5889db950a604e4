"""The three sub-agent tools a `Subagents` runtime gives its agent, as `Tool` values."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ... import Tool
from ._contracts import (
    LIST_INPUT,
    LIST_OUTPUT,
    SPAWN_INPUT,
    SPAWN_OUTPUT,
    WAIT_INPUT,
    WAIT_OUTPUT,
)

__all__ = ["Runtime", "make_tools"]

Execute = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class Runtime(Protocol):
    """What the tools call: `Subagents`."""

    async def listing(self, params: dict[str, Any]) -> dict[str, Any]: ...

    async def spawn(self, params: dict[str, Any]) -> dict[str, Any]: ...

    async def wait(self, params: dict[str, Any]) -> dict[str, Any]: ...


def make_tools(runtime: Runtime) -> tuple[Tool, Tool, Tool]:
    """`agents_list`, `sessions_spawn` and `agents_wait` over `runtime`.

    `agents_list` and `agents_wait` only read, so they are replay-safe: a cell parked on a wait
    and continued after a restart waits again (for runs the new process resumed); a spawn is
    never repeated.
    """
    listing = Tool(
        name="agents_list",
        description=(
            "List the sub-agent profiles this session may spawn (name, description, model, "
            "tools) and its runs in flight. Returns `{profiles, runs, depth, maxDepth, "
            "maxChildren, canSpawn}`."
        ),
        parameters=LIST_INPUT,
        output_schema=LIST_OUTPUT,
        execute=runtime.listing,
        replay_safe=True,
    )
    spawn = Tool(
        name="sessions_spawn",
        description=(
            "Start a sub-agent run: `{profile, task, label?}`. It runs in a child session "
            "of its own with its own model, tools and limits, and sees only `task`. "
            "Returns at once with `{runId, sessionId, profile, status: 'running'}`; get "
            "its reply with `agents_wait`."
        ),
        parameters=SPAWN_INPUT,
        output_schema=SPAWN_OUTPUT,
        execute=runtime.spawn,
    )
    wait = Tool(
        name="agents_wait",
        description=(
            "Wait for sub-agent runs: `{runIds?, timeoutMs?}` (default: every run this "
            "session started, 60000 ms). Returns `{runs: [{runId, sessionId, profile, "
            "label, status, reply, truncated, error, usage}], running, timedOut}`; "
            "`running` lists the runs still in flight when the wait ended."
        ),
        parameters=WAIT_INPUT,
        output_schema=WAIT_OUTPUT,
        execute=runtime.wait,
        replay_safe=True,
    )
    return listing, spawn, wait
