"""Approvals in the agent loop: a turn pauses on approvals and `Agent.decide` continues it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell import InputError, Limits, Tool
from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.approvals import ApprovalAnswer


def _agent(model: ScriptedModel, runs: list[dict[str, Any]]) -> Agent:
    async def pay(params: dict[str, Any]) -> dict[str, Any]:
        runs.append(params)
        return {"paid": params["amount"]}

    tool = Tool(name="pay", execute=pay, approval="always")
    return Agent(model=model, tools=[tool], limits=Limits(timeout_ms=60_000))


async def _collect(events: Any) -> list[Any]:
    return [event async for event in events]


def test_a_turn_waiting_only_on_approvals_ends_without_calling_the_model_again() -> None:
    runs: list[dict[str, Any]] = []
    model = ScriptedModel(
        [exec_call("return await pay({ amount: 40 })"), "Paid 40 EUR, as approved."]
    )

    async def main() -> tuple[list[Any], list[Any], list[dict[str, Any]]]:
        async with _agent(model, runs) as agent:
            first = await _collect(agent.run("s1", "pay the invoice"))
            requested = next(e for e in first if e.type == "approval_requested")
            assert runs == []
            second = await _collect(
                agent.decide("s1", requested.run_id, requested.approval["id"], "approve", by="ana")
            )
            return first, second, await agent.history("s1")

    first, second, history = asyncio.run(main())
    assert [e.type for e in first] == [
        "turn_started",
        "cell_started",
        "cell_finished",
        "approval_requested",
        "turn_finished",
    ]
    assert first[-1].state == "waiting_approval"
    assert first[-1].to_dict()["state"] == "waiting_approval"
    assert first[3].approval["tool"] == "pay"
    assert first[3].to_dict()["type"] == "approval_requested"
    types = [e.type for e in second]
    assert types[:4] == ["approval_decided", "turn_started", "cell_started", "cell_finished"]
    assert set(types[4:-2]) == {"text_delta"}
    assert types[-2:] == ["reply", "turn_finished"]
    decided = second[0]
    assert (decided.decision, decided.by) == ("approve", "ana")
    finished = next(e for e in second if e.type == "cell_finished")
    assert finished.envelope["value"] == {"paid": 40}
    assert second[-1].state == "replied"
    assert runs == [{"amount": 40}]
    assert len(model.requests) == 2  # the paused turn did not call the model a second time
    assert any("Paid 40 EUR" in str(message.get("content")) for message in history)


def test_deciding_a_foreign_approval_through_the_agent_is_an_input_error() -> None:
    model = ScriptedModel([exec_call("return await pay({ amount: 1 })")])

    async def main() -> None:
        async with _agent(model, []) as agent:
            first = await _collect(agent.run("s1", "pay"))
            requested = next(e for e in first if e.type == "approval_requested")
            with pytest.raises(InputError):
                await _collect(agent.decide("s1", requested.run_id, "ap_forged", "approve"))

    asyncio.run(main())


def test_an_answer_handed_to_the_agent_whole_continues_the_turn() -> None:
    runs: list[dict[str, Any]] = []
    model = ScriptedModel([exec_call("return await pay({ amount: 9 })"), "Paid."])

    async def main() -> list[Any]:
        async with _agent(model, runs) as agent:
            first = await _collect(agent.run("s1", "pay"))
            requested = next(e for e in first if e.type == "approval_requested")
            answer = ApprovalAnswer(run_id=requested.run_id, approval_id=requested.approval["id"],
                                    decision="approve", note="yes", by="ana")  # fmt: skip
            return await _collect(agent.answer("s1", answer))

    events = asyncio.run(main())
    decided = events[0]
    assert (decided.type, decided.decision, decided.note, decided.by) == (
        "approval_decided", "approve", "yes", "ana",
    )  # fmt: skip
    assert events[-1].state == "replied" and runs == [{"amount": 9}]


def test_the_agent_refuses_a_bad_decision_when_asked_before_any_turn_is_held() -> None:
    model = ScriptedModel([exec_call("return await pay({ amount: 1 })")])

    async def main() -> tuple[str, list[Any]]:
        async with _agent(model, []) as agent:
            first = await _collect(agent.run("s1", "pay"))
            requested = next(e for e in first if e.type == "approval_requested")
            with pytest.raises(InputError) as caught:
                agent.decide("s1", requested.run_id, requested.approval["id"], "later")  # pyright: ignore[reportArgumentType]
            return caught.value.message, await agent.mode("s1").approval_audit()

    message, audit = asyncio.run(main())
    assert message == "`decision` must be 'approve' or 'deny', got 'later'."
    assert audit == []
