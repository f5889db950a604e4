"""Sub-agents: a cell fans out runs and waits; limits refuse; stopping the parent cancels."""

from __future__ import annotations

import asyncio
import json
from contextlib import aclosing
from typing import Any

import pytest

from clawcell import Tool
from clawcell.agent import (
    Agent,
    CellFinished,
    ModelRequest,
    ScriptedModel,
    SubagentProfile,
    Subagents,
    ToolCall,
    exec_call,
    subagent_tools,
    wait_call,
)
from clawcell.errors import ConfigurationError, ToolError
from tests.agent._helpers import collect, last_of
from tests.conftest import run

FAN_OUT = """
const handles = await Promise.all(["a", "b", "c"].map((topic) =>
  sessions_spawn({profile: "researcher", task: `topic ${topic}`, label: topic})));
const done = await agents_wait({runIds: handles.map((h) => h.runId), timeoutMs: 30000});
return {handles, done};
"""


def _answer(request: ModelRequest) -> str:
    return f"answer about {request.messages[0]['content'][0]['text']}"


def _researcher(runs: int = 3) -> SubagentProfile:
    return SubagentProfile(
        name="researcher",
        description="Looks one topic up.",
        model=ScriptedModel([_answer] * runs, name="small"),
    )


def _gate_tool(gate: asyncio.Event, started: asyncio.Event | None = None) -> Tool:
    async def wait_for_gate(_: dict[str, Any]) -> str:
        if started is not None:
            started.set()
        await gate.wait()
        return "opened"

    return Tool(name="gate", description="Waits until the test opens it.", execute=wait_for_gate)


def _slow(
    gate: asyncio.Event, started: asyncio.Event | None = None, runs: int = 1
) -> SubagentProfile:
    def turn(request: ModelRequest) -> ToolCall | str:
        # Runs of one profile share the model: answer by where this run's transcript is.
        if request.messages[-1]["role"] == "user":
            return exec_call("return await gate();")
        return "slow answer"

    return SubagentProfile(
        name="slow",
        model=ScriptedModel([turn] * (2 * runs), name="slow-model"),
        tools=[_gate_tool(gate, started)],
        limits={"timeout_ms": 60_000},
    )


def _value(events: list[Any], index: int = -1) -> Any:
    finished = [e for e in events if isinstance(e, CellFinished)]
    envelope = finished[index].envelope
    assert envelope is not None and envelope["status"] == "completed", envelope
    return envelope["value"]


def test_a_cell_fans_out_three_sub_agents_and_returns_their_answers() -> None:
    async def main() -> tuple[list[Any], list[dict[str, Any]], list[str]]:
        async with Agent(model=ScriptedModel([exec_call(FAN_OUT), "all three done"])) as agent:
            subagent_tools(agent, [_researcher()])
            events = await collect(agent, "chat", "research a, b and c")
            child = await agent.transcript("chat/sub/1")
            sessions = sorted(info.session_id for info in await agent.sessions())
            return events, child, sessions

    events, child, sessions = run(main())
    value = _value(events)
    assert sorted(h["sessionId"] for h in value["handles"]) == [
        "chat/sub/1", "chat/sub/2", "chat/sub/3"
    ]  # fmt: skip
    assert {h["status"] for h in value["handles"]} == {"running"}
    runs = value["done"]["runs"]
    assert [r["reply"] for r in runs] == [f"answer about topic {t}" for t in "abc"]
    assert [r["status"] for r in runs] == ["completed"] * 3
    assert [r["label"] for r in runs] == ["a", "b", "c"]
    assert all(r["usage"]["modelTurns"] == 1 for r in runs)
    assert value["done"]["running"] == [] and value["done"]["timedOut"] is False
    # each child's transcript is in the parent's store under its own session id
    assert [m["role"] for m in child] == ["user", "assistant"]
    assert sessions == ["chat", "chat/sub/1", "chat/sub/2", "chat/sub/3"]


