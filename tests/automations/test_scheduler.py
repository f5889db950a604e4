"""Automations end to end: the tool, the scheduler and headless cells (memory store)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar, cast

import pytest

from clawcell import Tool
from clawcell.automations import PayloadRunner, Scheduler
from clawcell.catalog import Catalog
from clawcell.store import JobRun, JobStore, MemoryStore, job_store_for
from clawcell.tools import automations
from tests._swallowing import Swallower, ends_when_its_loop_closes

_T = TypeVar("_T")
EVERY_SECOND = {"kind": "every", "everyMs": 1000}


class Clock:
    """A settable clock."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class World:
    """A memory store, a `mark` tool that records calls, a scheduler and the tool catalog."""

    def __init__(self, clock: Callable[[], float] | None = None, **scheduler: Any) -> None:
        self.store = MemoryStore()
        self.marks: list[Any] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.clock = clock

        async def mark(params: dict[str, Any]) -> dict[str, Any]:
            self.marks.append(params)
            await self.gate.wait()
            return {"n": len(self.marks)}

        tools = [Tool(name="mark", execute=mark)]
        runner = PayloadRunner(tools=tools, session_store=self.store)
        options: dict[str, Any] = {"poll_seconds": 0.05, "lease_seconds": 30.0, **scheduler}
        if clock is not None:
            options["clock"] = clock
        self.scheduler = Scheduler(
            job_store_for(self.store), runner, session_store=self.store, **options
        )
        self.catalog = Catalog(automations(self.store, scheduler=self.scheduler))

    async def call(self, action: str, **params: Any) -> Any:
        return await self.catalog.call("automations", {"action": action, **params})

    async def add(self, code: str, schedule: dict[str, Any] = EVERY_SECOND, **job: Any) -> str:
        payload = {"kind": "cell", "code": code, **job.pop("payload", {})}
        added = await self.call("add", job={"schedule": schedule, "payload": payload, **job})
        return str(added["id"])


