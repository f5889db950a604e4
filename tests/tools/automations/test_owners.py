"""Who owns automation jobs, how many a session may own, where `agentTurn` jobs may post, and
schedules that could never fire (or fire past the year 9999), on every store backend."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from clawcell.automations import PayloadRunner, Scheduler
from clawcell.catalog import Catalog, call_session
from clawcell.errors import ToolError
from clawcell.store import JobRecord, SessionStore, job_store_for
from clawcell.tools import SessionVisibility, automations

StoreFactory = Callable[[], SessionStore]
EVERY_MINUTE = {"kind": "every", "everyMs": 60_000}
CELL = {"kind": "cell", "code": "return 1;"}


async def call_as(session_id: str, catalog: Catalog, action: str, **params: Any) -> Any:
    async def call() -> Any:
        call_session.set(session_id)
        return await catalog.call("automations", {"action": action, **params})

    return await asyncio.create_task(call())


async def refused(session_id: str, catalog: Catalog, action: str, **params: Any) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await call_as(session_id, catalog, action, **params)
    return caught.value


def test_a_session_sees_and_changes_only_its_own_jobs(new_store: StoreFactory) -> None:
    async def main() -> dict[str, Any]:
        store = new_store()
        catalog = Catalog(automations(store))
        try:
            job = await call_as("alice", catalog, "add", job={"schedule": EVERY_MINUTE,
                                                              "payload": CELL})  # fmt: skip
            seen = {
                "bob_list": await call_as("bob", catalog, "list"),
                "alice_list": await call_as("alice", catalog, "list"),
                "bob_status": await call_as("bob", catalog, "status"),
                "bob_remove": await call_as("bob", catalog, "remove", jobId=job["id"]),
            }
            for action, extra in [("get", {}), ("runs", {}), ("run", {}), ("pause", {}),
                                  ("update", {"patch": {"name": "mine now"}})]:  # fmt: skip
                error = await refused("bob", catalog, action, jobId=job["id"], **extra)
                seen[f"bob_{action}"] = (error.code, error.message)
            seen["alice_get"] = await call_as("alice", catalog, "get", jobId=job["id"])
            seen["id"] = job["id"]
            return seen
        finally:
            await store.close()

    seen = asyncio.run(main())
    assert seen["bob_list"]["jobs"] == [] and seen["bob_list"]["total"] == 0
    assert [j["id"] for j in seen["alice_list"]["jobs"]] == [seen["id"]]
    assert seen["bob_status"]["jobs"] == 0
    assert seen["bob_remove"] == {"ok": False, "removed": False}
    message = f"No automation job {seen['id']!r} of this session; `list` shows its jobs."
    for action in ("get", "runs", "run", "pause", "update"):
        assert seen[f"bob_{action}"] == ("not_found", message)
    assert seen["alice_get"]["name"] == "" and seen["alice_get"]["enabled"] is True


def test_a_session_may_own_at_most_max_jobs(new_store: StoreFactory) -> None:
    async def main() -> tuple[ToolError, Any, Any]:
        store = new_store()
        catalog = Catalog(automations(store, max_jobs=3))
        job = {"schedule": EVERY_MINUTE, "payload": CELL}
        try:
            for _ in range(2):
                await call_as("alice", catalog, "add", job=job)
            declared = {**job, "declarationKey": "daily"}
            await call_as("alice", catalog, "add", job=declared)
            again = await call_as("alice", catalog, "add", job={**declared, "name": "again"})
            error = await refused("alice", catalog, "add", job=job)
            other = await call_as("bob", catalog, "add", job=job)
            return error, again, other
        finally:
            await store.close()

    error, again, other = asyncio.run(main())
    assert error.code == "job_limit"
    assert error.message == (
        "Session 'alice' already has 3 automation jobs, the most one session may "
        "(`max_jobs` is 3); `remove` one first."
    )
    assert again["created"] is False  # updating a declared job is no new job
    assert other["id"].startswith("job_")  # the cap is per session


def test_an_agent_turn_job_posts_only_where_the_sender_may_send(new_store: StoreFactory) -> None:
    policy = SessionVisibility(send=("team-*",))

    async def main() -> tuple[ToolError, ToolError, Any, Any]:
        store = new_store()
        catalog = Catalog(automations(store, visibility=policy))

        def turn(target: str) -> dict[str, Any]:
            payload = {"kind": "agentTurn", "prompt": "hi", "sessionId": target}
            return {"schedule": EVERY_MINUTE, "payload": payload}

        try:
            added = await refused("ops", catalog, "add", job=turn("private-notes"))
            own = await call_as("ops", catalog, "add", job=turn("ops"))
            team = await call_as("ops", catalog, "add", job=turn("team-research"))
            patch = {"payload": turn("private-notes")["payload"]}
            updated = await refused("ops", catalog, "update", jobId=team["id"], patch=patch)
            return added, updated, own, team
        finally:
            await store.close()

    added, updated, own, team = asyncio.run(main())
    message = (
        "An `agentTurn` job of this session may not post into session 'private-notes'; "
        "`SessionVisibility.send` decides which sessions it may post to."
    )
    assert (added.code, added.message) == ("session_not_allowed", message)
    assert (updated.code, updated.message) == ("session_not_allowed", message)
    assert own["payload"]["sessionId"] == "ops" and team["payload"]["sessionId"] == "team-research"


def test_an_agent_turn_message_is_marked_with_its_job() -> None:
    from clawcell.store import MemoryStore

    seen: list[dict[str, Any] | None] = []

    class FakeAgent:
        async def run(
            self, session_id: str, text: str, *, sender: dict[str, Any] | None = None
        ) -> AsyncIterator[Any]:
            seen.append(sender)
            return
            yield

    async def main() -> str:
        store = MemoryStore()
        now = [1_000_000.0]
        scheduler = Scheduler(
            job_store_for(store), PayloadRunner(agent=FakeAgent()), clock=lambda: now[0]
        )
        catalog = Catalog(automations(store, scheduler=scheduler))
        payload = {"kind": "agentTurn", "prompt": "check mail"}
        job = await call_as("ops", catalog, "add", job={"schedule": EVERY_MINUTE,
                                                        "payload": payload})  # fmt: skip
        now[0] += 60
        await scheduler.tick()
        await scheduler.drain()
        return str(job["id"])

    job_id = asyncio.run(main())
    assert seen == [{"kind": "automation", "jobId": job_id, "owner": "ops", "depth": 1}]


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ({"kind": "cron", "expr": "* * * * * *", "tz": "UTC"},
         "Invalid cron expression '* * * * * *'; five fields (minute hour day month weekday), "
         "e.g. '0 9 * * 1-5' (a sixth field for seconds is not accepted)."),
        ({"kind": "cron", "expr": "0 0 30 2 *", "tz": "UTC"},
         "The cron expression '0 0 30 2 *' never matches (such as a 30th of February); check "
         "its day and month fields."),
        ({"kind": "at", "at": "9999-12-31T23:59:59-05:00"},
         "The schedule {'kind': 'at', 'at': '9999-12-31T23:59:59-05:00'} has no occurrence "
         "between now and the end of the year 9999; give a time in the future."),
        ({"kind": "every", "everyMs": 10**15},
         "The schedule {'kind': 'every', 'everyMs': 1000000000000000} has no occurrence "
         "between now and the end of the year 9999; give a time in the future."),
    ],
    ids=["six-fields", "never-matches", "after-9999", "interval-after-9999"],
)  # fmt: skip
def test_schedules_that_cannot_fire_as_asked_are_invalid(
    schedule: dict[str, Any], message: str
) -> None:
    from clawcell.store import MemoryStore

    async def main() -> ToolError:
        catalog = Catalog(automations(MemoryStore()))
        return await refused("ops", catalog, "add", job={"schedule": schedule, "payload": CELL})

    error = asyncio.run(main())
    assert (error.code, error.message) == ("invalid_schedule", message)


def test_update_to_a_past_time_is_refused_as_add_refuses_it() -> None:
    from clawcell.store import MemoryStore

    async def main() -> ToolError:
        catalog = Catalog(automations(MemoryStore()))
        job = await call_as("ops", catalog, "add", job={"schedule": EVERY_MINUTE,
                                                        "payload": CELL})  # fmt: skip
        past = {"schedule": {"kind": "at", "at": "2001-01-01T00:00:00+00:00"}}
        return await refused("ops", catalog, "update", jobId=job["id"], patch=past)

    error = asyncio.run(main())
    assert error.code == "invalid_schedule"
    assert "has no occurrence between now and the end of the year 9999" in error.message


def test_a_stored_job_due_after_9999_does_not_break_list(new_store: StoreFactory) -> None:
    async def main() -> Any:
        store = new_store()
        jobs = job_store_for(store)
        spec = {"name": "far", "schedule": EVERY_MINUTE, "payload": CELL, "catchUp": "one",
                "maxHistory": 50, "anchor": 0.0, "owner": "ops"}  # fmt: skip
        try:
            await jobs.save_job(JobRecord(id="job_far", spec=spec, next_due_at=1e13))
            return await call_as("ops", Catalog(automations(store)), "list")
        finally:
            await jobs.close()
            await store.close()

    listed = asyncio.run(main())
    assert [(j["id"], j["nextRunAt"]) for j in listed["jobs"]] == [("job_far", None)]


def test_a_job_with_a_nul_or_a_lone_surrogate_is_invalid_input() -> None:
    from clawcell.store import MemoryStore

    async def main() -> list[ToolError]:
        catalog = Catalog(automations(MemoryStore()))
        errors = [
            await refused("ops", catalog, "add", job={"name": "a\x00", "schedule": EVERY_MINUTE,
                                                      "payload": CELL}),
            await refused("ops", catalog, "add", job={"schedule": EVERY_MINUTE, "payload": {
                "kind": "agentTurn", "prompt": "hi\ud800"}}),
        ]  # fmt: skip
        job = await call_as("ops", catalog, "add", job={"schedule": EVERY_MINUTE,
                                                        "payload": CELL})  # fmt: skip
        errors.append(await refused("ops", catalog, "update", jobId=job["id"],
                                    patch={"name": "b\x00"}))  # fmt: skip
        return errors

    errors = asyncio.run(main())
    assert [e.code for e in errors] == ["invalid_input"] * 3
    assert errors[0].message == (
        "`job.name` 'a\\x00' holds the character '\\x00' (a NUL or a lone surrogate), which a "
        "job may not hold; remove it."
    )
    assert errors[1].message.startswith("`job.payload.prompt` 'hi\\ud800' holds")


def test_a_summary_with_a_nul_is_recorded_on_every_backend(new_store: StoreFactory) -> None:
    async def main() -> dict[str, Any]:
        store = new_store()
        now = [1_000_000.0]
        jobs = job_store_for(store)
        scheduler = Scheduler(jobs, PayloadRunner(session_store=store), clock=lambda: now[0])
        catalog = Catalog(automations(store, scheduler=scheduler))
        cell = {"kind": "cell", "code": 'return "before\\u0000after\\ud800";'}
        try:
            job = await call_as("ops", catalog, "add", job={"schedule": EVERY_MINUTE,
                                                            "payload": cell})  # fmt: skip
            now[0] += 60
            await scheduler.tick()
            await scheduler.drain()
            runs = await call_as("ops", catalog, "runs", jobId=job["id"])
            return runs["entries"][0]
        finally:
            await jobs.close()
            await store.close()

    entry = asyncio.run(main())
    assert (entry["status"], entry["summary"]) == ("ok", "before\ufffdafter\ufffd")


def test_config_sets_max_jobs_and_the_sessions_send_patterns(tmp_path: Path) -> None:
    from clawcell.catalog import close_tools
    from clawcell.tools import from_config

    async def main() -> list[str]:
        config = {
            "automations": {"store": str(tmp_path / "state.db"), "max_jobs": 1},
            "sessions": {"send": ["team-*"]},
        }
        tools = [t for t in from_config(config) if t.name == "automations"]
        catalog = Catalog(tools)
        turn = {"kind": "agentTurn", "prompt": "hi", "sessionId": "private-notes"}
        try:
            codes = [
                (
                    await refused(
                        "ops", catalog, "add", job={"schedule": EVERY_MINUTE, "payload": turn}
                    )
                ).code
            ]
            await call_as("ops", catalog, "add", job={"schedule": EVERY_MINUTE, "payload": CELL})
            codes.append(
                (
                    await refused(
                        "ops", catalog, "add", job={"schedule": EVERY_MINUTE, "payload": CELL}
                    )
                ).code
            )
        finally:
            await close_tools(tools)
        return codes  # fmt: skip

    assert asyncio.run(main()) == ["session_not_allowed", "job_limit"]


def test_the_host_calling_the_tool_directly_sees_and_manages_every_sessions_jobs() -> None:
    """No Code Mode run (the Control UI's Jobs panel, an operator's script): every job."""
    from clawcell.store import MemoryStore

    async def main() -> tuple[Any, Any, Any]:
        [tool] = automations(MemoryStore(), max_jobs=1)
        catalog = Catalog([tool])
        job = {"schedule": EVERY_MINUTE, "payload": CELL}
        alice = await call_as("alice", catalog, "add", job=job)
        await call_as("bob", catalog, "add", job=job)
        listed = await tool.execute({"action": "list"})
        paused = await tool.execute({"action": "pause", "jobId": alice["id"]})
        for _ in range(2):  # the host is not held to a session's cap
            await tool.execute({"action": "add", "job": job})
        return listed, paused, await tool.execute({"action": "status"})

    listed, paused, status = asyncio.run(main())
    assert listed["total"] == 2
    assert paused["enabled"] is False
    assert status["jobs"] == 4
