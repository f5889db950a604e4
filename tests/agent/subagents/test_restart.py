"""Sub-agent runs outlive their process: a parent parked on `agents_wait` and its children,
running or finished, are resumed or reported by a new agent over the same database."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from clawcell import Tool
from clawcell.agent import (
    Agent,
    CellFinished,
    ModelRequest,
    ScriptedModel,
    SubagentProfile,
    Subagents,
    exec_call,
    subagent_tools,
    wait_call,
)
from clawcell.store import MemoryStore, StoredValue
from tests.agent._helpers import collect
from tests.conftest import run
from tests.store.conftest import StoreFactory

PARK = """
const h = await sessions_spawn({profile: "slow", task: "long job", label: "job"});
const done = await agents_wait({runIds: [h.runId], timeoutMs: 600000});
return done.runs[0];
"""


def _gate_tool(gate: asyncio.Event) -> Tool:
    async def wait_for_gate(_: dict[str, Any]) -> str:
        await gate.wait()
        return "opened"

    return Tool(name="gate", description="Waits until the test opens it.", execute=wait_for_gate)


def _envelopes(events: list[Any]) -> list[dict[str, Any]]:
    return [e.envelope for e in events if isinstance(e, CellFinished) and e.envelope]


def _parked_run_id(request: ModelRequest) -> str:
    envelope = json.loads(request.messages[-1]["content"][0]["text"])
    assert envelope["status"] == "waiting", envelope
    return str(envelope["runId"])


def _first_process() -> tuple[ScriptedModel, list[str]]:
    parked: list[str] = []

    def note_park(request: ModelRequest) -> str:
        parked.append(_parked_run_id(request))
        return "The job is running; I will check on it later."

    return ScriptedModel([exec_call(PARK), note_park]), parked


def _slow_profile(replies: list[Any], gate: asyncio.Event | None = None) -> SubagentProfile:
    tools = [_gate_tool(gate)] if gate is not None else []
    return SubagentProfile(
        name="slow", model=ScriptedModel(replies, name="slow-model"), tools=tools
    )


async def _park_then_close(store: Any, *, finish_first: bool) -> tuple[str, Subagents]:
    """Process one: the parent spawns a child and parks on its wait; the turn ends; the
    child either finishes (then the agent closes) or is still running when it closes."""
    gate = asyncio.Event()
    parent, parked = _first_process()
    child_turns: list[Any] = [exec_call("return await gate();"), "first-process answer"]
    agent = Agent(model=parent, store=store, limits={"timeout_ms": 300})
    runtime = Subagents(agent, [_slow_profile(child_turns, gate)])
    agent.add_tools(runtime.tools)
    events = await collect(agent, "chat", "start the long job")
    assert [e["status"] for e in _envelopes(events)] == ["waiting"]
    if finish_first:
        gate.set()
        while runtime.runs("chat")[0]["status"] == "running":
            await asyncio.sleep(0.01)
    await agent.aclose()
    await store.close()
    return parked[0], runtime


def _second_process(store: Any, parent: ScriptedModel, answer: str) -> Agent:
    agent = Agent(model=parent, store=store)
    subagent_tools(agent, [_slow_profile([answer])])
    return agent


def test_a_parked_wait_resumes_a_child_interrupted_by_a_restart(
    new_durable_store: StoreFactory,
) -> None:
    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        cell_run, first = await _park_then_close(new_durable_store(), finish_first=False)
        store = new_durable_store()
        parent = ScriptedModel([wait_call(cell_run), "done"])
        async with _second_process(store, parent, "second-process answer") as agent:
            events = await collect(agent, "chat", "is it done?")
            child = await agent.transcript("chat/sub/1")
        await store.close()
        return first.runs("chat"), _envelopes(events), child

    closed, envelopes, child = run(main())
    # The first process left the run in flight (not cancelled) when it closed.
    assert [(r["status"], r["error"]) for r in closed] == [("running", None)]
    assert [e["status"] for e in envelopes] == ["completed"]
    result = envelopes[0]["value"]
    assert (result["status"], result["reply"], result["label"]) == (
        "completed", "second-process answer", "job"
    )  # fmt: skip
    # The child's session holds both turns: the interrupted one and the resumed one.
    users = [m["content"][0]["text"] for m in child if m["role"] == "user"]
    assert users[0] == "long job"
    assert users[1].startswith("The process running this task stopped before you finished")
    assert users[1].endswith("long job")
    assert child[-1]["role"] == "assistant"


def test_a_child_that_finished_before_the_restart_is_reported_not_run_again(
    new_durable_store: StoreFactory,
) -> None:
    again = "return await agents_wait({timeoutMs: 0});"

    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        cell_run, _ = await _park_then_close(new_durable_store(), finish_first=True)
        store = new_durable_store()
        parent = ScriptedModel([wait_call(cell_run), exec_call(again), "done"])
        # A model with no turns: the child must not run again.
        agent = Agent(model=parent, store=store)
        subagent_tools(agent, [_slow_profile([])])
        async with agent:
            events = await collect(agent, "chat", "is it done?")
            child = await agent.transcript("chat/sub/1")
        await store.close()
        return _envelopes(events), child

    envelopes, child = run(main())
    assert [e["status"] for e in envelopes] == ["completed", "completed"]
    parked, listed = envelopes[0]["value"], envelopes[1]["value"]
    assert (parked["status"], parked["reply"]) == ("completed", "first-process answer")
    assert listed["running"] == [] and listed["timedOut"] is False
    assert [(r["status"], r["reply"]) for r in listed["runs"]] == [
        ("completed", "first-process answer")
    ]
    assert [m["role"] for m in child].count("user") == 1


def test_a_new_cell_after_a_restart_waits_for_the_resumed_child(
    new_durable_store: StoreFactory,
) -> None:
    later = "return await agents_wait({timeoutMs: 30000});"

    async def main() -> list[dict[str, Any]]:
        await _park_then_close(new_durable_store(), finish_first=False)
        store = new_durable_store()
        parent = ScriptedModel([exec_call(later), "done"])
        async with _second_process(store, parent, "resumed answer") as agent:
            events = await collect(agent, "chat", "collect the results")
        await store.close()
        return _envelopes(events)

    (envelope,) = run(main())
    runs = envelope["value"]["runs"]
    assert [(r["status"], r["reply"], r["sessionId"]) for r in runs] == [
        ("completed", "resumed answer", "chat/sub/1")
    ]


def test_a_run_of_a_profile_this_process_lacks_is_reported_failed(
    new_durable_store: StoreFactory,
) -> None:
    async def main() -> dict[str, Any]:
        await _park_then_close(new_durable_store(), finish_first=False)
        store = new_durable_store()
        other = SubagentProfile(name="other", model=ScriptedModel([]))
        agent = Agent(
            model=ScriptedModel([exec_call("return await agents_wait();"), "ok"]), store=store
        )
        subagent_tools(agent, [other])
        async with agent:
            (envelope,) = _envelopes(await collect(agent, "chat", "status?"))
        await store.close()
        return envelope["value"]["runs"][0]

    result = run(main())
    assert result["status"] == "failed"
    assert result["error"] == (
        "interrupted by a restart and not resumed: this process has no sub-agent profile "
        "'slow' (have ['other'])."
    )


def test_an_unreadable_record_is_skipped_and_the_others_are_kept(
    new_durable_store: StoreFactory,
) -> None:
    async def main() -> dict[str, Any]:
        await _park_then_close(new_durable_store(), finish_first=True)
        store = new_durable_store()
        await store.put("chat\x1fsubagents", "sub_broken", StoredValue(json='{"runId": 1}'))
        agent = Agent(
            model=ScriptedModel([exec_call("return await agents_wait();"), "ok"]), store=store
        )
        subagent_tools(agent, [_slow_profile([])])
        async with agent:
            (envelope,) = _envelopes(await collect(agent, "chat", "status?"))
        await store.close()
        return envelope["value"]

    value = run(main())
    assert [r["status"] for r in value["runs"]] == ["completed"]


def _stored_record(**changes: Any) -> StoredValue:
    record = {
        "runId": "sub_elsewhere",
        "sessionId": "chat/sub/1",
        "parent": "chat",
        "profile": "slow",
        "label": None,
        "task": "long job",
        "depth": 1,
        "startedAt": time.time() - 120,
        "status": "running",
        "reply": None,
        "error": None,
        "usage": None,
        "owner": "other-host:1:abc",
        "aliveAt": time.time(),
        "interrupted": False,
        "resumes": 0,
        **changes,
    }
    return StoredValue(json=json.dumps(record))


def _wait_once(record: StoredValue, timeout_ms: int) -> tuple[dict[str, Any], list[Any]]:
    """A new process finds `record` in its store and waits for the session's runs once."""

    async def main() -> tuple[dict[str, Any], list[Any]]:
        store = MemoryStore()
        await store.put("chat\x1fsubagents", "sub_elsewhere", record)
        cell = f"return await agents_wait({{timeoutMs: {timeout_ms}}});"
        parent = ScriptedModel([exec_call(cell), "ok"])
        async with _second_process(store, parent, "resumed answer") as agent:
            (envelope,) = _envelopes(await collect(agent, "chat", "status?"))
            child = await agent.transcript("chat/sub/1")
        return envelope["value"], child

    return run(main())


def test_a_run_whose_process_went_silent_is_resumed_as_after_a_crash() -> None:
    silent = _stored_record(aliveAt=time.time() - 3600)  # no heartbeat for an hour
    value, child = _wait_once(silent, 30_000)
    assert [(r["runId"], r["status"], r["reply"]) for r in value["runs"]] == [
        ("sub_elsewhere", "completed", "resumed answer")
    ]
    assert child[0]["content"][0]["text"].endswith("long job")  # the resume message


def test_a_run_another_live_process_drives_is_waited_for_not_taken_over() -> None:
    value, child = _wait_once(_stored_record(), 1_200)  # its heartbeat is fresh
    assert value["running"] == ["sub_elsewhere"] and value["timedOut"] is True
    assert child == []  # not resumed here