def test_a_short_wait_reports_a_run_still_running_and_a_later_wait_gets_it() -> None:
    gate = asyncio.Event()
    first = """
    const handle = await sessions_spawn({profile: "slow", task: "take your time"});
    const early = await agents_wait({runIds: [handle.runId], timeoutMs: 20});
    return {handle, early};
    """

    def open_gate_and_wait_again(_: ModelRequest) -> ToolCall:
        gate.set()
        return exec_call("return await agents_wait({timeoutMs: 30000});")

    parent = ScriptedModel([exec_call(first), open_gate_and_wait_again, "done"])

    async def main() -> list[Any]:
        async with Agent(model=parent) as agent:
            subagent_tools(agent, [_slow(gate)])
            return await collect(agent, "chat", "go")

    events = run(main())
    early = _value(events, 0)
    run_id = early["handle"]["runId"]
    assert early["early"]["running"] == [run_id]
    assert early["early"]["timedOut"] is True
    assert early["early"]["runs"][0]["status"] == "running"
    assert early["early"]["runs"][0]["reply"] is None
    later = _value(events, 1)
    assert later["running"] == []
    assert later["runs"][0]["runId"] == run_id
    assert later["runs"][0]["status"] == "completed"
    assert later["runs"][0]["reply"] == "slow answer"
    assert later["runs"][0]["usage"]["cells"] == 1


def test_agents_list_shows_the_profiles_and_the_runs_in_flight() -> None:
    gate = asyncio.Event()
    cell = """
    const handle = await sessions_spawn({profile: "slow", task: "t", label: "first"});
    return await agents_list();
    """

    async def main() -> Any:
        async with Agent(model=ScriptedModel([exec_call(cell), "ok"])) as agent:
            subagent_tools(agent, [_researcher(), _slow(gate)], max_children=3)
            events = await collect(agent, "chat", "go")
            gate.set()
            return _value(events)

    listed = run(main())
    assert listed["profiles"] == [
        {"name": "researcher", "description": "Looks one topic up.", "model": "small",
         "tools": []},
        {"name": "slow", "description": "", "model": "slow-model", "tools": ["gate"]},
    ]  # fmt: skip
    assert [(r["profile"], r["label"], r["status"]) for r in listed["runs"]] == [
        ("slow", "first", "running")
    ]
    assert listed["depth"] == 0 and listed["maxDepth"] == 1 and listed["canSpawn"] is True


def test_the_fan_out_limit_refuses_a_spawn_beyond_max_children() -> None:
    gate = asyncio.Event()
    cell = """
    await sessions_spawn({profile: "slow", task: "one"});
    await sessions_spawn({profile: "slow", task: "two"});
    try { await sessions_spawn({profile: "slow", task: "three"}); return "spawned"; }
    catch (error) { return error.message; }
    """

    async def main() -> Any:
        async with Agent(model=ScriptedModel([exec_call(cell), "ok"])) as agent:
            subagent_tools(agent, [_slow(gate, runs=2)], max_children=2)
            events = await collect(agent, "chat", "go")
            gate.set()
            return _value(events)

    message = run(main())
    assert "fan-out limit" in message and "`max_children` is 2" in message


def test_the_depth_limit_refuses_a_spawn_beyond_max_depth() -> None:
    # The parent spawns `mid` (depth 1), which spawns `leaf` (depth 2 = max_depth); the leaf's
    # own spawn is refused, and the refusal travels back up as replies.
    leaf_cell = """
    try { await sessions_spawn({profile: "leaf", task: "deeper"}); return "spawned"; }
    catch (error) { return error.message; }
    """
    mid_cell = """
    const h = await sessions_spawn({profile: "leaf", task: "go deeper"});
    return (await agents_wait({runIds: [h.runId]})).runs[0].reply;
    """
    parent_cell = """
    const h = await sessions_spawn({profile: "mid", task: "delegate"});
    const done = await agents_wait({runIds: [h.runId]});
    return {session: h.sessionId, reply: done.runs[0].reply};
    """

    def last_value(request: ModelRequest) -> str:
        envelope = json.loads(request.messages[-1]["content"][0]["text"])
        return str(envelope["value"])

    # Each cell waits for the level below it, so the three cells' budgets overlap: roomy
    # budgets, or a loaded machine parks a cell past the default 10 s and its value is gone.
    roomy = {"timeout_ms": 60_000}
    profiles = [
        SubagentProfile(
            name="mid", model=ScriptedModel([exec_call(mid_cell), last_value]), limits=roomy
        ),
        SubagentProfile(
            name="leaf", model=ScriptedModel([exec_call(leaf_cell), last_value]), limits=roomy
        ),
    ]
    parent = ScriptedModel([exec_call(parent_cell), "ok"])

    async def main() -> Any:
        async with Agent(model=parent, limits=roomy) as agent:
            subagent_tools(agent, profiles, max_depth=2)
            return _value(await collect(agent, "chat", "go"))

    value = run(main())
    assert value["session"] == "chat/sub/1"
    assert "depth limit" in value["reply"]
    assert "'chat/sub/1/sub/1' is at depth 2" in value["reply"]