def run(body: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    return asyncio.run(body())


def test_a_one_second_automation_runs_a_headless_cell_and_its_history_shows_the_runs() -> None:
    async def body() -> tuple[dict[str, Any], list[Any], dict[str, Any]]:
        world = World()
        job_id = await world.add("return await mark({ due: automation.dueAtMs });", name="tick")
        stop = asyncio.Event()
        worker = asyncio.create_task(world.scheduler.run(stop))
        while len(world.marks) < 2:
            await asyncio.sleep(0.05)
        stop.set()
        await worker
        return await world.call("runs", jobId=job_id), world.marks, await world.call("status")

    runs, marks, status = run(body)
    entries = runs["entries"]
    assert runs["total"] == len(entries) == len(marks) >= 2
    assert {e["status"] for e in entries} == {"ok"}
    assert {e["envelopeStatus"] for e in entries} == {"completed"}
    dues = sorted(e["dueAtMs"] for e in entries)
    assert [round(b - a) for a, b in itertools.pairwise(dues)] == [1000] * (len(dues) - 1)
    assert sorted(m["due"] for m in marks) == dues  # each occurrence ran its cell once
    assert entries[0]["summary"] == f'{{"n": {len(marks)}}}'
    assert status["jobs"] == 1 and status["enabled"] is False  # the worker stopped


def test_a_cell_over_its_tool_call_budget_fails_the_run_with_tool_budget_exceeded() -> None:
    clock = Clock()

    async def body() -> dict[str, Any]:
        world = World(clock)
        code = "for (let i = 0; i < 5; i++) { try { await mark({ i }); } catch {} } return 1;"
        job_id = await world.add(code, payload={"maxToolCalls": 2})
        clock.now += 1
        await world.scheduler.tick()
        await world.scheduler.drain()
        assert len(world.marks) == 2
        return (await world.call("runs", jobId=job_id))["entries"][0]

    entry = run(body)
    assert entry["status"] == "error"
    assert entry["error"] == "tool_budget_exceeded: the cell made more than 2 tool calls"


def test_remove_during_a_run_leaves_session_cleanup_pending_until_the_run_ends() -> None:
    clock = Clock()

    async def body() -> tuple[dict[str, Any], Any, Any, dict[str, Any]]:
        world = World(clock)
        world.gate.clear()
        job_id = await world.add('await mark({}); saved.put("k", 1); return 1;')
        clock.now += 1
        await world.scheduler.tick()
        while not world.marks:
            await asyncio.sleep(0.01)
        removed = await world.call("remove", jobId=job_id)
        still = await world.scheduler.jobs.get_job(job_id)
        world.gate.set()
        await world.scheduler.drain()
        gone = await world.scheduler.jobs.get_job(job_id)
        return removed, still, gone, await world.store.items(f"automation:{job_id}")

    removed, still, gone, session = run(body)
    assert removed == {"ok": True, "removed": True, "sessionCleanup": "pending"}
    assert still is not None and still.removed
    assert gone is None and session == {}


def test_removing_an_idle_job_deletes_it_at_once_and_a_second_remove_says_so() -> None:
    async def body() -> list[Any]:
        world = World(Clock())
        job_id = await world.add("return 1;")
        return [await world.call("remove", jobId=job_id), await world.call("remove", jobId=job_id)]

    assert run(body) == [{"ok": True, "removed": True}, {"ok": False, "removed": False}]


@pytest.mark.parametrize(("catch_up", "runs"), [("one", 1), ("skip", 0)])
def test_missed_occurrences_collapse_into_one_catch_up_run_or_none(
    catch_up: str, runs: int
) -> None:
    clock = Clock()

    async def body() -> tuple[int, float | None]:
        world = World(clock)
        job_id = await world.add("return await mark({});", catchUp=catch_up)
        clock.now += 10.5  # ten occurrences passed while no worker ran
        await world.scheduler.tick()
        await world.scheduler.drain()
        job = await world.scheduler.jobs.get_job(job_id)
        return len(world.marks), job.next_due_at if job else None

    fired, next_due = run(body)
    assert fired == runs
    assert next_due == clock.now + 0.5  # the grid continues after now


def test_a_killed_workers_run_is_lost_and_the_next_occurrence_still_fires() -> None:
    clock = Clock()

    async def body() -> list[str]:
        first = World(clock, lease_seconds=5.0)
        first.gate.clear()  # its run never ends: as if the worker froze, then died
        job_id = await first.add("return await mark({});")
        clock.now += 1
        await first.scheduler.tick()
        while not first.marks:
            await asyncio.sleep(0.01)
        other = Scheduler(first.scheduler.jobs, first.scheduler.runner, clock=clock)
        clock.now += 6  # past the lease and the next occurrences
        first.gate.set()  # let the pending tasks finish for a clean exit; their finish is refused
        await other.tick()
        await other.drain()
        await first.scheduler.drain()
        entries = (await first.call("runs", jobId=job_id))["entries"]
        return sorted(e["status"] for e in entries)

    assert run(body) == ["lost", "ok"]


def test_run_now_queues_a_manual_run_that_a_worker_claims() -> None:
    clock = Clock()

    async def body() -> tuple[Any, list[Any]]:
        world = World(clock)
        job_id = await world.add(
            "return await mark({});", schedule={"kind": "every", "everyMs": 3_600_000}
        )
        queued = await world.call("run", jobId=job_id)
        await world.scheduler.tick()
        await world.scheduler.drain()
        return queued, (await world.call("runs", jobId=job_id))["entries"]

    queued, entries = run(body)
    assert queued["ok"] and queued["enqueued"] and queued["runId"] == entries[0]["runId"]
    assert (entries[0]["trigger"], entries[0]["status"], entries[0]["dueAtMs"]) == (
        "manual",
        "ok",
        None,
    )


def test_a_paused_job_does_not_fire_and_resumes_on_the_grid() -> None:
    clock = Clock()

    async def body() -> tuple[bool, int, int]:
        world = World(clock)
        job_id = await world.add("return await mark({});")
        paused = await world.call("pause", jobId=job_id)
        clock.now += 3.5
        await world.scheduler.tick()
        before = len(world.marks)
        await world.call("resume", jobId=job_id)
        clock.now += 1
        await world.scheduler.tick()
        await world.scheduler.drain()
        return paused["enabled"], before, len(world.marks)

    assert run(body) == (False, 0, 1)


def test_list_get_update_and_declarative_add() -> None:
    async def body() -> tuple[Any, ...]:
        world = World(Clock())
        daily = {"kind": "cron", "expr": "0 9 * * *", "tz": "Europe/Paris"}
        cell = {"kind": "cell", "code": "return 1;"}
        declared = {"declarationKey": "daily", "schedule": daily, "payload": cell}
        first = await world.call("add", job=declared)
        again = await world.call("add", job={**declared, "name": "daily report"})
        listed = await world.call("list", limit=1)
        updated = await world.call("update", jobId=first["job"]["id"], patch={"maxHistory": 5})
        return first, again, listed, updated

    first, again, listed, updated = run(body)
    assert (first["created"], again["created"]) == (True, False)
    assert again["job"]["id"] == first["job"]["id"] and again["job"]["name"] == "daily report"
    assert listed["total"] == 1 and listed["jobs"][0]["scheduleKind"] == "cron"
    assert updated["maxHistory"] == 5


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ({"schedule": {"kind": "cron", "expr": "0 9 * * *"}, "payload": {"kind": "cell",
          "code": "1"}}, "A cron schedule needs an explicit IANA time zone `tz`, got None."),
        ({"schedule": {"kind": "every", "everyMs": 10}, "payload": {"kind": "cell",
          "code": "1"}}, "`everyMs` must be an integer of at least 1000, got 10."),
        ({"schedule": EVERY_SECOND, "payload": {"kind": "shell"}},
         "`payload.kind` must be 'cell' or 'agentTurn', got 'shell'."),
        ({"schedule": EVERY_SECOND, "payload": {"kind": "cell", "code": "1"}, "when": 1},
         "Unknown key 'when' in `job`; known keys: name, schedule, payload, enabled, catchUp, "
         "maxHistory, declarationKey."),
    ],
    ids=["tz", "interval", "payload", "key"],
)  # fmt: skip
def test_bad_jobs_are_refused_with_what_to_fix(job: dict[str, Any], message: str) -> None:
    from clawcell.errors import ToolError

    async def body() -> None:
        await World(Clock()).call("add", job=job)

    with pytest.raises(ToolError) as refused:
        run(body)
    assert str(refused.value) == message


