"""Sessions served by several agents (workers) on one durable store: the store is the truth."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any, Literal

import pytest

from clawcell import InputError, SQLiteStore, Tool
from clawcell.agent import (
    Agent,
    ApprovalDecided,
    ApprovalRequested,
    ModelRequest,
    ModelResponse,
    ModelText,
    ScriptedModel,
    SubagentProfile,
    Subagents,
    exec_call,
)
from clawcell.agent._transcript import message_text
from clawcell.store import SessionTurns
from tests.agent._helpers import blocking_tool, collect, last_of
from tests.conftest import run


def test_a_turn_sends_the_model_every_earlier_turn_whichever_worker_ran_it(tmp_path: Path) -> None:
    model_a = ScriptedModel(["one", "three"])
    model_b = ScriptedModel(["two"])

    async def main() -> list[str]:
        path = tmp_path / "state.db"
        async with (
            SQLiteStore(path) as store_a,
            SQLiteStore(path) as store_b,
            Agent(model=model_a, store=store_a) as a,
            Agent(model=model_b, store=store_b) as b,
        ):
            await collect(a, "s", "first")
            await collect(b, "s", "second")
            await collect(a, "s", "third")
        return [message_text(m) for m in model_a.requests[-1].messages]

    assert run(main()) == ["first", "one", "second", "two", "third"]


def _two_agents(path: Path, model_a: ScriptedModel, model_b: ScriptedModel, **kw: Any) -> Any:
    """Two agents (workers) on one SQLite file, each with its own store object."""

    @contextlib.asynccontextmanager
    async def agents() -> AsyncGenerator[tuple[Agent, Agent]]:
        async with (
            SQLiteStore(path) as store_a,
            SQLiteStore(path) as store_b,
            Agent(model=model_a, store=store_a, **kw) as a,
            Agent(model=model_b, store=store_b, **kw) as b,
        ):
            yield a, b

    return agents()


def test_two_messages_to_one_session_on_two_workers_run_one_after_the_other(
    tmp_path: Path,
) -> None:
    gate, started = asyncio.Event(), asyncio.Event()
    model_a = ScriptedModel([exec_call("return await block()"), "first done"])
    model_b = ScriptedModel(["second done"])

    async def block(_: dict[str, Any]) -> str:
        started.set()
        await gate.wait()
        return "unblocked"

    async def main() -> tuple[list[str], list[str]]:
        tools = [Tool(name="block", execute=block)]
        async with _two_agents(tmp_path / "s.db", model_a, model_b, tools=tools) as (a, b):
            first = asyncio.create_task(collect(a, "s", "one"))
            await started.wait()
            second = asyncio.create_task(collect(b, "s", "two"))
            await asyncio.sleep(0)  # the second turn is now waiting for the session
            assert await b.stop("s") is True  # a turn runs: B sees it
            gate.set()
            await first
            await second
            sent = [message_text(m) for m in model_b.requests[-1].messages]
            stored = [str(m["role"]) for m in await b.transcript("s")]
        return sent, stored

    sent, stored = run(main())
    assert sent[0] == "one" and sent[-1] == "two" and "first done" in sent
    assert stored == ["user", "assistant", "toolResult", "assistant", "user", "assistant"]


def test_stop_sent_to_another_worker_sets_the_running_turns_stop_event(tmp_path: Path) -> None:
    started = asyncio.Event()
    model_a = ScriptedModel([exec_call("return await block()"), "never"])

    async def main() -> tuple[bool, list[str]]:
        tools = [blocking_tool(started)]
        async with _two_agents(tmp_path / "s.db", model_a, ScriptedModel([]), tools=tools) as (
            a,
            b,
        ):
            stop = asyncio.Event()
            seen: list[str] = []

            async def consume() -> None:
                async with contextlib.aclosing(a.run("s", "go", stop=stop)) as events:
                    async for event in events:
                        seen.append(event.type)
                        if stop.is_set():
                            return

            consumer = asyncio.create_task(consume())
            await started.wait()
            sent = await b.stop("s")
            await stop.wait()  # set by A's watcher from the store
            consumer.cancel()  # what the Control UI's stream does once `stop` is set
            with contextlib.suppress(asyncio.CancelledError):
                await consumer
            last = (await b.transcript("s"))[-1]
            stopped = await b.stop("s")
        return sent and not stopped, [str(last["stopReason"])]

    assert run(main()) == (True, ["aborted"])


def test_sub_agent_sessions_of_one_parent_never_collide_across_workers(tmp_path: Path) -> None:
    async def main() -> list[str]:
        async with _two_agents(tmp_path / "s.db", ScriptedModel([]), ScriptedModel([])) as (a, b):
            profile = SubagentProfile(name="r", description="r", model=ScriptedModel([]))
            runtimes = [Subagents(a, [profile]), Subagents(b, [profile])]
            ids = await asyncio.gather(
                *(r._child_session("p") for r in runtimes)  # pyright: ignore[reportPrivateUsage]
            )
            later = await runtimes[0]._child_session("p")  # pyright: ignore[reportPrivateUsage]
            return [*ids, later]

    ids = run(main())
    assert sorted(ids) == ["p/sub/1", "p/sub/2", "p/sub/3"]


def test_a_message_on_a_worker_that_ran_an_earlier_turn_expires_a_card_from_another(
    tmp_path: Path,
) -> None:
    ran: list[str] = []

    async def deploy(_: dict[str, Any]) -> str:
        ran.append("deploy")
        return "deployed"

    tools = [Tool(name="deploy", execute=deploy, approval="always")]
    model_a = ScriptedModel([exec_call("return await deploy()")])
    model_b = ScriptedModel(["hello", "fine, not deploying"])

    async def main() -> str:
        async with _two_agents(tmp_path / "s.db", model_a, model_b, tools=tools) as (a, b):
            await collect(b, "s", "hi")  # B has seen the session before
            parked = await collect(a, "s", "deploy it")
            request = last_of(parked, ApprovalRequested)
            expired = await collect(b, "s", "never mind")
            assert [e.type for e in expired if isinstance(e, ApprovalDecided)] == [
                "approval_decided"
            ]
            with pytest.raises(InputError) as refused:
                await collect_decision(a, request)
            return refused.value.message

    assert "expired (superseded)" in run(main())
    assert ran == []


async def collect_decision(agent: Agent, request: ApprovalRequested) -> list[Any]:
    events = agent.decide("s", request.run_id, request.approval["id"], "approve")
    return [event async for event in events]


class _PausingModel:
    """Streams `Hello `, waits for `go`, then streams `world` and ends."""

    name = "pausing"
    tool_style: Literal["anthropic"] = "anthropic"

    def __init__(self, streamed: asyncio.Event, go: asyncio.Event) -> None:
        self.streamed, self.go = streamed, go

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelText | ModelResponse]:
        yield ModelText(text="Hello ")
        self.streamed.set()
        await self.go.wait()
        yield ModelText(text="world")
        yield ModelResponse(text="Hello world")


def test_what_a_turn_streamed_so_far_is_read_by_another_worker_and_dropped_at_its_end(
    tmp_path: Path,
) -> None:
    streamed, go = asyncio.Event(), asyncio.Event()

    async def main() -> tuple[str | None, str | None, str]:
        async with (
            SQLiteStore(tmp_path / "s.db") as store_a,
            SQLiteStore(tmp_path / "s.db") as store_b,
            Agent(model=_PausingModel(streamed, go), store=store_a) as a,
            Agent(model=ScriptedModel([]), store=store_b) as b,
        ):
            turn = asyncio.create_task(collect(a, "s", "hi"))
            await streamed.wait()  # set once the turn asked for the next piece: after its write
            during = await b.partial_reply("s")
            go.set()
            await turn
            after = await b.partial_reply("s")
            last = message_text((await b.transcript("s"))[-1])
        return during, after, last

    assert run(main()) == ("Hello ", None, "Hello world")


def test_recover_turn_ends_a_dead_workers_turn_once_and_leaves_a_live_one_alone(
    tmp_path: Path,
) -> None:
    async def main() -> tuple[list[bool], list[tuple[str, Any]]]:
        path = tmp_path / "state.db"
        async with (
            SQLiteStore(path) as store_a,
            SQLiteStore(path) as store_b,
            Agent(model=ScriptedModel([]), store=store_b, turn_lease_seconds=1) as b,
        ):
            turns = SessionTurns(store_a, lease_seconds=1)
            live = await turns.hold("s", wait=10)
            assert live is not None
            answers = [await b.recover_turn("s")]  # a live turn: waited for, never taken
            await live.release()
            answers.append(await b.recover_turn("s"))  # released: nothing interrupted
            dead = await turns.hold("s", wait=10)
            assert dead is not None
            await dead._keeper.close()  # pyright: ignore[reportPrivateUsage]  # "dies"
            answers += [await b.recover_turn("s"), await b.recover_turn("s")]
            history = await b.history("s")
        return answers, [(m["role"], m.get("stopReason")) for m in history]

    answers, history = run(main())
    assert answers == [False, False, True, False]
    assert history == [("assistant", "error")]
