"""`Scheduler`: the worker loop that fires due jobs, once each, across any number of workers.

Every `poll_seconds` (sooner when a job falls due before that) a worker (1) marks runs
whose lease expired `lost`, (2) claims due occurrences — `claim_occurrence` moves the job's
`next_due_at` to the following occurrence and records the run in one compare-and-set, so of
several workers exactly one wins each — and (3) claims queued manual runs the same way. A
claimed run's lease is renewed every third of `lease_seconds` while its payload runs; a
worker killed mid-run stops renewing, another worker marks the run `lost`, and the job's
next occurrence fires as usual.

Missed occurrences (every worker was down past more than one occurrence) collapse into one:
`catchUp: "one"` fires it once, now; `"skip"` jumps to the next future occurrence.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import socket
import time
import uuid
from collections.abc import Callable
from typing import Any

from ..store import JobRecord, JobRun, JobStore, cancel_requested
from ._payload import Outcome, PayloadRunner, storable
from ._schedule import next_after

__all__ = ["Scheduler", "delete_job_session"]


class Scheduler:
    """Fires the due jobs of `jobs` through `runner`.

    Args:
        jobs: The job store (shared by every worker).
        runner: Runs payloads.
        worker: This worker's id (default `<host>:<pid>:<random>`).
        lease_seconds: How long a claim holds without renewal; a killed worker's run is
            `lost` this long after its last renewal.
        poll_seconds: Time between passes.
        max_concurrent: Runs this worker executes at once; due work beyond it is left to
            other workers (or the next pass).
        session_store: The session store whose `automation:<job>` session is cleaned up
            when a removed job's last run ends.
        clock: Seconds since the epoch (tests).
    """

    def __init__(
        self,
        jobs: JobStore,
        runner: PayloadRunner,
        *,
        worker: str | None = None,
        lease_seconds: float = 30.0,
        poll_seconds: float = 0.5,
        max_concurrent: int = 4,
        session_store: Any = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.jobs = jobs
        self.runner = runner
        self.worker = worker or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds
        self._slots = max_concurrent
        self._session_store = session_store
        self.clock = clock
        self._tasks: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self.running = False

    @property
    def active(self) -> int:
        """Runs this worker is executing now."""
        return len(self._tasks)

    async def drain(self) -> None:
        """Wait for the runs this worker is executing."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def wake(self) -> None:
        """Make the loop pass now (after `add` or `run`)."""
        self._wake.set()

    async def tick(self) -> list[str]:
        """One pass; the ids of the runs this worker started."""
        now = self.clock()
        for lost in await self.jobs.expire_runs(now):
            await self._after_end(lost.job_id)
        started: list[str] = []
        for job in await self.jobs.due_jobs(now):
            if self.active >= self._slots:
                break
            run = await self._claim_due(job, now)
            if run is not None:
                started.append(self._start(job, run))
        for queued in await self.jobs.queued_runs():
            if self.active >= self._slots:
                break
            job = await self.jobs.get_job(queued.job_id)
            if job is None:
                continue
            lease = self.clock() + self.lease_seconds
            claimed = await self.jobs.claim_queued(
                queued.run_id, worker=self.worker, started_at=self.clock(), lease_expires_at=lease
            )
            if claimed:
                run = dataclasses.replace(
                    queued, status="running", worker=self.worker, started_at=self.clock(),
                    lease_expires_at=lease,
                )  # fmt: skip
                started.append(self._start(job, run))
        return started

    async def _claim_due(self, job: JobRecord, now: float) -> JobRun | None:
        due = job.next_due_at
        assert due is not None
        schedule, anchor = job.spec["schedule"], float(job.spec["anchor"])
        following = next_after(schedule, now, anchor=anchor)
        after_due = next_after(schedule, due, anchor=anchor)
        missed = after_due is not None and after_due <= now
        if missed and job.spec.get("catchUp") == "skip":
            await self.jobs.claim_occurrence(job.id, due, following, None)
            return None
        started = self.clock()
        run = JobRun(
            run_id=f"jrun_{uuid.uuid4().hex[:12]}",
            job_id=job.id,
            trigger="schedule",
            status="running",
            due_at=due,
            queued_at=started,
            started_at=started,
            worker=self.worker,
            lease_expires_at=started + self.lease_seconds,
        )
        return run if await self.jobs.claim_occurrence(job.id, due, following, run) else None

    def _start(self, job: JobRecord, run: JobRun) -> str:
        task = asyncio.create_task(
            self._execute(job, run), name=f"clawcell-automation-{run.run_id}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return run.run_id

    async def _execute(self, job: JobRecord, run: JobRun) -> None:
        keeper = asyncio.create_task(self._renew(run))
        try:
            outcome = await self.runner.run(job, run)
        except asyncio.CancelledError:
            outcome = Outcome(status="error", error="the worker stopped during the run")
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
        ended = dataclasses.replace(
            run,
            status=outcome.status,
            ended_at=self.clock(),
            envelope_status=outcome.envelope_status,
            summary=storable(outcome.summary),
            error=storable(outcome.error),
        )
        await self.jobs.finish_run(ended, keep=int(job.spec.get("maxHistory", 50)))
        await self._after_end(job.id)

    async def _renew(self, run: JobRun) -> None:
        # `cancel_requested`: a renewal may swallow the cancellation that ends this loop.
        while not cancel_requested():
            await asyncio.sleep(self.lease_seconds / 3)
            lease = self.clock() + self.lease_seconds
            if not await self.jobs.renew_run(
                run.run_id, worker=self.worker, lease_expires_at=lease
            ):
                return

    async def _after_end(self, job_id: str) -> None:
        """Delete a removed job once its last active run ended, with its session."""
        job = await self.jobs.get_job(job_id)
        if job is None or not job.removed or await self.jobs.active_runs(job_id):
            return
        await self.jobs.delete_job(job_id)
        await delete_job_session(self._session_store, job_id)

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Pass every `poll_seconds` until `stop` is set (or cancelled); then wait for the
        runs in flight, so a graceful stop loses none."""
        halt = stop or asyncio.Event()
        self.running = True
        try:
            while not halt.is_set() and not cancel_requested():
                await self.tick()
                self._wake.clear()
                waits = [asyncio.create_task(e.wait()) for e in (halt, self._wake)]
                _, pending = await asyncio.wait(
                    waits, timeout=await self._pause(), return_when=asyncio.FIRST_COMPLETED
                )
                for waiting in pending:
                    waiting.cancel()
        finally:
            self.running = False
            await self.drain()

    async def _pause(self) -> float:
        """Until the next pass: `poll_seconds`, or less when a job falls due sooner."""
        due = [
            job.next_due_at
            for job in await self.jobs.list_jobs()
            if job.enabled and job.next_due_at is not None
        ]
        soonest = min(due, default=None)
        if soonest is None:
            return self.poll_seconds
        return min(self.poll_seconds, max(0.0, soonest - self.clock()) + 0.001)


async def delete_job_session(store: Any, job_id: str) -> None:
    """Delete the entries of a removed job's session (`automation:<job id>`, where its
    headless cells kept their state) from `store`; nothing when `store` is `None`."""
    if store is None:
        return
    session = f"automation:{job_id}"
    for key in list(await store.items(session)):
        await store.delete(session, key)
