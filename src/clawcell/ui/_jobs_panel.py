"""The Jobs panel: scheduled automations, their recent runs, and pause / resume / run now.

The panel acts only through the public `automations` tool (`clawcell.tools.automations`):
`list`, `get` and `runs` to draw it, `pause`, `resume` and `run` for its buttons, so it sees
and changes exactly what a cell calling the tool would. `GET /jobs` is the page,
`GET /api/jobs` the same facts as JSON, and `POST /api/jobs/{job}/{pause|resume|run}` (CSRF
checked by the `Guard` like every POST) answers with the job's redrawn card. An unknown job
id is a 404 naming it, a malformed one a 400; neither changes anything.
"""

from __future__ import annotations

import inspect
import math
import re
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, cast

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._lazy import value_class
from ..catalog import Tool, ToolResult
from ..errors import ToolError
from ._playground._exec import panel_fragment
from ._playground._routes import PageRenderer
from ._protocol import CatalogRunner, ChatAgent
from ._responses import bad_request

__all__ = ["JobsPanel", "schedule_words"]

JOB_ID: Final = re.compile(r"[A-Za-z0-9_.:-]{1,200}")
ACTIONS: Final = ("pause", "resume", "run")
RECENT_RUNS: Final = 10
"""Runs each job's card lists."""
MAX_JOBS: Final = 200
"""Jobs the page draws (the rest are counted)."""
_UNITS: Final = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1_000), ("ms", 1))


def schedule_words(schedule: Mapping[str, Any]) -> str:
    """A schedule as people read it: `every 1 min 30 s`, `cron 0 9 * * 1-5 (Europe/Paris)`,
    `once at 2026-12-24 17:00:00 UTC`."""
    kind = schedule.get("kind")
    if kind == "every":
        left, parts = int(schedule.get("everyMs", 0)), list[str]()
        for unit, size in _UNITS:
            if left >= size:
                parts.append(f"{left // size} {unit}")
                left %= size
        return "every " + " ".join(parts or ["0 ms"])
    if kind == "cron":
        return f"cron {schedule.get('expr')} ({schedule.get('tz') or 'UTC'})"
    if kind == "at":
        return f"once at {_utc(str(schedule.get('at')))}"
    return str(kind)


def _utc(moment: str) -> str:
    """An ISO 8601 time with an offset as `YYYY-MM-DD HH:MM:SS UTC` (else as it is)."""
    try:
        parsed = datetime.fromisoformat(moment)
    except ValueError:
        return moment
    if parsed.utcoffset() is None:
        return moment
    return parsed.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _relative(ms: float | None, now: float) -> str:
    """`in 5 min` / `12 s ago` for a time in milliseconds since the epoch."""
    if ms is None:
        return ""
    delta = ms / 1000 - now
    seconds = abs(delta)
    amount = next(
        (f"{math.floor(seconds / size)} {unit}" for unit, size in
         (("d", 86_400), ("h", 3_600), ("min", 60)) if seconds >= size),
        f"{math.floor(seconds)} s",
    )  # fmt: skip
    return f"in {amount}" if delta >= 0 else f"{amount} ago"


@value_class
class JobCard:
    """What a job's card shows: the job, its schedule in words, its recent runs."""

    job: Mapping[str, Any]
    schedule: str
    next_in: str
    runs: tuple[Mapping[str, Any], ...]
    total_runs: int

    @property
    def last(self) -> Mapping[str, Any] | None:
        return self.runs[0] if self.runs else None

    def to_json(self) -> dict[str, Any]:
        return {
            **self.job,
            "scheduleText": self.schedule,
            "lastRun": self.last,
            "runs": list(self.runs),
            "totalRuns": self.total_runs,
        }


