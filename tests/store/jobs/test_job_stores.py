"""The `JobStore` contract on every backend: claims happen once, history stays bounded."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from clawcell.store import JobRecord, JobRun, JobStore, job_store_for

from ..conftest import StoreFactory

_T = TypeVar("_T")


def _run(new_store: StoreFactory, body: Callable[[JobStore], Coroutine[Any, Any, _T]]) -> _T:
    async def main() -> _T:
        store = new_store()
        jobs = job_store_for(store)
        try:
            return await body(jobs)
        finally:
            await jobs.close()
            await store.close()

    return asyncio.run(main())


JOB = JobRecord(id="job_1", spec={"name": "a"}, next_due_at=100.0, created_at=1.0, updated_at=1.0)


def _run_of(n: int, **fields: Any) -> JobRun:
    base = JobRun(run_id=f"jrun_{n}", job_id="job_1", queued_at=float(n))
    return dataclasses.replace(base, **fields)


def test_of_concurrent_claims_of_one_occurrence_exactly_one_wins(new_store: StoreFactory) -> None:
    async def body(jobs: JobStore) -> tuple[list[bool], JobRecord | None, int]:
        await jobs.save_job(JOB)
        claims = [
            jobs.claim_occurrence(
                "job_1", 100.0, 200.0, _run_of(n, status="running", worker=str(n))
            )
            for n in range(5)
        ]
        won = list(await asyncio.gather(*claims))
        return (
            won,
            await jobs.get_job("job_1"),
            (await jobs.list_runs("job_1", offset=0, limit=9))[1],
        )

    won, job, runs = _run(new_store, body)
    assert sorted(won) == [False, False, False, False, True]
    assert job is not None and job.next_due_at == 200.0
    assert runs == 1


def test_a_queued_run_is_claimed_once_and_renewed_only_by_its_worker(
    new_store: StoreFactory,
) -> None:
    async def body(jobs: JobStore) -> tuple[bool, bool, bool, bool]:
        await jobs.save_job(JOB)
        await jobs.add_run(_run_of(1))
        first = await jobs.claim_queued("jrun_1", worker="a", started_at=5.0, lease_expires_at=9.0)
        second = await jobs.claim_queued("jrun_1", worker="b", started_at=5.0, lease_expires_at=9.0)
        by_a = await jobs.renew_run("jrun_1", worker="a", lease_expires_at=20.0)
        by_b = await jobs.renew_run("jrun_1", worker="b", lease_expires_at=20.0)
        return first, second, by_a, by_b

    assert _run(new_store, body) == (True, False, True, False)


def test_an_expired_lease_makes_the_run_lost_and_its_late_finish_is_refused(
    new_store: StoreFactory,
) -> None:
    async def body(jobs: JobStore) -> tuple[list[str], bool, JobRun | None]:
        await jobs.save_job(JOB)
        running = _run_of(1, status="running", worker="a", lease_expires_at=10.0)
        await jobs.add_run(running)
        lost = await jobs.expire_runs(11.0)
        finished = await jobs.finish_run(
            dataclasses.replace(running, status="ok", ended_at=12.0), keep=10
        )
        return [r.status for r in lost], finished, await jobs.get_run("jrun_1")

    lost, finished, run = _run(new_store, body)
    assert (lost, finished) == (["lost"], False)
    assert run is not None and run.status == "lost" and run.error is not None


def test_history_is_bounded_per_job_and_paged_newest_first(new_store: StoreFactory) -> None:
    async def body(jobs: JobStore) -> tuple[list[str], int, int]:
        await jobs.save_job(JOB)
        for n in range(6):
            run = _run_of(n, status="running", worker="w", lease_expires_at=99.0)
            await jobs.add_run(run)
            await jobs.finish_run(dataclasses.replace(run, status="ok", ended_at=float(n)), keep=3)
        page, total = await jobs.list_runs("job_1", offset=1, limit=2)
        return [r.run_id for r in page], total, await jobs.active_runs("job_1")

    assert _run(new_store, body) == (["jrun_4", "jrun_3"], 3, 0)


def test_due_jobs_leave_out_paused_removed_and_future_ones(new_store: StoreFactory) -> None:
    async def body(jobs: JobStore) -> tuple[list[str], list[str]]:
        for job_id, fields in {
            "job_due": {},
            "job_paused": {"enabled": False},
            "job_removed": {"removed": True},
            "job_later": {"next_due_at": 500.0},
        }.items():
            await jobs.save_job(dataclasses.replace(JOB, id=job_id, **fields))
        due = [j.id for j in await jobs.due_jobs(150.0)]
        listed = [j.id for j in await jobs.list_jobs()]
        await jobs.delete_job("job_due")
        return due, listed + [j.id for j in await jobs.list_jobs()]

    due, listed = _run(new_store, body)
    assert due == ["job_due"]
    assert sorted(listed[:3]) == ["job_due", "job_later", "job_paused"]
    assert sorted(listed[3:]) == ["job_later", "job_paused"]
