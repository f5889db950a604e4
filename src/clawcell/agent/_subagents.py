"""Sub-agents: `agents_list`, `sessions_spawn` and `agents_wait` over an agent's profiles.

A `Subagents` runtime belongs to one parent `Agent`. Each `SubagentProfile` becomes a child
`Agent` (its own model, tools, instructions and limits) that shares the parent's store, so a
child run's transcript is stored under its own session id, `<parent session>/sub/<n>`, where
`agent.transcript(...)` and the session tools read it. A spawn starts the child's turn as an
asyncio task and returns its handle at once; `agents_wait` waits for handles with a timeout.

Which session spawns is taken from `current_caller` (set by the turn loop for every cell), so
the same tools serve every session of the parent and, when `max_depth > 1`, the children's own
sessions. Depth (how deep children may nest) and fan-out (how many children of one session
run at once) are checked at each spawn. A parent turn that stops (closed early, a cap, an
error) cancels its children and theirs; so does closing the parent agent.
Runs live in this process: after a restart a child run is gone (its transcript stays).
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import uuid
from collections.abc import Iterable
from typing import Any, cast

from .. import Tool
from ..errors import ConfigurationError, ToolError
from ._agent import Agent
from ._caller import Caller, current_caller
from ._subagent_contracts import (
    LIST_INPUT,
    LIST_OUTPUT,
    MAX_WAIT_MS,
    SPAWN_INPUT,
    SPAWN_OUTPUT,
    WAIT_INPUT,
    WAIT_OUTPUT,
)
from ._subagent_profile import SubagentProfile, bounded, profiles_by_name
from ._subagent_run import SubagentRun, cancel, drive, settled

__all__ = ["SubagentProfile", "Subagents", "subagent_tools"]

_DEFAULT_WAIT_MS = 60_000
_STOP_GRACE_S = 5.0


class Subagents:
    """The sub-agent runtime of one parent agent: profiles, runs, limits and the tools.

    Build it once per agent, then give `tools` to the agent with `agent.add_tools(...)`
    (or use `subagent_tools(agent, profiles)`, which does both).

    Args:
        agent: The parent agent; children share its store and close with it.
        profiles: The sub-agents it may spawn (unique names).
        max_depth: How deep children may nest: 1 (default) lets the parent's sessions spawn
            and children not; 2 lets children spawn once more, and so on (1-5).
        max_children: Runs of one session that may be in flight at once (1-32).

    Raises:
        ConfigurationError: No profile, a duplicate name, a limit out of range, or a child
            agent that cannot be built from its profile.
    """

    def __init__(
        self,
        agent: Agent,
        profiles: Iterable[SubagentProfile],
        *,
        max_depth: int = 1,
        max_children: int = 4,
    ) -> None:
        self._max_depth = bounded("max_depth", max_depth, 1, 5)
        self._max_children = bounded("max_children", max_children, 1, 32)
        self._profiles = profiles_by_name(profiles)
        self._agent = agent
        self.tools: tuple[Tool, ...] = (self._list_tool(), self._spawn_tool(), self._wait_tool())
        self._children = {
            name: self._child_agent(profile) for name, profile in self._profiles.items()
        }
        self._owners = {id(a._settings) for a in (agent, *self._children.values())}  # pyright: ignore[reportPrivateUsage]
        self._runs: dict[str, SubagentRun] = {}
        self._depths: dict[str, int] = {}  # child session -> its depth (parents' are 0)
        self._counters: dict[str, itertools.count[int]] = {}
        self._spawn_lock = asyncio.Lock()
        self._closed = False
        agent.attach(self)
        for child in self._children.values():
            child.attach(self)

    def _child_agent(self, profile: SubagentProfile) -> Agent:
        nested = self.tools if self._max_depth > 1 else ()
        return Agent(
            model=profile.model,
            tools=[*profile.tools, *nested],
            store=self._agent.store,
            instructions=profile.instructions,
            limits=profile.limits,
            max_model_turns=profile.max_model_turns,
            max_turn_seconds=profile.max_turn_seconds,
        )

    # -- the host API -------------------------------------------------------------------

    def runs(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Every run (or those `session_id` started) as `agents_wait` reports them."""
        return [r.result() for r in self._runs.values() if session_id in (None, r.parent)]

    def child(self, profile: str) -> Agent:
        """The child agent of `profile` (for `decide`, `history`, …).

        Raises:
            ConfigurationError: No such profile.
        """
        if profile not in self._children:
            raise ConfigurationError(
                f"no sub-agent profile {profile!r}; have {sorted(self._children)!r}."
            )
        return self._children[profile]

    async def cancel_children(self, session_id: str) -> int:
        """Cancel the runs `session_id` started, and theirs; wait until they have stopped
        (their transcripts are written). Returns the number of runs cancelled."""
        tasks = self._cancel_tree(session_id, "cancelled: the parent session was stopped.")
        await asyncio.gather(*tasks, return_exceptions=True)
        return len(tasks)

    async def turn_stopped(self, session_id: str) -> None:
        """A turn of `session_id` stopped: its children are cancelled, and awaited for at
        most `_STOP_GRACE_S` (a child's turn writes its cancelled results as it stops)."""
        tasks = self._cancel_tree(session_id, "cancelled: the parent turn stopped.")
        if tasks:
            await asyncio.wait(tasks, timeout=_STOP_GRACE_S)

    async def aclose(self) -> None:
        """Cancel every run and close the child agents (the parent calls this as it closes)."""
        if self._closed:
            return
        self._closed = True
        tasks = [r.handle for r in self._runs.values() if r.handle and not r.handle.done()]
        for run in self._runs.values():
            cancel(run, "cancelled: the parent agent closed.")
        await asyncio.gather(*tasks, return_exceptions=True)
        for child in self._children.values():
            await child.aclose()

    def _cancel_tree(self, session_id: str, reason: str) -> list[asyncio.Task[None]]:
        tasks: list[asyncio.Task[None]] = []
        for run in [r for r in self._runs.values() if r.parent == session_id]:
            tasks += self._cancel_tree(run.session_id, reason)
            if run.handle is not None and not run.handle.done():
                cancel(run, reason)
                tasks.append(run.handle)
        return tasks

    # -- the tools ----------------------------------------------------------------------

    def _caller(self, tool: str) -> Caller:
        caller = current_caller.get()
        if caller is None or id(caller.owner) not in self._owners:
            raise ToolError(
                f"`{tool}` works only in a cell of the agent it was made for (an agent turn); "
                "it has no session to act for here."
            )
        if self._closed:
            raise ToolError(f"`{tool}`: the agent is closing; no sub-agent can run.")
        return caller

    def _list_tool(self) -> Tool:
        async def execute(params: dict[str, Any]) -> dict[str, Any]:
            caller = current_caller.get()
            session = caller.session_id if caller is not None else None
            depth = self._depths.get(session, 0) if session is not None else 0
            return {
                "profiles": [self._profile_view(p) for p in self._profiles.values()],
                "runs": [
                    r.summary()
                    for r in self._runs.values()
                    if r.parent == session and r.status == "running"
                ],
                "depth": depth,
                "maxDepth": self._max_depth,
                "maxChildren": self._max_children,
                "canSpawn": session is not None and depth < self._max_depth,
            }

        return Tool(
            name="agents_list",
            description=(
                "List the sub-agent profiles this session may spawn (name, description, model, "
                "tools) and its runs in flight. Returns `{profiles, runs, depth, maxDepth, "
                "maxChildren, canSpawn}`."
            ),
            parameters=LIST_INPUT,
            output_schema=LIST_OUTPUT,
            execute=execute,
            replay_safe=True,
        )

    def _profile_view(self, profile: SubagentProfile) -> dict[str, Any]:
        nested = [t.name for t in self.tools] if self._max_depth > 1 else []
        return {
            "name": profile.name,
            "description": profile.description,
            "model": profile.model.name,
            "tools": [t.name for t in profile.tools] + nested,
        }

    def _spawn_tool(self) -> Tool:
        async def execute(params: dict[str, Any]) -> dict[str, Any]:
            return await self._spawn(params)

        return Tool(
            name="sessions_spawn",
            description=(
                "Start a sub-agent run: `{profile, task, label?}`. It runs in a child session "
                "of its own with its own model, tools and limits, and sees only `task`. "
                "Returns at once with `{runId, sessionId, profile, status: 'running'}`; get "
                "its reply with `agents_wait`."
            ),
            parameters=SPAWN_INPUT,
            output_schema=SPAWN_OUTPUT,
            execute=execute,
        )

    async def _spawn(self, params: dict[str, Any]) -> dict[str, Any]:
        caller = self._caller("sessions_spawn")
        profile = self._profile(params.get("profile"))
        task = params.get("task")
        if not isinstance(task, str) or not task.strip():
            raise ToolError(f"`sessions_spawn` needs `task`, the child's brief, got {task!r}.")
        label = params.get("label")
        label = label if isinstance(label, str) and label else None
        depth = self._depths.get(caller.session_id, 0) + 1
        if depth > self._max_depth:
            raise ToolError(
                f"sub-agent depth limit: session {caller.session_id!r} is at depth {depth - 1} "
                f"and `max_depth` is {self._max_depth}, so it cannot spawn; do the work here."
            )
        async with self._spawn_lock:
            in_flight = [
                r for r in self._runs.values()
                if r.parent == caller.session_id and r.status == "running"
            ]  # fmt: skip
            if len(in_flight) >= self._max_children:
                raise ToolError(
                    f"sub-agent fan-out limit: session {caller.session_id!r} has "
                    f"{len(in_flight)} runs in flight and `max_children` is "
                    f"{self._max_children}; wait for one with `agents_wait` first."
                )
            session_id = await self._child_session(caller.session_id)
            run = SubagentRun(
                run_id=f"sub_{uuid.uuid4().hex[:16]}",
                session_id=session_id,
                parent=caller.session_id,
                profile=profile.name,
                label=label,
                task=task,
            )
            self._runs[run.run_id] = run
            self._depths[session_id] = depth
            # A fresh context: the child's cells must not see the parent's caller or gate.
            run.handle = asyncio.get_running_loop().create_task(
                drive(run, self._children[profile.name]),
                name=f"sub-agent {run.run_id}",
                context=contextvars.Context(),
            )
            run.handle.add_done_callback(lambda _: settled(run))
        return {
            "runId": run.run_id,
            "sessionId": session_id,
            "profile": profile.name,
            "status": "running",
        }

    def _profile(self, name: object) -> SubagentProfile:
        profile = self._profiles.get(name) if isinstance(name, str) else None
        if profile is None:
            raise ToolError(
                f"no sub-agent profile {name!r}; use one of {sorted(self._profiles)!r} "
                "(see `agents_list`)."
            )
        return profile

    async def _child_session(self, parent: str) -> str:
        """`<parent>/sub/<n>`: the next `n` whose session has no transcript yet."""
        counter = self._counters.setdefault(parent, itertools.count(1))
        taken = {r.session_id for r in self._runs.values()}
        while True:
            session_id = f"{parent}/sub/{next(counter)}"
            if session_id in taken:
                continue
            if not await self._agent.store.read_transcript(session_id):
                return session_id

    def _wait_tool(self) -> Tool:
        async def execute(params: dict[str, Any]) -> dict[str, Any]:
            return await self._wait(params)

        return Tool(
            name="agents_wait",
            description=(
                "Wait for sub-agent runs: `{runIds?, timeoutMs?}` (default: every run this "
                "session started, 60000 ms). Returns `{runs: [{runId, sessionId, profile, "
                "label, status, reply, truncated, error, usage}], running, timedOut}`; "
                "`running` lists the runs still in flight when the wait ended."
            ),
            parameters=WAIT_INPUT,
            output_schema=WAIT_OUTPUT,
            execute=execute,
        )

    async def _wait(self, params: dict[str, Any]) -> dict[str, Any]:
        caller = self._caller("agents_wait")
        runs = self._owned_runs(caller.session_id, params.get("runIds"))
        timeout_ms = params.get("timeoutMs", _DEFAULT_WAIT_MS)
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int):
            raise ToolError(f"`timeoutMs` must be an integer of milliseconds, got {timeout_ms!r}.")
        timeout_ms = max(0, min(timeout_ms, MAX_WAIT_MS))
        handles = {r.handle for r in runs if r.handle is not None and not r.handle.done()}
        if handles and timeout_ms > 0:
            await asyncio.wait(handles, timeout=timeout_ms / 1000)
        running = [r.run_id for r in runs if r.status == "running"]
        return {"runs": [r.result() for r in runs], "running": running, "timedOut": bool(running)}

    def _owned_runs(self, session_id: str, run_ids: object) -> list[SubagentRun]:
        if run_ids is None:
            return [r for r in self._runs.values() if r.parent == session_id]
        if not isinstance(run_ids, list) or not all(
            isinstance(i, str) for i in cast(list[object], run_ids)
        ):
            raise ToolError(f"`runIds` must be a list of run ids, got {run_ids!r}.")
        runs: list[SubagentRun] = []
        for run_id in dict.fromkeys(cast(list[str], run_ids)):
            run = self._runs.get(run_id)
            if run is None or run.parent != session_id:
                raise ToolError(
                    f"no sub-agent run {run_id!r} of session {session_id!r}; use a `runId` "
                    "that `sessions_spawn` returned in this session."
                )
            runs.append(run)
        return runs


def subagent_tools(
    agent: Agent,
    profiles: Iterable[SubagentProfile],
    *,
    max_depth: int = 1,
    max_children: int = 4,
) -> list[Tool]:
    """Build the `Subagents` runtime of `agent`, add its tools to the agent and return them
    (`agents_list`, `sessions_spawn`, `agents_wait`). See `Subagents` for the arguments; call
    it before the agent's first turn.

    Raises:
        ConfigurationError: See `Subagents` and `Agent.add_tools`.
    """
    runtime = Subagents(agent, profiles, max_depth=max_depth, max_children=max_children)
    agent.add_tools(runtime.tools)
    return list(runtime.tools)