def test_closing_the_parent_agent_cancels_its_children() -> None:
    gate, started = asyncio.Event(), asyncio.Event()
    cell = 'return (await sessions_spawn({profile: "slow", task: "forever"})).runId;'

    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        agent = Agent(model=ScriptedModel([exec_call(cell), "spawned"]))
        runtime = Subagents(agent, [_slow(gate, started)])
        agent.add_tools(runtime.tools)
        await collect(agent, "chat", "go")
        await started.wait()  # the child's cell is inside its blocking tool
        assert [r["status"] for r in runtime.runs("chat")] == ["running"]
        await agent.aclose()
        return runtime.runs("chat"), runtime.runs()

    mine, every = run(main())
    assert [r["status"] for r in mine] == ["cancelled"]
    assert "parent agent closed" in (mine[0]["error"] or "")
    assert mine == every


def test_a_stopped_parent_turn_cancels_its_children_and_their_transcripts_say_so() -> None:
    gate, started = asyncio.Event(), asyncio.Event()
    cell = """
    await sessions_spawn({profile: "slow", task: "forever"});
    text("spawned");
    await gate();
    """

    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        agent = Agent(model=ScriptedModel([exec_call(cell), "never"]))
        parent_gate = asyncio.Event()
        runtime = Subagents(agent, [_slow(gate, started)])
        agent.add_tools(runtime.tools)
        agent.add_tools([_gate_tool(parent_gate)])
        async with agent:
            async with aclosing(agent.run("chat", "go")) as events:
                async for event in events:
                    if event.type == "cell_output":
                        await started.wait()  # the child is running; now the user hits Stop
                        break
            runs = runtime.runs("chat")
            child = await agent.transcript(runs[0]["sessionId"])
            return runs, child

    runs, child = run(main())
    assert [r["status"] for r in runs] == ["cancelled"]
    assert "parent turn stopped" in (runs[0]["error"] or "")
    # The child's cell was cancelled (an error result), then its turn recorded as stopped.
    result = [e for e in child if e["role"] == "toolResult"][-1]
    assert result["isError"] is True
    assert "cancelled" in result["content"][0]["text"]
    assert child[-1]["role"] == "assistant" and child[-1]["stopReason"] == "aborted"


def test_cancel_children_is_what_a_stop_button_calls() -> None:
    gate, started = asyncio.Event(), asyncio.Event()
    cell = 'return (await sessions_spawn({profile: "slow", task: "forever"})).runId;'

    async def main() -> tuple[int, int, list[dict[str, Any]]]:
        async with Agent(model=ScriptedModel([exec_call(cell), "spawned"])) as agent:
            subagent_tools(agent, [_slow(gate, started)])
            await collect(agent, "chat", "go")
            await started.wait()
            other = await agent.cancel_children("another-session")
            cancelled = await agent.cancel_children("chat")
            listed = await agent.transcript("chat/sub/1")
            return other, cancelled, listed

    other, cancelled, child = run(main())
    assert (other, cancelled) == (0, 1)
    assert [e for e in child if e["role"] == "toolResult"][-1]["isError"] is True


