"""`JobStore`: where scheduled jobs and their run history live (a store role of its own).

A job is a JSON specification (`spec`, what the `automations` tool shows) plus the columns
the scheduler needs: `enabled`, `next_due_at` and `removed` (a removal waiting for an active
run to end). A run is one firing: `queued` (asked for by `run`), `running` (claimed by a
worker holding a lease), then `ok`, `error` or `lost` (its worker stopped renewing).

Exactly-once firing rests on two compare-and-set operations every backend makes atomic:
`claim_occurrence` moves a job's `next_due_at` from the due time a worker saw to the next one
*and* records the run in one transaction, so of several workers that saw the same due time
exactly one succeeds; `claim_queued` moves a queued run to `running` the same way.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal, Protocol, runtime_checkable

from ..._lazy import value_class

__all__ = ["LOST", "JobRecord", "JobRun", "JobStore", "RunStatus"]

RunStatus = Literal["queued", "running", "ok", "error", "lost"]
LOST = "the worker running it stopped renewing its lease (killed or cut off)"
"""The `error` of a run found `lost`."""


@value_class
class JobRecord:
    """A stored job.

    Attributes:
        id: The job id (`job_<hex>`).
        spec: The job's JSON specification (name, schedule, payload, options).
        enabled: Whether the scheduler fires it (`pause` clears it).
        next_due_at: The next occurrence in seconds since the epoch, `None` when none is left.
        removed: Removed while a run was active; deleted when that run ends.
        declaration_key: The key of a declarative job (unique), or `None`.
        created_at: Seconds since the epoch.
        updated_at: Seconds since the epoch.
    """

    id: str
    spec: dict[str, Any] = field(default_factory=dict[str, Any])
    enabled: bool = True
    next_due_at: float | None = None
    removed: bool = False
    declaration_key: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0


@value_class
class JobRun:
    """One firing of a job.

    Attributes:
        run_id: The run id (`jrun_<hex>`).
        job_id: Its job.
        trigger: `"schedule"` or `"manual"` (the `run` action).
        status: `queued`, `running`, `ok`, `error` or `lost`.
        due_at: The occurrence it fires (`None` for manual runs).
        queued_at: When it was recorded.
        started_at: When a worker started it.
        ended_at: When it ended (or was found lost).
        worker: The worker holding (or last holding) it.
        lease_expires_at: Until when the worker's claim holds without a renewal.
        envelope_status: The cell envelope's `status` (`completed`, `failed`, …), if any.
        summary: A bounded summary of the result.
        error: What went wrong (`tool_budget_exceeded: …`, the worker was lost, …).
    """

    run_id: str
    job_id: str
    trigger: Literal["schedule", "manual"] = "schedule"
    status: RunStatus = "queued"
    due_at: float | None = None
    queued_at: float = 0.0
    started_at: float | None = None
    ended_at: float | None = None
    worker: str | None = None
    lease_expires_at: float | None = None
    envelope_status: str | None = None
    summary: str | None = None
    error: str | None = None


@runtime_checkable
class JobStore(Protocol):
    """Jobs and runs of the scheduler; `MemoryJobStore`, `SQLiteJobStore`, `PostgresJobStore`."""

    async def save_job(self, job: JobRecord) -> None:
        """Insert or replace a job."""
        ...

    async def get_job(self, job_id: str) -> JobRecord | None:
        """A job by id (removed-pending ones included), or `None`."""
        ...

    async def find_job(self, declaration_key: str) -> JobRecord | None:
        """The job with this declaration key, or `None`."""
        ...

    async def list_jobs(self) -> list[JobRecord]:
        """Every job not removed, oldest first."""
        ...

    async def delete_job(self, job_id: str) -> None:
        """Delete a job and its runs."""
        ...

    async def due_jobs(self, now: float) -> list[JobRecord]:
        """Enabled, not removed jobs whose `next_due_at` is at or before `now`."""
        ...

    async def claim_occurrence(
        self, job_id: str, due_at: float, next_due_at: float | None, run: JobRun | None
    ) -> bool:
        """Atomically move `next_due_at` from `due_at` to `next_due_at` and record `run`;
        `False` (nothing changed) when another worker moved it first."""
        ...

    async def add_run(self, run: JobRun) -> None:
        """Record a run (a queued manual run)."""
        ...

    async def queued_runs(self) -> list[JobRun]:
        """Runs waiting for a worker, oldest first."""
        ...

    async def claim_queued(
        self, run_id: str, *, worker: str, started_at: float, lease_expires_at: float
    ) -> bool:
        """Atomically move a queued run to `running` for `worker`; `False` if taken."""
        ...

    async def renew_run(self, run_id: str, *, worker: str, lease_expires_at: float) -> bool:
        """Extend `worker`'s lease on a running run; `False` when it is no longer its run."""
        ...

    async def finish_run(self, run: JobRun, *, keep: int) -> bool:
        """Record the end of `run` if its worker still holds it, then keep only the newest
        `keep` ended runs of the job; `False` when the run was lost meanwhile."""
        ...

    async def expire_runs(self, now: float) -> list[JobRun]:
        """Mark running runs whose lease expired before `now` as `lost`; those runs."""
        ...

    async def get_run(self, run_id: str) -> JobRun | None:
        """A run by id, or `None`."""
        ...

    async def list_runs(self, job_id: str, *, offset: int, limit: int) -> tuple[list[JobRun], int]:
        """A page of a job's runs, newest first, and their total."""
        ...

    async def active_runs(self, job_id: str) -> int:
        """Queued or running runs of a job."""
        ...

    async def close(self) -> None:
        """Release connections (idempotent)."""
        ...
