"""A child sub-agent is held to its parent's policy: the parent's `deny` and `ask` lists."""

from __future__ import annotations

import json
from typing import Any

import pytest

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
from clawcell.agent._subagents._profile import inherited_policy
from clawcell.approvals import ToolPolicy
from tests.agent._helpers import collect
from tests.conftest import run

CHILD_CELL = """
const outcomes = {};
for (const name of ["wipe", "wipe_all"]) {
  try {
    await globalThis[name]({});
    outcomes[name] = "ran";
  } catch (error) {
    outcomes[name] = error.code;
  }
}
console.log(JSON.stringify(outcomes));
return await deploy({});
"""

SPAWN = """
const { runId } = await sessions_spawn({ profile: "helper", task: "tidy up" });
return await agents_wait({ runIds: [runId], timeoutMs: 30000 });
"""


def _recording(name: str, calls: list[str]) -> Tool:
    async def execute(_: dict[str, Any]) -> str:
        calls.append(name)
        return "done"

    return Tool(name=name, description=f"Records a call of {name}.", execute=execute)


def _child_turn(request: ModelRequest) -> ScriptedTurn:
    if request.messages[-1]["role"] == "user":
        return exec_call(CHILD_CELL)
    return "child done"


def _parent_turn(request: ModelRequest) -> ScriptedTurn:
    if request.messages[-1]["role"] == "user":
        return exec_call(SPAWN)
    return "parent done"


def test_a_child_cannot_run_a_tool_its_parents_policy_denies() -> None:
    calls: list[str] = []

    async def main() -> list[dict[str, Any]]:
        profile = SubagentProfile(
            name="helper",
            model=ScriptedModel([_child_turn] * 2),
            tools=[_recording(name, calls) for name in ("wipe", "wipe_all", "deploy")],
        )
        parent_tools = [_recording("wipe", calls), _recording("deploy", calls)]
        agent = Agent(
            model=ScriptedModel([_parent_turn] * 2),
            tools=parent_tools,
            policy={"deny": ["wipe*"], "ask": ["deploy"]},
            approval_ttl_seconds=60,
        )
        async with agent:
            subagent_tools(agent, [profile])
            await collect(agent, "main", "go")
            return await agent.transcript("main/sub/1")

    child = run(main())
    envelope = json.loads(next(e for e in child if e["role"] == "toolResult")["content"][0]["text"])
    assert calls == []  # `wipe` and `wipe_all` were refused, `deploy` waits for a person
    assert (envelope["status"], envelope["reason"]) == ("waiting", "approval")
    assert envelope["output"] == [
        {"type": "text", "text": '{"wipe":"approval_denied","wipe_all":"approval_denied"}'}
    ]
    assert [(a["tool"], a["reason"]) for a in envelope["pendingApprovals"]] == [
        ("deploy", "the session policy asks")
    ]


@pytest.mark.parametrize(
    ("parent", "tools", "expected"),
    [
        (None, ["a"], None),
        (ToolPolicy(allow=["a"]), ["a"], None),
        (ToolPolicy(deny=["a", "gone"], ask=["b*"]), ["a"], ToolPolicy(deny=["a"], ask=["b*"])),
        (ToolPolicy(deny=["gone"]), ["a"], None),
    ],
    ids=["no-policy", "allow-is-not-inherited", "deny-and-ask", "names-of-no-child-tool"],
)
def test_the_inherited_policy_keeps_deny_and_ask(
    parent: ToolPolicy | None, tools: list[str], expected: ToolPolicy | None
) -> None:
    assert inherited_policy(parent, tools) == expected


def test_sub_agent_tools_in_another_agents_cell_say_whose_they_are() -> None:
    cell = """
try {
  await sessions_spawn({ profile: "helper", task: "t" });
  return "ran";
} catch (error) {
  return [error.code, error.message];
}
"""

    async def main() -> Any:
        owner = Agent(model=ScriptedModel([]))
        profile = SubagentProfile(name="helper", model=ScriptedModel([]))
        tools = subagent_tools(owner, [profile])
        other = Agent(model=ScriptedModel([exec_call(cell), "done"]), tools=tools)
        async with owner, other:
            await collect(other, "chat", "go")
            transcript = await other.transcript("chat")
        result = next(e for e in transcript if e["role"] == "toolResult")
        return json.loads(result["content"][0]["text"])["value"]

    assert run(main()) == [
        "wrong_agent",
        "`sessions_spawn` works only in a cell of the agent it was made for (an agent turn); it "
        "has no session to act for here. Give each agent its own sub-agent tools "
        "(`subagent_tools(agent, profiles)`).",
    ]
