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
error) cancels its children and theirs.

Every run has a record in the store (`RunBook`), so runs outlive their process: closing the
agent with a store of its caller's (one that outlives it) leaves its runs in flight
`interrupted` rather than cancelled, and a later process over the same store resumes them
(their child turns carry on in the same child sessions): its registry's sweep finds them in
the store's index of runs in flight within a third of the agent's turn lease, and the parent
session's next use of the tools does too — a parked `agents_wait` continued by `wait`
included (it is replay-safe). A worker that dies mid-run is noticed the same way once its
records go a lease without a heartbeat.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import Iterable
from typing import Any, cast

from ... import Tool
from ...errors import ConfigurationError, ToolError
from ...store import FirstWriter, StoredValue
from .._agent import Agent
from .._caller import Caller, current_caller
from ._contracts import MAX_WAIT_MS
from ._profile import SubagentProfile, bounded, inherited_policy, profiles_by_name
from ._registry import RunRegistry
from ._run import SubagentRun
from ._run_book import KEEP_FINISHED_RUNS
from ._tools import make_tools

__all__ = ["SubagentProfile", "Subagents", "subagent_tools"]

_DEFAULT_WAIT_MS = 60_000
_STOP_GRACE_S = 5.0
_POLL_S = 1.0  # how often a wait re-reads runs another process drives
_CHILDREN = "\x1fchildren"  # the derived session whose entries claim child session numbers


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
        keep_finished_runs: Finished run records kept per parent session, the newest by
            start (1-100,000; default 100); older ones are dropped as runs end. Runs in
            flight are always kept; child transcripts are never dropped.

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
        keep_finished_runs: int = KEEP_FINISHED_RUNS,
    ) -> None:
        self._max_depth = bounded("max_depth", max_depth, 1, 5)
        self._max_children = bounded("max_children", max_children, 1, 32)
        keep = bounded("keep_finished_runs", keep_finished_runs, 1, 100_000)
        self._profiles = profiles_by_name(profiles)
        self._agent = agent
        self.tools: tuple[Tool, ...] = make_tools(self)
        self._children = {
            name: self._child_agent(profile) for name, profile in self._profiles.items()
        }
        self._owners = {id(a._settings) for a in (agent, *self._children.values())}  # pyright: ignore[reportPrivateUsage]
        # A store the caller gave outlives the agent: runs in flight at close are resumable.
        self._registry = RunRegistry(
            agent.store,
            self._children,
            durable=not agent._owns_store,  # pyright: ignore[reportPrivateUsage]
            keep=keep,
            lease_seconds=agent.turn_lease_seconds,
        )
        self._runs = self._registry.runs
        self._depths = self._registry.depths
        self._counters: dict[str, itertools.count[int]] = {}
        self._spawn_lock = asyncio.Lock()
        agent.attach(self)
        for child in self._children.values():
            child.attach(self)
        self._registry.tend()  # a worker sweeps for dead workers' runs from the start

    def _child_agent(self, profile: SubagentProfile) -> Agent:
        nested = self.tools if self._max_depth > 1 else ()
        tools = [*profile.tools, *nested]
        parent = self._agent._options.policy  # pyright: ignore[reportPrivateUsage]
        return Agent(
            model=profile.model,
            tools=tools,
            store=self._agent.store,
            policy=inherited_policy(parent, [tool.name for tool in tools]),
            instructions=profile.instructions,
            limits=profile.limits,
            max_model_turns=profile.max_model_turns,
            max_turn_seconds=profile.max_turn_seconds,
            # A resumed child turn takes over its session's turn lease: as soon as a run's.
            turn_lease_seconds=self._agent.turn_lease_seconds,
        )

    # -- the host API -------------------------------------------------------------------

    def runs(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Every run this process knows (or those `session_id` started) as `agents_wait`
        reports them; `await resume(session_id)` first to include earlier processes' runs."""
        return [r.result() for r in self._runs.values() if session_id in (None, r.parent)]

    async def resume(self, session_id: str) -> list[str]:
        """Read the runs `session_id` started from the store and resume those whose process
        is gone (what the tools do on their own when that session next uses them); returns
        the ids of the runs resumed here."""
        self._registry.tend()
        return await self._registry.sync(session_id)

    async def sweep(self) -> list[str]:
        """Resume now the runs whose process is gone, of every parent session in the store
        (what the runtime does on its own every third of the agent's turn lease); returns the
        ids of the runs resumed here."""
        self._registry.tend()
        return await self._registry.sweep()

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
        tasks = self._registry.cancel_tree(session_id, "cancelled: the parent session was stopped.")
        await asyncio.gather(*tasks, return_exceptions=True)
        return len(tasks)

    async def turn_stopped(self, session_id: str) -> None:
        """A turn of `session_id` stopped: its children are cancelled, and awaited for at
        most `_STOP_GRACE_S` (a child's turn writes its cancelled results as it stops)."""
        tasks = self._registry.cancel_tree(session_id, "cancelled: the parent turn stopped.")
        if tasks:
            await asyncio.wait(tasks, timeout=_STOP_GRACE_S)

    async def aclose(self) -> None:
        """Stop every run and close the child agents (the parent calls this as it closes).

        With a store the agent does not own, runs in flight are left `interrupted` for a
        later process to resume; otherwise they are cancelled."""
        if self._registry.closed:
            return
        await self._registry.close()
        for child in self._children.values():
            await child.aclose()

    # -- the tools ----------------------------------------------------------------------

    def _caller(self, tool: str) -> Caller:
        caller = current_caller.get()
        if caller is None or id(caller.owner) not in self._owners:
            raise ToolError(
                f"`{tool}` works only in a cell of the agent it was made for (an agent turn); "
                "it has no session to act for here. Give each agent its own sub-agent tools "
                "(`subagent_tools(agent, profiles)`).",
                code="wrong_agent",
            )
        if self._registry.closed:
            raise ToolError(f"`{tool}`: the agent is closing; no sub-agent can run.")
        return caller

    async def listing(self, params: dict[str, Any]) -> dict[str, Any]:
        """`agents_list`: the profiles, this session's runs in flight, its depth."""
        caller = current_caller.get()
        session = None
        if caller is not None and id(caller.owner) in self._owners:
            session = caller.session_id
            await self._registry.sync(session)
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

    def _profile_view(self, profile: SubagentProfile) -> dict[str, Any]:
        nested = [t.name for t in self.tools] if self._max_depth > 1 else []
        return {
            "name": profile.name,
            "description": profile.description,
            "model": profile.model.name,
            "tools": [t.name for t in profile.tools] + nested,
        }

    async def spawn(self, params: dict[str, Any]) -> dict[str, Any]:
        """`sessions_spawn`: check the limits, record the run, start it."""
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
        await self._registry.sync(caller.session_id)
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
            run = SubagentRun(
                run_id=f"sub_{uuid.uuid4().hex[:16]}",
                session_id=await self._child_session(caller.session_id),
                parent=caller.session_id,
                profile=profile.name,
                label=label,
                task=task,
                depth=depth,
            )
            await self._registry.start(run)
        return {
            "runId": run.run_id,
            "sessionId": run.session_id,
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
        """`<parent>/sub/<n>`: the next `n` whose session has no transcript yet, taken in the
        store (`put_new` on an entry of `<parent>\x1fchildren`), so two workers spawning for
        one parent at once never get the same child session."""
        counter = self._counters.setdefault(parent, itertools.count(1))
        taken = {r.session_id for r in self._runs.values()}
        store = self._agent.store
        while True:
            n = next(counter)
            session_id = f"{parent}/sub/{n}"
            if session_id in taken or await store.read_transcript(session_id):
                continue
            if not isinstance(store, FirstWriter):  # a store without it: one process only
                return session_id
            if await store.put_new(parent + _CHILDREN, str(n), StoredValue(json="true")):
                return session_id

    async def wait(self, params: dict[str, Any]) -> dict[str, Any]:
        """`agents_wait`: wait for this session's runs (here or in another process)."""
        caller = self._caller("agents_wait")
        timeout_ms = params.get("timeoutMs", _DEFAULT_WAIT_MS)
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int):
            raise ToolError(f"`timeoutMs` must be an integer of milliseconds, got {timeout_ms!r}.")
        await self._registry.sync(caller.session_id)
        runs = self._owned_runs(caller.session_id, params.get("runIds"))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0, min(timeout_ms, MAX_WAIT_MS)) / 1000
        while (remaining := deadline - loop.time()) > 0:
            local = {r.handle for r in runs if r.handle is not None and not r.handle.done()}
            remote = [r for r in runs if r.handle is None and r.status == "running"]
            if not local and not remote:
                break
            step = min(remaining, _POLL_S) if remote else remaining
            if local:
                await asyncio.wait(local, timeout=step)
            else:
                await asyncio.sleep(step)
            if remote:
                await self._registry.sync(caller.session_id)
                runs = [self._runs.get(r.run_id, r) for r in runs]
        if self._registry.closed and self._registry.durable:
            # The agent is closing: this wait must not settle with runs it left interrupted
            # (the parked cell keeps the call pending; a later process waits again).
            await asyncio.Event().wait()
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
    keep_finished_runs: int = KEEP_FINISHED_RUNS,
) -> list[Tool]:
    """Build the `Subagents` runtime of `agent`, add its tools to the agent and return them
    (`agents_list`, `sessions_spawn`, `agents_wait`). See `Subagents` for the arguments; call
    it before the agent's first turn.

    Raises:
        ConfigurationError: See `Subagents` and `Agent.add_tools`.
    """
    runtime = Subagents(
        agent,
        profiles,
        max_depth=max_depth,
        max_children=max_children,
        keep_finished_runs=keep_finished_runs,
    )
    agent.add_tools(runtime.tools)
    return list(runtime.tools)
