"""Bounds on `sessions_send` (per turn, per session, chain depth) and the `sender` mark of
forwarded messages, on every store backend."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import Any

import pytest

from clawcell import ToolError
from clawcell.agent import Agent, ModelRequest, ScriptedModel, ScriptedTurn, exec_call
from clawcell.catalog import Catalog, Tool, call_session
from clawcell.errors import ConfigurationError
from clawcell.store import SessionStore
from clawcell.tools import SendLimits, SessionVisibility, sessions

from ..store.conftest import new_store, postgres_dsn, postgres_schema

__all__ = ["new_store", "postgres_dsn", "postgres_schema"]  # the store fixtures, by backend

StoreFactory = Callable[[], SessionStore]

PING_PONG = """
const { sessionId } = await session_status({});
const to = sessionId === "alice" ? "bob" : "alice";
try {
  const sent = await sessions_send({ sessionId: to, text: "your turn" });
  return sent.status;
} catch (error) {
  return error.code;
}
"""


@contextlib.asynccontextmanager
async def closed_after(new_store: StoreFactory) -> AsyncGenerator[SessionStore]:
    """A new store, closed at the end (an `Agent` closes only the stores it made)."""
    store = new_store()
    try:
        yield store
    finally:
        await store.close()


async def settle(tools: list[Tool]) -> None:
    """Wait for every turn the tools started (and the turns those started) to end."""
    state: Any = tools[0].execute.__self__  # pyright: ignore[reportFunctionMemberAccess]
    while state.turns:
        await asyncio.gather(*list(state.turns), return_exceptions=True)


def ping_pong(request: ModelRequest) -> ScriptedTurn:
    """Each session's turn: one cell that sends to the other session, then a reply."""
    return exec_call(PING_PONG) if request.messages[-1]["role"] == "user" else "sent"


def results(transcript: list[dict[str, Any]]) -> list[str]:
    return [
        entry["content"][0]["text"] for entry in transcript if entry.get("role") == "toolResult"
    ]


def test_two_sessions_answering_each_other_stop_at_the_chain_depth(
    new_store: StoreFactory,
) -> None:
    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        holder: list[Agent] = []
        tools = sessions(lambda: holder[0], limits=SendLimits(max_depth=3))
        model = ScriptedModel([ping_pong] * 20)
        async with (
            closed_after(new_store) as store,
            Agent(model=model, tools=tools, store=store) as agent,
        ):
            holder.append(agent)
            async for _ in agent.run("alice", "start the conversation"):
                pass
            await settle(tools)
            return await agent.transcript("alice"), await agent.transcript("bob")

    alice, bob = asyncio.run(main())
    senders = [e.get("sender") for e in alice + bob if e["role"] == "user"]
    assert senders == [
        None,
        {"kind": "session", "sessionId": "bob", "turnId": bob[0]["turnId"], "depth": 2},
        {"kind": "session", "sessionId": "alice", "turnId": alice[0]["turnId"], "depth": 1},
        {"kind": "session", "sessionId": "alice", "turnId": alice[4]["turnId"], "depth": 3},
    ]
    outcome = results(bob)[-1]
    assert "send_chain_too_deep" in outcome, outcome


SEND_MANY = """
const outcomes = [];
for (const to of ["s1", "s2", "s3", "s4", "s5", "s6"]) {
  try {
    outcomes.push((await sessions_send({ sessionId: to, text: "hello" })).status);
  } catch (error) {
    outcomes.push(error.code);
  }
}
return outcomes;
"""


def test_one_turn_may_send_only_per_turn_messages(new_store: StoreFactory) -> None:
    async def main() -> Any:
        holder: list[Agent] = []
        tools = sessions(lambda: holder[0], limits=SendLimits(per_turn=4))
        model = ScriptedModel(["ok"] * 6)
        async with (
            closed_after(new_store) as store,
            Agent(model=model, tools=tools, store=store) as agent,
        ):
            holder.append(agent)
            envelope = await agent.mode("hub").exec(SEND_MANY)
            await settle(tools)
            return envelope

    envelope = asyncio.run(main())
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == ["started"] * 4 + ["send_limit"] * 2


async def call_as(session_id: str, catalog: Catalog, name: str, args: dict[str, Any]) -> Any:
    async def call() -> Any:
        call_session.set(session_id)
        return await catalog.call(name, args)

    return await asyncio.create_task(call())


