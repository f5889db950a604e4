"""Every worker sweeps the store's index of sub-agent runs in flight: a dead worker's run is
resumed by a live one without its parent doing anything (issue 37), a live worker's run is
left alone, exactly one of two sweeping workers resumes an orphan, and the index lists a run
only while it runs."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from clawcell.agent import (
    Agent,
    ModelRequest,
    ScriptedModel,
    SubagentProfile,
    Subagents,
    exec_call,
    subagent_runs,
)
from clawcell.agent._subagents._registry import RunRegistry
from clawcell.agent._subagents._run import SubagentRun
from clawcell.agent._subagents._run_book import INDEX, RunBook
from clawcell.errors import StoreUnavailableError
from clawcell.store import MemoryStore, SessionStore, StoredValue
from tests._swallowing import CancelSwallowingStore, ends_when_its_loop_closes
from tests.agent._helpers import collect
from tests.conftest import run
from tests.store.conftest import StoreFactory

HOUR = 3600.0


def _left_running(*, alive_at: float, profile: str = "slow") -> SubagentRun:
    """A run as the worker driving it left its record: running, its last heartbeat at
    `alive_at` (an hour ago: the worker is gone)."""
    return SubagentRun(
        run_id="sub_of_a_dead_worker",
        session_id="chat/sub/1",
        parent="chat",
        profile=profile,
        label="job",
        task="long job",
        started_at=time.time() - 2 * HOUR,
        owner="dead-host:1:0123456789ab",
        alive_at=alive_at,
    )


def _profile(answered: asyncio.Event | None = None) -> SubagentProfile:
    def answer(_: ModelRequest) -> str:
        if answered is not None:
            answered.set()
        return "resumed answer"

    return SubagentProfile(name="slow", model=ScriptedModel([answer], name="slow-model"))


async def _settled(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    """The session's runs once none is running (the caller bounds the wait)."""
    while True:
        runs = await subagent_runs(store, session_id)
        if all(r["status"] != "running" for r in runs):
            return runs
        await asyncio.sleep(0.02)


async def _index(store: SessionStore) -> dict[str, str]:
    return {k: json.loads(v.json)["parent"] for k, v in (await store.items(INDEX)).items()}


def test_a_dead_workers_run_is_resumed_by_a_live_worker_without_its_parent_acting(
    new_durable_store: StoreFactory,
) -> None:
    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
        dead = new_durable_store()
        await RunBook(dead).save(_left_running(alive_at=time.time() - HOUR))
        await dead.close()
        store, answered = new_durable_store(), asyncio.Event()
        # A live worker: an agent with the profile; nobody sends its parent session anything.
        async with Agent(model=ScriptedModel([]), store=store) as agent:
            Subagents(agent, [_profile(answered)])
            async with asyncio.timeout(120):  # a ceiling for a broken build, not a measure
                await answered.wait()
                runs = await _settled(store, "chat")
            child = await agent.transcript("chat/sub/1")
            index = await _index(store)
        await store.close()
        return runs, child, index

    runs, child, index = run(main())
    assert [(r["runId"], r["status"], r["reply"]) for r in runs] == [
        ("sub_of_a_dead_worker", "completed", "resumed answer")
    ]
    assert child[0]["content"][0]["text"].endswith("long job")  # the resume message
    assert index == {}  # ended: no longer listed


def test_a_run_a_live_worker_drives_is_left_to_it(new_durable_store: StoreFactory) -> None:
    async def main() -> tuple[list[str], list[dict[str, Any]], list[str], dict[str, str]]:
        store = new_durable_store()
        await RunBook(store).save(_left_running(alive_at=time.time()))  # a fresh heartbeat
        async with Agent(model=ScriptedModel([]), store=store) as agent:
            resumed = await Subagents(agent, [_profile()]).sweep()
            runs, index = await subagent_runs(store, "chat"), await _index(store)
            keys = sorted(await store.items("chat\x1fsubagents"))
        await store.close()
        return resumed, runs, keys, index

    resumed, runs, keys, index = run(main())
    assert resumed == []
    assert [(r["status"], r["reply"]) for r in runs] == [("running", None)]
    assert keys == ["sub_of_a_dead_worker"]  # no claim was taken
    assert index == {"sub_of_a_dead_worker": "chat"}


def test_a_run_of_a_profile_the_worker_lacks_is_left_for_one_that_has_it(
    new_durable_store: StoreFactory,
) -> None:
    async def main() -> tuple[list[str], list[str], dict[str, str]]:
        store = new_durable_store()
        await RunBook(store).save(_left_running(alive_at=time.time() - HOUR, profile="other"))
        async with Agent(model=ScriptedModel([]), store=store) as agent:
            resumed = await Subagents(agent, [_profile()]).sweep()
            keys = sorted(await store.items("chat\x1fsubagents"))
            index = await _index(store)
        await store.close()
        return resumed, keys, index

    resumed, keys, index = run(main())
    assert resumed == []
    assert keys == ["sub_of_a_dead_worker"]  # no claim was taken
    assert index == {"sub_of_a_dead_worker": "chat"}


