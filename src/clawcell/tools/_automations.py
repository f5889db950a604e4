"""`automations(store)`: the `automations` tool over the jobs of a session store."""

from __future__ import annotations

from typing import Any

from ..catalog import Tool

__all__ = ["automations"]


def automations(store: Any, *, scheduler: Any = None) -> list[Tool]:
    """The `automations` tool; its jobs live beside `store`.

    Args:
        store: A session store (`MemoryStore`, `SQLiteStore`, `PostgresStore`) or a
            `clawcell.store.JobStore`.
        scheduler: The `clawcell.automations.Scheduler` of this process, if it runs one:
            `status` reports it and `add`/`run` wake it. Without one, jobs fire wherever a
            worker (`clawcell automations run`) serves the same store.

    Returns:
        `[automations]`.

    Raises:
        ConfigurationError: `store` is not a store.
    """
    from ..automations import automations_tool
    from ..store import SessionStore, job_store_for

    jobs = scheduler.jobs if scheduler is not None else job_store_for(store)
    session_store = store if isinstance(store, SessionStore) else None
    return [automations_tool(jobs, scheduler=scheduler, session_store=session_store)]
