"""The `automations` tool: manage scheduled jobs and read their run history."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from ..catalog import Tool
from ..errors import ToolError
from ..store import JobRecord, JobRun, JobStore
from ._jobs import job_json, job_summary, new_job, run_json, updated_job
from ._scheduler import Scheduler, clean_session
from ._schemas import AUTOMATIONS_INPUT, AUTOMATIONS_OUTPUT

__all__ = ["automations_tool"]

DEFAULT_PAGE: Final = 50
_DESCRIPTION = (
    "Schedule work. `add` a job {schedule: cron (with tz) | every (everyMs) | at (ISO time), "
    "payload: a cell {kind:'cell', code} run headless with its own limits and tool-call "
    "budget, or an agent turn {kind:'agentTurn', prompt}}; `list`, `get`, `update`, "
    "`pause`, `resume`, `remove` (answers `sessionCleanup: 'pending'` while a run is active), "
    "`run` (now), `runs` (history: status, envelope status, summary), `status`."
)

Handler = Callable[["_Actions", Mapping[str, Any]], Awaitable[Any]]


def _page(total: int, offset: int, limit: int) -> dict[str, Any]:
    more = offset + limit < total
    return {
        "total": total,
        "offset": offset,
        "limit": limit,
        "hasMore": more,
        "nextOffset": offset + limit if more else None,
    }


class _Actions:
    def __init__(
        self, jobs: JobStore, scheduler: Scheduler | None, session_store: Any, clock: Any
    ) -> None:
        self.jobs = jobs
        self.scheduler = scheduler
        self.session_store = session_store
        self.clock: Callable[[], float] = clock

    async def job(self, params: Mapping[str, Any]) -> JobRecord:
        job_id = params.get("jobId")
        job = await self.jobs.get_job(job_id) if isinstance(job_id, str) else None
        if job is None or job.removed:
            raise ToolError(
                f"No automation job {job_id!r}; `list` shows the jobs.", code="not_found"
            )
        return job

    def wake(self) -> None:
        if self.scheduler is not None:
            self.scheduler.wake()

    async def status(self, _: Mapping[str, Any]) -> Any:
        jobs = await self.jobs.list_jobs()
        due = [j.next_due_at for j in jobs if j.enabled and j.next_due_at is not None]
        active = sum([await self.jobs.active_runs(j.id) for j in jobs])
        result: dict[str, Any] = {
            "enabled": self.scheduler is not None and self.scheduler.running,
            "jobs": len(jobs),
            "activeRuns": active,
            "nextWakeAtMs": round(min(due) * 1000, 3) if due else None,
        }
        if self.scheduler is not None:
            result["workerId"] = self.scheduler.worker
        return result

    async def list(self, params: Mapping[str, Any]) -> Any:
        jobs = await self.jobs.list_jobs()
        offset, limit = int(params.get("offset", 0)), int(params.get("limit", DEFAULT_PAGE))
        shown = [job_summary(j) for j in jobs[offset : offset + limit]]
        return {"jobs": shown, **_page(len(jobs), offset, limit)}

    async def get(self, params: Mapping[str, Any]) -> Any:
        return job_json(await self.job(params))

    async def add(self, params: Mapping[str, Any]) -> Any:
        job = new_job(params.get("job"), self.clock())
        key = job.declaration_key
        if key is None:
            await self.jobs.save_job(job)
            self.wake()
            return job_json(job)
        existing = await self.jobs.find_job(key)
        if existing is not None and not existing.removed:
            patch = {k: v for k, v in params["job"].items() if k != "declarationKey"}
            job = updated_job(existing, patch, self.clock())
        await self.jobs.save_job(job)
        self.wake()
        created = existing is None or existing.removed
        return {"ok": True, "declarationKey": key, "created": created, "job": job_json(job)}

    async def update(self, params: Mapping[str, Any]) -> Any:
        job = updated_job(await self.job(params), params.get("patch"), self.clock())
        await self.jobs.save_job(job)
        self.wake()
        return job_json(job)

    async def remove(self, params: Mapping[str, Any]) -> Any:
        job_id = params.get("jobId")
        job = await self.jobs.get_job(job_id) if isinstance(job_id, str) else None
        if job is None or job.removed:
            return {"ok": False, "removed": False}
        if await self.jobs.active_runs(job.id):
            await self.jobs.save_job(_replace(job, removed=True, enabled=False, now=self.clock()))
            return {"ok": True, "removed": True, "sessionCleanup": "pending"}
        await self.jobs.delete_job(job.id)
        await clean_session(self.session_store, job.id)
        return {"ok": True, "removed": True}

    async def run(self, params: Mapping[str, Any]) -> Any:
        job = await self.job(params)
        if await self.jobs.active_runs(job.id):
            return {"ok": True, "ran": False, "reason": "already-running"}
        now = self.clock()
        run = JobRun(run_id=f"jrun_{uuid.uuid4().hex[:12]}", job_id=job.id, trigger="manual",
                     status="queued", queued_at=now)  # fmt: skip
        await self.jobs.add_run(run)
        self.wake()
        return {"ok": True, "enqueued": True, "runId": run.run_id}

    async def runs(self, params: Mapping[str, Any]) -> Any:
        job = await self.job(params)
        offset, limit = int(params.get("offset", 0)), int(params.get("limit", DEFAULT_PAGE))
        entries, total = await self.jobs.list_runs(job.id, offset=offset, limit=limit)
        return {"entries": [run_json(r) for r in entries], **_page(total, offset, limit)}

    async def pause(self, params: Mapping[str, Any]) -> Any:
        job = _replace(await self.job(params), enabled=False, now=self.clock())
        await self.jobs.save_job(job)
        return job_json(job)

    async def resume(self, params: Mapping[str, Any]) -> Any:
        job = await self.job(params)
        resumed = updated_job(job, {"enabled": True}, self.clock())
        if job.next_due_at is not None and job.next_due_at < self.clock():
            from ._schedule import next_after  # a paused job does not catch up on resume

            later = next_after(job.spec["schedule"], self.clock(), anchor=job.spec["anchor"])
            resumed = _replace(resumed, next_due_at=later, now=self.clock())
        await self.jobs.save_job(resumed)
        self.wake()
        return job_json(resumed)


def _replace(job: JobRecord, *, now: float, **changes: Any) -> JobRecord:
    import dataclasses

    return dataclasses.replace(job, updated_at=now, **changes)


def automations_tool(
    jobs: JobStore,
    *,
    scheduler: Scheduler | None = None,
    session_store: Any = None,
    clock: Callable[[], float] | None = None,
) -> Tool:
    """The `automations` tool over `jobs` (on `scheduler`'s clock when there is one)."""
    chosen = clock or (scheduler.clock if scheduler is not None else time.time)
    actions = _Actions(jobs, scheduler, session_store, chosen)

    async def execute(params: dict[str, Any]) -> Any:
        handler: Handler = getattr(_Actions, str(params["action"]))
        return await handler(actions, params)

    return Tool(
        name="automations",
        description=_DESCRIPTION,
        parameters=AUTOMATIONS_INPUT,
        output_schema=AUTOMATIONS_OUTPUT,
        execute=execute,
        execution_mode="sequential",
    )