def test_a_wait_longer_than_the_cell_budget_parks_the_cell_and_wait_resumes_it() -> None:
    gate = asyncio.Event()
    cell = """
    const h = await sessions_spawn({profile: "slow", task: "long job"});
    const done = await agents_wait({runIds: [h.runId], timeoutMs: 60000});
    return done.runs[0].reply;
    """

    def open_gate_and_resume(request: ModelRequest) -> ToolCall:
        envelope = json.loads(request.messages[-1]["content"][0]["text"])
        assert envelope["status"] == "waiting"
        gate.set()
        return wait_call(envelope["runId"])

    parent = ScriptedModel([exec_call(cell), open_gate_and_resume, "done"])

    async def main() -> list[Any]:
        async with Agent(model=parent, limits={"timeout_ms": 200}) as agent:
            subagent_tools(agent, [_slow(gate)])
            return await collect(agent, "chat", "go")

    events = run(main())
    statuses = [(e.envelope or {}).get("status") for e in events if isinstance(e, CellFinished)]
    assert statuses == ["waiting", "completed"]
    assert last_of(events, CellFinished).envelope["value"] == "slow answer"


def test_spawn_refuses_an_unknown_profile_and_wait_a_foreign_run() -> None:
    cell = """
    const out = [];
    try { await sessions_spawn({profile: "nobody", task: "x"}); } catch (e) { out.push(e.message); }
    try { await agents_wait({runIds: ["sub_nope"]}); } catch (e) { out.push(e.message); }
    return out;
    """

    async def main() -> Any:
        async with Agent(model=ScriptedModel([exec_call(cell), "ok"])) as agent:
            subagent_tools(agent, [_researcher()])
            return _value(await collect(agent, "chat", "go"))

    unknown, foreign = run(main())
    assert "no sub-agent profile 'nobody'" in unknown and "['researcher']" in unknown
    assert "no sub-agent run 'sub_nope' of session 'chat'" in foreign


def test_the_tools_refuse_to_run_outside_an_agent_turn() -> None:
    async def main() -> str:
        async with Agent(model=ScriptedModel([])) as agent:
            tools = {t.name: t for t in subagent_tools(agent, [_researcher()])}
            try:
                await tools["sessions_spawn"].execute({"profile": "researcher", "task": "x"})
            except ToolError as exc:
                return str(exc)
            return "ran"

    assert "works only in a cell of the agent" in run(main())


@pytest.mark.parametrize(
    ("profiles", "options", "message"),
    [
        ([], {}, "`profiles` is empty"),
        (["x"], {}, "must be `SubagentProfile` values"),
        (None, {"max_depth": 0}, "`max_depth` must be an integer from 1 to 5"),
        (None, {"max_children": 99}, "`max_children` must be an integer from 1 to 32"),
    ],
)
def test_bad_configuration_is_refused_with_what_to_change(
    profiles: list[Any] | None, options: dict[str, Any], message: str
) -> None:
    async def main() -> None:
        async with Agent(model=ScriptedModel([])) as agent:
            subagent_tools(agent, profiles if profiles is not None else [_researcher()], **options)

    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")) as caught:
        run(main())
    assert caught.value.message


def test_a_profile_name_and_duplicate_profiles_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="profile name"):
        SubagentProfile(name="bad name", model=ScriptedModel([]))

    async def main() -> None:
        async with Agent(model=ScriptedModel([])) as agent:
            subagent_tools(agent, [_researcher(), _researcher()])

    with pytest.raises(ConfigurationError, match="two sub-agent profiles are named"):
        run(main())


def test_tools_cannot_be_added_once_a_session_is_open() -> None:
    async def main() -> None:
        async with Agent(model=ScriptedModel(["hi"])) as agent:
            await collect(agent, "chat", "hello")
            subagent_tools(agent, [_researcher()])

    with pytest.raises(ConfigurationError, match="before the agent's first turn"):
        run(main())


def test_the_tools_declare_their_results_to_the_model() -> None:
    cell = """
    return await Promise.all(["agents_list", "sessions_spawn", "agents_wait"].map(
      async (name) => (await API.read(`tools/${name}.d.ts`)).content));
    """

    async def main() -> Any:
        async with Agent(model=ScriptedModel([exec_call(cell), "ok"])) as agent:
            subagent_tools(agent, [_researcher()])
            return _value(await collect(agent, "chat", "go"))

    listed, spawn, wait = run(main())
    assert "canSpawn: boolean" in listed and "maxChildren: number" in listed
    assert 'Promise<{ profile: string; runId: string; sessionId: string; status: "running" }>' in (
        spawn
    )
    assert '"running" | "completed" | "failed" | "cancelled"' in wait
    assert "running: Array<string>" in wait and "reply: string | null" in wait
