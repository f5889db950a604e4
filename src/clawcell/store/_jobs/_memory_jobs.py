"""`MemoryJobStore`: jobs and runs in this process (tests, one-process servers)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from ._job_store import LOST, JobRecord, JobRun

__all__ = ["MemoryJobStore"]


class MemoryJobStore:
    """A `JobStore` in memory; one lock makes every compare-and-set atomic."""

    def __init__(self) -> None:
        self._jobs: dict[str, JobRecord] = {}
        self._runs: dict[str, JobRun] = {}
        self._lock = asyncio.Lock()

    async def save_job(self, job: JobRecord) -> None:
        """Insert or replace a job."""
        self._jobs[job.id] = job

    async def get_job(self, job_id: str) -> JobRecord | None:
        """A job by id, or `None`."""
        return self._jobs.get(job_id)

    async def find_job(self, declaration_key: str) -> JobRecord | None:
        """The job with this declaration key, or `None`."""
        return next((j for j in self._jobs.values() if j.declaration_key == declaration_key), None)

    async def list_jobs(self) -> list[JobRecord]:
        """Every job not removed, oldest first."""
        return sorted((j for j in self._jobs.values() if not j.removed), key=_created)

    async def delete_job(self, job_id: str) -> None:
        """Delete a job and its runs."""
        self._jobs.pop(job_id, None)
        for run_id in [r.run_id for r in self._runs.values() if r.job_id == job_id]:
            del self._runs[run_id]

    async def due_jobs(self, now: float) -> list[JobRecord]:
        """Enabled, not removed jobs due at `now`."""
        return [
            j
            for j in await self.list_jobs()
            if j.enabled and j.next_due_at is not None and j.next_due_at <= now
        ]

    async def claim_occurrence(
        self, job_id: str, due_at: float, next_due_at: float | None, run: JobRun | None
    ) -> bool:
        """Move `next_due_at` from `due_at` and record `run`, or `False`."""
        async with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.removed or not job.enabled or job.next_due_at != due_at:
                return False
            self._jobs[job_id] = replace(job, next_due_at=next_due_at)
            if run is not None:
                self._runs[run.run_id] = run
            return True

    async def add_run(self, run: JobRun) -> None:
        """Record a run."""
        self._runs[run.run_id] = run

    async def queued_runs(self) -> list[JobRun]:
        """Queued runs, oldest first."""
        return sorted((r for r in self._runs.values() if r.status == "queued"), key=_queued)

    async def claim_queued(
        self, run_id: str, *, worker: str, started_at: float, lease_expires_at: float
    ) -> bool:
        """Move a queued run to `running`, or `False`."""
        async with self._lock:
            run = self._runs.get(run_id)
            if run is None or run.status != "queued":
                return False
            self._runs[run_id] = replace(
                run,
                status="running",
                worker=worker,
                started_at=started_at,
                lease_expires_at=lease_expires_at,
            )
            return True

    async def renew_run(self, run_id: str, *, worker: str, lease_expires_at: float) -> bool:
        """Extend a lease, or `False`."""
        async with self._lock:
            run = self._runs.get(run_id)
            if run is None or run.status != "running" or run.worker != worker:
                return False
            self._runs[run_id] = replace(run, lease_expires_at=lease_expires_at)
            return True

    async def finish_run(self, run: JobRun, *, keep: int) -> bool:
        """Record the end of `run`, then trim the job's history."""
        async with self._lock:
            held = self._runs.get(run.run_id)
            if held is None or held.status != "running" or held.worker != run.worker:
                return False
            self._runs[run.run_id] = run
            ended = [
                r
                for r in self._runs.values()
                if r.job_id == run.job_id and r.status not in ("queued", "running")
            ]
            for old in sorted(ended, key=_queued, reverse=True)[keep:]:
                del self._runs[old.run_id]
            return True

    async def expire_runs(self, now: float) -> list[JobRun]:
        """Mark runs with an expired lease `lost`."""
        async with self._lock:
            lost: list[JobRun] = []
            for run in list(self._runs.values()):
                expiry = run.lease_expires_at
                if run.status == "running" and expiry is not None and expiry < now:
                    marked = replace(run, status="lost", ended_at=now, error=LOST)
                    self._runs[run.run_id] = marked
                    lost.append(marked)
            return lost

    async def get_run(self, run_id: str) -> JobRun | None:
        """A run by id, or `None`."""
        return self._runs.get(run_id)

    async def list_runs(self, job_id: str, *, offset: int, limit: int) -> tuple[list[JobRun], int]:
        """A page of a job's runs, newest first, and their total."""
        runs = sorted(
            (r for r in self._runs.values() if r.job_id == job_id), key=_queued, reverse=True
        )
        return runs[offset : offset + limit], len(runs)

    async def active_runs(self, job_id: str) -> int:
        """Queued or running runs of a job."""
        return sum(
            1
            for r in self._runs.values()
            if r.job_id == job_id and r.status in ("queued", "running")
        )

    async def close(self) -> None:
        """Nothing to release."""


def _created(job: JobRecord) -> tuple[float, str]:
    return job.created_at, job.id


def _queued(run: JobRun) -> tuple[float, str]:
    return run.queued_at, run.run_id