def test_an_agent_turn_payload_sends_the_prompt_to_the_agent() -> None:
    clock = Clock()
    seen: list[tuple[str, str]] = []

    class Event:
        def __init__(self, text: str) -> None:
            self.text = text

    class FakeAgent:
        async def run(
            self, session_id: str, text: str, *, sender: dict[str, Any] | None = None
        ) -> AsyncIterator[Event]:
            seen.append((session_id, text))
            yield Event("done: ")
            yield Event("3 new mails")

    async def body() -> dict[str, Any]:
        store = MemoryStore()
        scheduler = Scheduler(job_store_for(store), PayloadRunner(agent=FakeAgent()), clock=clock)
        catalog = Catalog(automations(store, scheduler=scheduler))
        turn = {"kind": "agentTurn", "prompt": "check mail"}
        job = {"schedule": EVERY_SECOND, "payload": turn}
        added = await catalog.call("automations", {"action": "add", "job": job})
        clock.now += 1
        await scheduler.tick()
        await scheduler.drain()
        runs = await catalog.call("automations", {"action": "runs", "jobId": added["id"]})
        return runs["entries"][0]

    entry = run(body)
    assert seen and seen[0][1] == "check mail" and seen[0][0].startswith("automation:job_")
    assert (entry["status"], entry["summary"]) == ("ok", "done: 3 new mails")


def test_a_scheduler_ends_when_its_loop_closes_though_a_store_call_swallowed_the_cancel() -> None:
    # The loop closing around a running scheduler cancels it once and waits for it; a call of
    # its job store swallowed that, and the old scheduler polled on forever.
    async def main() -> None:
        jobs = job_store_for(MemoryStore())
        swallower = Swallower(jobs, "expire_runs")
        scheduler = Scheduler(jobs, PayloadRunner(tools=[]), poll_seconds=0.001)
        asyncio.get_running_loop().create_task(scheduler.run())
        await swallower.entered.wait()

    assert ends_when_its_loop_closes(main)


def test_a_run_lease_renewal_ends_when_its_loop_closes_though_a_renewal_swallowed() -> None:
    class Renewing:
        async def renew_run(self, run_id: str, *, worker: str, lease_expires_at: float) -> bool:
            return True

    async def main() -> None:
        jobs = Renewing()
        swallower = Swallower(jobs, "renew_run")
        scheduler = Scheduler(cast(JobStore, jobs), PayloadRunner(tools=[]), lease_seconds=0.003)
        renewing = scheduler._renew(JobRun(run_id="jrun_1", job_id="job_1"))  # pyright: ignore[reportPrivateUsage]
        asyncio.get_running_loop().create_task(renewing)
        await swallower.entered.wait()

    assert ends_when_its_loop_closes(main)
