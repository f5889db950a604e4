"""Automations: jobs that run headless cells or agent turns on a schedule.

`clawcell.tools.automations(store, scheduler=…)` is the `automations` tool; a `Scheduler`
(one per worker process: `clawcell automations run`, or your own `asyncio` task) fires the
due jobs through a `PayloadRunner`, exactly once across workers sharing a PostgreSQL store.
Cron schedules need `pip install 'clawcell[automations]'`. See `docs/automations.md`.
"""

from __future__ import annotations

from ._embedded import embedded_worker
from ._payload import Outcome, PayloadRunner, TurnRunner
from ._scheduler import Scheduler
from ._tool import automations_tool

__all__ = [
    "Outcome",
    "PayloadRunner",
    "Scheduler",
    "TurnRunner",
    "automations_tool",
    "embedded_worker",
]
