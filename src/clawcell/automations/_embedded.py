"""`embedded_worker`: a scheduler worker inside another command (`clawcell serve`,
`clawcell mcp serve`), when `[builtin_tools.automations]` sets `worker = true`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

from ..catalog import Tool
from ._payload import PayloadRunner
from ._scheduler import Scheduler

__all__ = ["embedded_worker"]


@asynccontextmanager
async def embedded_worker(
    builtin_tools: Mapping[str, Any], tools: Callable[[], Sequence[Tool]]
) -> AsyncGenerator[Scheduler | None]:
    """Run a `Scheduler` over the `automations` store of `builtin_tools` while the block
    runs, its headless cells calling the tools `tools()` builds (only called when a worker
    runs); `None` (nothing runs) unless the section sets `worker = true`. On exit the
    worker stops after its runs in flight."""
    section = builtin_tools.get("automations")
    if not isinstance(section, Mapping):
        yield None
        return
    options = cast(Mapping[str, Any], section)
    if options.get("worker") is not True:
        yield None
        return
    from ..store import job_store_for, open_store

    store = open_store(str(options["store"]), schema=str(options.get("schema", "clawcell")))
    built = [t for t in tools() if t.name != "automations"]
    runner = PayloadRunner(tools=built, session_store=store)
    scheduler = Scheduler(job_store_for(store), runner, session_store=store)
    stop = asyncio.Event()
    task = asyncio.create_task(scheduler.run(stop), name="clawcell-automations-worker")
    try:
        yield scheduler
    finally:
        stop.set()
        await task
        await scheduler.jobs.close()
        await store.close()
        for tool in built:
            if tool.on_close is not None:
                tool.on_close()
