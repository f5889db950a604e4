"""Automations: jobs that run headless cells or agent turns on a schedule.

`clawcell.tools.automations(store, scheduler=…)` is the `automations` tool; a `Scheduler`
(one per worker process: `clawcell automations run`, or your own `asyncio` task) fires the
due jobs through a `PayloadRunner`, exactly once across workers sharing a PostgreSQL store.
`check_schedule` and `next_after` read a job's schedule as the scheduler does. Cron
schedules need `pip install 'clawcell[automations]'`. See `docs/automations.md`.
"""

from __future__ import annotations

from .. import _lazy
from ._embedded import embedded_worker
from ._payload import Outcome, PayloadRunner, TurnRunner
from ._schedule import check_schedule, next_after
from ._scheduler import Scheduler, delete_job_session

__all__ = [
    "Outcome",
    "PayloadRunner",
    "Scheduler",
    "TurnRunner",
    "check_schedule",
    "delete_job_session",
    "embedded_worker",
    "next_after",
]

# Moved to the `automations` tool's home in `clawcell.tools` (one public entry per tool).
__getattr__ = _lazy.moved_exports(
    __name__,
    {"automations_tool": "clawcell.tools._automations._tool"},
    advice={"automations_tool": "build the tool with `clawcell.tools.automations(store, …)`"},
)