def test_of_two_workers_sweeping_at_once_exactly_one_resumes_an_orphan(
    new_durable_store: StoreFactory,
) -> None:
    async def main() -> tuple[list[str], list[dict[str, Any]], list[str], list[Any]]:
        store = new_durable_store()
        await RunBook(store).save(_left_running(alive_at=time.time() - HOUR))
        first, second = new_durable_store(), new_durable_store()
        async with (
            Agent(model=ScriptedModel([]), store=first) as a,
            Agent(model=ScriptedModel([]), store=second) as b,
        ):
            # Each worker's heartbeat sweeps as it starts, and each sweeps once more here.
            sweeps = await asyncio.gather(
                Subagents(a, [_profile()]).sweep(), Subagents(b, [_profile()]).sweep()
            )
            async with asyncio.timeout(120):
                runs = await _settled(store, "chat")
            keys = sorted(await store.items("chat\x1fsubagents"))
            child = await a.transcript("chat/sub/1")
        for each in (store, first, second):
            await each.close()
        return [run_id for sweep in sweeps for run_id in sweep], runs, keys, child

    resumed, runs, keys, child = run(main())
    assert len(resumed) <= 1  # a heartbeat's sweep may have been first
    assert [(r["status"], r["reply"]) for r in runs] == [("completed", "resumed answer")]
    assert keys == ["sub_of_a_dead_worker", "sub_of_a_dead_worker#resume1"]  # one claim
    assert [m["role"] for m in child] == ["user", "assistant"]  # one resumed turn


def test_the_index_lists_a_run_while_it_runs_and_a_sweep_unlists_ended_or_gone_ones(
    new_durable_store: StoreFactory,
) -> None:
    gate, started = asyncio.Event(), asyncio.Event()

    async def hold(_: dict[str, Any]) -> str:
        started.set()
        await gate.wait()
        return "opened"

    from clawcell import Tool

    spawn = 'return (await sessions_spawn({profile: "slow", task: "t"})).runId;'
    child = ScriptedModel([exec_call("return await hold();"), "child done"], name="slow")
    profile = SubagentProfile(name="slow", model=child, tools=[Tool(name="hold", execute=hold)])

    async def main() -> tuple[dict[str, str], dict[str, str], dict[str, str], list[str]]:
        store = new_durable_store()
        async with Agent(model=ScriptedModel([exec_call(spawn), "ok"]), store=store) as agent:
            runtime = Subagents(agent, [profile])
            agent.add_tools(runtime.tools)
            await collect(agent, "chat", "go")
            await started.wait()
            running = await _index(store)
            gate.set()
            await _settled(store, "chat")
            ended = await _index(store)
            # Entries a crash left behind: a run that ended and one whose record is gone.
            book = RunBook(store)
            finished = _left_running(alive_at=time.time() - HOUR)
            finished.status = "completed"
            await book.save(_left_running(alive_at=time.time() - HOUR))
            await book.save(finished)  # the record says completed, and the entry is ...
            await store.put(INDEX, finished.run_id, _listed("chat"))  # ... listed again
            await store.put(INDEX, "sub_without_a_record", _listed("chat"))
            resumed = await runtime.sweep()
            swept = await _index(store)
        await store.close()
        return running, ended, swept, resumed

    running, ended, swept, resumed = run(main())
    assert list(running.values()) == ["chat"]
    assert ended == {} and swept == {} and resumed == []


def _listed(parent: str) -> Any:
    from clawcell.store import StoredValue

    return StoredValue(json=json.dumps({"parent": parent}))


def test_a_loop_closing_with_the_registry_open_ends_its_heartbeat() -> None:
    # The event loop ends with the runtime never closed: it cancels the heartbeat and waits
    # for it; a store call that swallowed the cancellation once made the heartbeat sweep on,
    # and the loop's close (a test client's portal, `asyncio.run`) waited forever.
    async def main() -> None:
        store = CancelSwallowingStore("items")
        registry = RunRegistry(store, {}, durable=True)
        registry.tend()
        await store.entered.wait()  # the heartbeat is in its first sweep's read

    assert ends_when_its_loop_closes(main), "the loop is still waiting for the heartbeat"


class _FinalSavesFail(MemoryStore):
    """A store that is down, while `down`, for the write of a run's final record only."""

    down = True

    async def put(self, session_id: str, key: str, value: StoredValue) -> None:
        if self.down and session_id.endswith("\x1fsubagents") and '"running"' not in value.json:
            raise StoreUnavailableError("the store is down (a test double).")
        await super().put(session_id, key, value)


def test_a_run_whose_final_save_failed_is_saved_finished_by_the_next_sweep_not_resumed() -> None:
    async def main() -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]], list[str]]:
        store = _FinalSavesFail()
        child = Agent(model=ScriptedModel(["the answer"]), store=store)
        registry = RunRegistry(store, {"slow": child}, durable=True, lease_seconds=HOUR)
        job = _left_running(alive_at=time.time())
        await registry.start(job)
        assert job.handle is not None
        await job.handle
        left = await subagent_runs(store, "chat")  # the final save failed: still "running"
        store.down = False
        resumed = await registry.sweep()
        after = await subagent_runs(store, "chat")
        index = sorted(await store.items(INDEX))
        await registry.close()
        await child.aclose()
        return left, resumed, after, index

    left, resumed, after, index = run(main())
    assert [r["status"] for r in left] == ["running"]
    assert resumed == []
    assert [(r["status"], r["reply"]) for r in after] == [("completed", "the answer")]
    assert index == []
