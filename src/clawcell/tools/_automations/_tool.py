"""The `automations` tool: manage scheduled jobs and read their run history."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, cast

from ...automations import Scheduler, delete_job_session, next_after
from ...catalog import Tool, call_session
from ...errors import ConfigurationError, ToolError
from ...store import JobRecord, JobRun, JobStore
from ._jobs import job_json, job_owner, job_summary, new_job, run_json, updated_job
from ._schemas import AUTOMATIONS_INPUT, AUTOMATIONS_OUTPUT

__all__ = ["automations_tool"]

DEFAULT_PAGE: Final = 50
DEFAULT_MAX_JOBS: Final = 20
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
        self,
        jobs: JobStore,
        scheduler: Scheduler | None,
        session_store: Any,
        clock: Any,
        policy: JobPolicy,
    ) -> None:
        self.jobs = jobs
        self.scheduler = scheduler
        self.session_store = session_store
        self.clock: Callable[[], float] = clock
        self.policy = policy

    @staticmethod
    def owner() -> str | None:
        """The calling session: it owns the jobs it adds and sees only those. `None` is the
        host calling the tool directly (no Code Mode run: the operator, the Control UI's
        Jobs panel), which sees and manages every job."""
        return call_session.get()

    def may_touch(self, job: JobRecord) -> bool:
        owner = self.owner()
        return owner is None or job_owner(job) == owner

    async def mine(self) -> list[JobRecord]:
        return [job for job in await self.jobs.list_jobs() if self.may_touch(job)]

    async def job(self, params: Mapping[str, Any]) -> JobRecord:
        job_id = params.get("jobId")
        job = await self.jobs.get_job(job_id) if isinstance(job_id, str) else None
        if job is None or job.removed or not self.may_touch(job):
            whose = ("", "the") if self.owner() is None else (" of this session", "its")
            raise ToolError(
                f"No automation job {job_id!r}{whose[0]}; `list` shows {whose[1]} jobs.",
                code="not_found",
            )
        return job

    def wake(self) -> None:
        if self.scheduler is not None:
            self.scheduler.wake()

    async def status(self, _: Mapping[str, Any]) -> Any:
        jobs = await self.mine()
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
        jobs = await self.mine()
        offset, limit = int(params.get("offset", 0)), int(params.get("limit", DEFAULT_PAGE))
        shown = [job_summary(j) for j in jobs[offset : offset + limit]]
        return {"jobs": shown, **_page(len(jobs), offset, limit)}

    async def get(self, params: Mapping[str, Any]) -> Any:
        return job_json(await self.job(params))

    async def add(self, params: Mapping[str, Any]) -> Any:
        caller = self.owner()
        owner = caller or "default"  # the host's own jobs belong to the default session
        job = new_job(params.get("job"), self.clock(), owner=owner)
        if caller is not None:  # the host is held neither to the cap nor to `may_post`
            self.policy.check_target(job)
        key = job.declaration_key
        existing = None if key is None else await self.jobs.find_job(key)
        if existing is not None and not existing.removed:
            if not self.may_touch(existing):
                raise ToolError(
                    f"The `declarationKey` {key!r} belongs to another session's job; "
                    "choose another key.",
                    code="invalid_job",
                )
            patch = {k: v for k, v in params["job"].items() if k != "declarationKey"}
            job = updated_job(existing, patch, self.clock())
        elif caller is not None:
            await self.policy.check_count(len(await self.mine()), owner)
        await self.jobs.save_job(job)
        self.wake()
        if key is None:
            return job_json(job)
        created = existing is None or existing.removed
        return {"ok": True, "declarationKey": key, "created": created, "job": job_json(job)}

    async def update(self, params: Mapping[str, Any]) -> Any:
        job = updated_job(await self.job(params), params.get("patch"), self.clock())
        if self.owner() is not None:
            self.policy.check_target(job)
        await self.jobs.save_job(job)
        self.wake()
        return job_json(job)

    async def remove(self, params: Mapping[str, Any]) -> Any:
        job_id = params.get("jobId")
        job = await self.jobs.get_job(job_id) if isinstance(job_id, str) else None
        if job is None or job.removed or not self.may_touch(job):
            return {"ok": False, "removed": False}
        if await self.jobs.active_runs(job.id):
            await self.jobs.save_job(_replace(job, removed=True, enabled=False, now=self.clock()))
            return {"ok": True, "removed": True, "sessionCleanup": "pending"}
        await self.jobs.delete_job(job.id)
        await delete_job_session(self.session_store, job.id)
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
            # A paused job does not catch up on resume.

            later = next_after(job.spec["schedule"], self.clock(), anchor=job.spec["anchor"])
            resumed = _replace(resumed, next_due_at=later, now=self.clock())
        await self.jobs.save_job(resumed)
        self.wake()
        return job_json(resumed)


class JobPolicy:
    """How many jobs a session may own, and where its `agentTurn` jobs may post."""

    def __init__(self, max_jobs: int, may_post: Callable[[str, str], bool] | None) -> None:
        if (
            isinstance(max_jobs, bool)
            or not isinstance(cast(object, max_jobs), int)
            or max_jobs < 1
        ):
            raise ConfigurationError(
                f"`max_jobs` must be a positive integer (jobs one session may own), "
                f"got {max_jobs!r}."
            )
        self.max_jobs = max_jobs
        self.may_post = may_post

    async def check_count(self, owned: int, owner: str) -> None:
        if owned >= self.max_jobs:
            raise ToolError(
                f"Session {owner!r} already has {owned} automation jobs, the most one session "
                f"may (`max_jobs` is {self.max_jobs}); `remove` one first.",
                code="job_limit",
            )

    def check_target(self, job: JobRecord) -> None:
        payload = job.spec["payload"]
        target = payload.get("sessionId") if payload["kind"] == "agentTurn" else None
        owner = job_owner(job)
        if not isinstance(target, str) or target == owner or self.may_post is None:
            return
        if not self.may_post(owner, target):
            raise ToolError(
                f"An `agentTurn` job of this session may not post into session {target!r}; "
                "`SessionVisibility.send` decides which sessions it may post to.",
                code="session_not_allowed",
            )


def _replace(job: JobRecord, *, now: float, **changes: Any) -> JobRecord:
    import dataclasses

    return dataclasses.replace(job, updated_at=now, **changes)


def automations_tool(
    jobs: JobStore,
    *,
    scheduler: Scheduler | None = None,
    session_store: Any = None,
    clock: Callable[[], float] | None = None,
    max_jobs: int = DEFAULT_MAX_JOBS,
    may_post: Callable[[str, str], bool] | None = None,
) -> Tool:
    """The `automations` tool over `jobs` (on `scheduler`'s clock when there is one).

    Each job belongs to the session that added it (`call_session`): other sessions neither
    see, change nor remove it. A session may own at most `max_jobs` jobs; an `agentTurn`
    payload may post only into its own session or one `may_post(owner, target)` allows
    (`SessionVisibility.may_post`; any session when `None`).
    """
    chosen = clock or (scheduler.clock if scheduler is not None else time.time)
    actions = _Actions(jobs, scheduler, session_store, chosen, JobPolicy(max_jobs, may_post))

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
