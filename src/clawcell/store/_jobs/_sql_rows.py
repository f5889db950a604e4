"""`SQLJobRows`: the job-store methods that are one statement, shared by the SQL backends.

A backend gives `_rows` (a query's rows) and `_change` (a statement's row count); the
statements and the row mapping live in `_statements`. What needs a transaction (deleting,
claiming an occurrence, finishing, expiring) stays in each backend, since SQLite and
PostgreSQL open transactions differently.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from . import _statements as q
from ._job_store import JobRecord, JobRun

__all__ = ["SQLJobRows"]


class SQLJobRows(ABC):
    """The single-statement half of a SQL `JobStore`."""

    @abstractmethod
    async def _rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    async def _change(self, sql: str, params: tuple[Any, ...]) -> int: ...

    async def save_job(self, job: JobRecord) -> None:
        """Insert or replace a job."""
        await self._change(q.SAVE_JOB, q.job_params(job))

    async def get_job(self, job_id: str) -> JobRecord | None:
        """A job by id, or `None`."""
        rows = await self._rows(q.GET_JOB, (job_id,))
        return q.job_row(rows[0]) if rows else None

    async def find_job(self, declaration_key: str) -> JobRecord | None:
        """The job with this declaration key, or `None`."""
        rows = await self._rows(q.FIND_JOB, (declaration_key,))
        return q.job_row(rows[0]) if rows else None

    async def list_jobs(self) -> list[JobRecord]:
        """Every job not removed, oldest first."""
        return [q.job_row(r) for r in await self._rows(q.LIST_JOBS, ())]

    async def due_jobs(self, now: float) -> list[JobRecord]:
        """Enabled, not removed jobs due at `now`."""
        return [q.job_row(r) for r in await self._rows(q.DUE, (now,))]

    async def add_run(self, run: JobRun) -> None:
        """Record a run."""
        await self._change(q.INSERT_RUN, q.run_params(run))

    async def queued_runs(self) -> list[JobRun]:
        """Queued runs, oldest first."""
        return [q.run_row(r) for r in await self._rows(q.QUEUED, ())]

    async def claim_queued(
        self, run_id: str, *, worker: str, started_at: float, lease_expires_at: float
    ) -> bool:
        """Move a queued run to `running`, or `False`."""
        params = (worker, started_at, lease_expires_at, run_id)
        return await self._change(q.CLAIM_QUEUED, params) == 1

    async def renew_run(self, run_id: str, *, worker: str, lease_expires_at: float) -> bool:
        """Extend a lease, or `False`."""
        return await self._change(q.RENEW, (lease_expires_at, run_id, worker)) == 1

    async def get_run(self, run_id: str) -> JobRun | None:
        """A run by id, or `None`."""
        rows = await self._rows(q.GET_RUN, (run_id,))
        return q.run_row(rows[0]) if rows else None

    async def list_runs(self, job_id: str, *, offset: int, limit: int) -> tuple[list[JobRun], int]:
        """A page of a job's runs, newest first, and their total."""
        rows = await self._rows(q.LIST_RUNS, (job_id, limit, offset))
        total = (await self._rows(q.COUNT_RUNS, (job_id,)))[0][0]
        return [q.run_row(r) for r in rows], int(total)

    async def active_runs(self, job_id: str) -> int:
        """Queued or running runs of a job."""
        return int((await self._rows(q.ACTIVE, (job_id,)))[0][0])
