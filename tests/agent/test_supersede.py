"""A new user message supersedes the approvals the session was waiting on: they can never run."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clawcell import InputError, Limits, Tool
from clawcell.agent import Agent, ScriptedModel, exec_call
from clawcell.store import MemoryStore

DEPLOY = exec_call('return await deploy({ target: "production" })')


def _agent(model: ScriptedModel, deployed: list[dict[str, Any]], store: MemoryStore) -> Agent:
    async def deploy(params: dict[str, Any]) -> str:
        deployed.append(params)
        return "deployed"

    tool = Tool(name="deploy", execute=deploy, approval="always")
    return Agent(model=model, tools=[tool], store=store, limits=Limits(timeout_ms=60_000))


async def _collect(events: Any) -> list[Any]:
    return [event async for event in events]


def test_a_new_message_expires_the_pending_approval_as_superseded_and_it_never_runs() -> None:
    deployed: list[dict[str, Any]] = []
    model = ScriptedModel([DEPLOY, "OK, I will not deploy."])

    async def main() -> tuple[Any, list[Any], list[Any], InputError]:
        async with _agent(model, deployed, MemoryStore()) as agent:
            first = await _collect(agent.run("s", "deploy it"))
            requested = next(e for e in first if e.type == "approval_requested")
            second = await _collect(agent.run("s", "never mind"))
            with pytest.raises(InputError) as refused:
                await _collect(
                    agent.decide("s", requested.run_id, requested.approval["id"], "approve")
                )
            audit = await agent.mode("s").approval_audit()
            return requested, second, audit, refused.value

    requested, second, audit, refused = asyncio.run(main())
    expiry = next(e for e in second if e.type == "approval_decided")
    assert expiry.to_dict() | {"decidedAt": "…"} == {
        "type": "approval_decided",
        "sessionId": "s",
        "runId": requested.run_id,
        "approvalId": requested.approval["id"],
        "decision": "deny",
        "note": "the approval expired (superseded) before anyone decided",
        "by": "expiry",
        "decidedAt": "…",
        "reason": "superseded",
    }
    assert [e.type for e in second][:2] == ["turn_started", "approval_decided"]
    assert [(d.approval_id, d.decision, d.by, d.reason) for d in audit] == [
        (requested.approval["id"], "deny", "expiry", "superseded")
    ]
    assert refused.message == (
        f"approval {requested.approval['id']!r} expired (superseded) before anyone decided; "
        "its call did not run and will not. Ask again to run it."
    )
    assert deployed == []  # whatever the page shows, the tool never ran


def test_a_superseded_approval_stays_refused_for_another_process_with_the_same_store() -> None:
    deployed: list[dict[str, Any]] = []
    store = MemoryStore()

    async def main() -> InputError:
        async with _agent(ScriptedModel([DEPLOY, "fine"]), deployed, store) as agent:
            first = await _collect(agent.run("s", "deploy it"))
            requested = next(e for e in first if e.type == "approval_requested")
            await _collect(agent.run("s", "never mind"))
        async with _agent(ScriptedModel([]), deployed, store) as other:
            with pytest.raises(InputError) as refused:
                await _collect(
                    other.decide("s", requested.run_id, requested.approval["id"], "approve")
                )
        return refused.value

    assert "expired (superseded)" in asyncio.run(main()).message
    assert deployed == []


def test_a_turn_with_nothing_pending_expires_nothing() -> None:
    async def main() -> list[str]:
        async with _agent(ScriptedModel(["hi", "hi again"]), [], MemoryStore()) as agent:
            await _collect(agent.run("s", "hello"))
            return [e.type for e in await _collect(agent.run("s", "again"))]

    assert "approval_decided" not in asyncio.run(main())