def test_the_per_session_bound_is_read_from_the_store_by_every_worker(
    new_store: StoreFactory,
) -> None:
    """Two agents over one store (two workers) share the session's count of sends."""

    async def main() -> ToolError:
        store = new_store()
        limits = SendLimits(per_turn=10, per_session=3)
        first: list[Agent] = []
        second: list[Agent] = []
        tools_1 = sessions(lambda: first[0], limits=limits)
        tools_2 = sessions(lambda: second[0], limits=limits)
        worker_1 = Agent(model=ScriptedModel(["ok"] * 4), tools=tools_1, store=store)
        worker_2 = Agent(model=ScriptedModel(["ok"] * 4), tools=tools_2, store=store)
        first.append(worker_1)
        second.append(worker_2)
        try:
            for target in ("t1", "t2"):
                await call_as("hub", Catalog(tools_1), "sessions_send",
                              {"sessionId": target, "text": "x"})  # fmt: skip
            await call_as("hub", Catalog(tools_2), "sessions_send",
                          {"sessionId": "t3", "text": "x"})  # fmt: skip
            with pytest.raises(ToolError) as refused:
                await call_as("hub", Catalog(tools_2), "sessions_send",
                              {"sessionId": "t4", "text": "x"})  # fmt: skip
            await settle(tools_1)
            await settle(tools_2)
        finally:
            await worker_1.aclose()
            await worker_2.aclose()
            await store.close()
        return refused.value

    refused = asyncio.run(main())
    assert refused.code == "send_limit"
    assert refused.message == (
        "This session sent 3 message(s) with `sessions_send` in the last 3600 s, the most it "
        "may (`SendLimits.per_session` is 3); try again later."
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"per_turn": -1}, "`SendLimits.per_turn` must be a non-negative integer"),
        ({"max_depth": True}, "`SendLimits.max_depth` must be a non-negative integer"),
        ({"window_seconds": 0}, "`SendLimits.window_seconds` must be a positive number"),
        ({"window_seconds": float("inf")}, "`SendLimits.window_seconds` must be a positive"),
    ],
    ids=["negative", "bool", "zero-window", "infinite-window"],
)
def test_bad_send_limits_are_refused(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("`", "`").replace(".", r"\.")):
        SendLimits(**changes)


def test_config_sets_the_send_bounds() -> None:
    from clawcell.tools import from_config

    tools = from_config({"sessions": {"see": ["*"], "max_sends_per_turn": 2, "max_send_depth": 1}})
    state: Any = tools[0].execute.__self__  # pyright: ignore[reportFunctionMemberAccess]
    assert state.ledger.limits == SendLimits(per_turn=2, max_depth=1)
    assert isinstance(state.visibility, SessionVisibility)


BAD_TEXT = [
    ("sessions_history", {"sessionId": "a\x00b"}, "`sessionId` 'a\\x00b' holds the character"),
    ("sessions_history", {"sessionId": "a\nb"}, "`sessionId` 'a\\nb' holds the character"),
    ("sessions_search", {"query": "pass\x00word"}, "`query` 'pass\\x00word' holds the character"),
    ("sessions_search", {"query": "x\ud800"}, "`query` 'x\\ud800' holds the character"),
    ("sessions_send", {"sessionId": "t", "text": "hi\x00"}, "`text` 'hi\\x00' holds the character"),
    ("sessions_send", {"sessionId": "t\ud800", "text": "hi"}, "`sessionId` 't\\ud800' holds"),
]


@pytest.mark.parametrize(("tool", "args", "message"), BAD_TEXT,
                         ids=[f"{t}-{i}" for i, (t, _a, _m) in enumerate(BAD_TEXT)])  # fmt: skip
def test_nul_surrogates_and_control_ids_are_invalid_input_on_every_backend(
    new_store: StoreFactory, tool: str, args: dict[str, Any], message: str
) -> None:
    async def main() -> ToolError:
        holder: list[Agent] = []
        tools = sessions(lambda: holder[0])
        async with (
            closed_after(new_store) as store,
            Agent(model=ScriptedModel([]), tools=tools, store=store) as agent,
        ):
            holder.append(agent)
            await agent.store.append_transcript("t", [{"role": "user", "content": "password"}])
            with pytest.raises(ToolError) as caught:
                await call_as("hub", Catalog(tools), tool, args)
            await agent.store.close()
            return caught.value

    error = asyncio.run(main())
    assert error.code == "invalid_input"
    assert error.message.startswith(message), error.message


# 120: the bridge queues at most 128 requests of one cell (200 at once fail the cell).
FAN_OUT = """
const targets = Array.from({ length: 120 }, (_, n) => `s${n}`);
const outcomes = await Promise.all(targets.map((to) =>
  sessions_send({ sessionId: to, text: "hello" }).then((r) => r.status, (e) => e.code)));
return outcomes.reduce((counts, o) => ({ ...counts, [o]: (counts[o] ?? 0) + 1 }), {});
"""


def test_a_hundred_and_twenty_concurrent_sends_from_one_cell_start_per_turn_turns(
    new_store: StoreFactory,
) -> None:
    async def main() -> Any:
        holder: list[Agent] = []
        tools = sessions(lambda: holder[0], limits=SendLimits(per_turn=4))
        async with (
            closed_after(new_store) as store,
            Agent(model=ScriptedModel(["ok"] * 4), tools=tools, store=store) as agent,
        ):
            holder.append(agent)
            envelope = await agent.mode("hub").exec(FAN_OUT)
            await settle(tools)
            started = [s.session_id for s in await agent.sessions()]
            await agent.store.close()
            return envelope, started

    envelope, started = asyncio.run(main())
    assert envelope["status"] == "completed", envelope
    assert envelope["value"] == {"started": 4, "send_limit": 116}
    assert len(started) == 4