class JobsPanel:
    """The Jobs page and its API over an `automations` tool (found on the agent by default)."""

    def __init__(self, agent: ChatAgent, page: PageRenderer, tool: Tool | None) -> None:
        self.agent, self.page, self._tool = agent, page, tool
        self._looked = tool is not None
        self.clock: Callable[[], float] = time.time

    @property
    def tool(self) -> Tool | None:
        """The `automations` tool: the one given, else the agent's own (looked up once)."""
        if not self._looked:
            self._looked = True
            runner = self.agent.mode("playground")
            catalog = runner.catalog if isinstance(runner, CatalogRunner) else None
            binding = catalog.binding("automations") if catalog is not None else None
            self._tool = binding.tool if binding is not None else None
        return self._tool

    async def _call(self, tool: Tool, action: str, **params: Any) -> dict[str, Any]:
        result: object = tool.execute({"action": action, **params})
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, ToolResult):
            result = result.details
        return cast(dict[str, Any], result)

    async def _card(self, tool: Tool, job_id: str) -> JobCard:
        job = await self._call(tool, "get", jobId=job_id)
        runs = await self._call(tool, "runs", jobId=job_id, offset=0, limit=RECENT_RUNS)
        return JobCard(
            job=job,
            schedule=schedule_words(job.get("schedule") or {}),
            next_in=_relative(job.get("nextRunAtMs"), self.clock()) if job.get("enabled") else "",
            runs=tuple(runs.get("entries") or ()),
            total_runs=int(runs.get("total") or 0),
        )

    async def _cards(self, tool: Tool) -> tuple[list[JobCard], int]:
        listed = await self._call(tool, "list", offset=0, limit=MAX_JOBS)
        ids = [str(entry["id"]) for entry in listed.get("jobs") or ()]
        cards: list[JobCard] = []
        for job_id in ids:
            try:
                cards.append(await self._card(tool, job_id))
            except ToolError:
                continue  # removed between `list` and `get`
        return cards, int(listed.get("total") or len(cards))

    async def view(self, request: Request) -> Response:
        tool = self.tool
        cards, total = await self._cards(tool) if tool is not None else ([], 0)
        status = await self._call(tool, "status") if tool is not None else {}
        wake = _relative(status.get("nextWakeAtMs"), self.clock())
        return self.page(request, "jobs.html", page="jobs", configured=tool is not None,
                         cards=cards, total=total, active_runs=status.get("activeRuns", 0),
                         next_wake=wake)  # fmt: skip

    async def listing(self, request: Request) -> Response:
        tool = self.tool
        if tool is None:
            return _not_configured()
        cards, total = await self._cards(tool)
        jobs = [{**c.to_json(), "html": panel_fragment("job", value=c)} for c in cards]
        return JSONResponse({"jobs": jobs, "total": total})

    async def act(self, request: Request) -> Response:
        job_id, action = request.path_params["job"], request.path_params["action"]
        if action not in ACTIONS:
            return JSONResponse({"error": f"no job action {action!r:.40}; use one of "
                                 f"{', '.join(ACTIONS)}."}, status_code=404)  # fmt: skip
        if not JOB_ID.fullmatch(job_id):
            return bad_request(f"job id {job_id!r:.80} is not allowed; job ids look like "
                               "`job_1a2b3c4d5e6f`.")  # fmt: skip
        tool = self.tool
        if tool is None:
            return _not_configured()
        try:
            result = await self._call(tool, action, jobId=job_id)
            card = await self._card(tool, job_id)
        except ToolError as exc:
            status = 404 if exc.code == "not_found" else 409
            return JSONResponse({"error": exc.message, "code": exc.code}, status_code=status)
        html = panel_fragment("job", value=card)
        return JSONResponse({"ok": True, "action": action, "result": result,
                             "message": _said(action, card, result), "html": html,
                             "job": card.to_json()})  # fmt: skip

    def routes(self) -> list[Route]:
        return [
            Route("/jobs", self.view, methods=["GET"]),
            Route("/api/jobs", self.listing, methods=["GET"]),
            Route("/api/jobs/{job}/{action}", self.act, methods=["POST"]),
        ]


def _said(action: str, card: JobCard, result: Mapping[str, Any]) -> str:
    name = card.job.get("name") or card.job.get("id")
    if action == "pause":
        return f"Paused {name}: it will not fire until resumed."
    if action == "resume":
        return f"Resumed {name}: next run {card.next_in or 'not scheduled'}."
    if result.get("reason") == "already-running":
        return f"{name} is already running; no second run was queued."
    return f"Queued a run of {name}; a scheduler worker starts it within a moment."


def _not_configured() -> Response:
    return JSONResponse(
        {"error": "automations are not configured: give `create_app` an `automations` tool, "
         "or add `[builtin_tools.automations]` to clawcell.toml."},
        status_code=404,
    )  # fmt: skip
