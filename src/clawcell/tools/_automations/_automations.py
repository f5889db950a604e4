"""`automations(store)`: the `automations` tool over the jobs of a session store."""

from __future__ import annotations

from typing import Any

from ...catalog import Tool
from .._sessions._sessions_policy import SessionVisibility

__all__ = ["automations"]


def automations(
    store: Any,
    *,
    scheduler: Any = None,
    max_jobs: int = 20,
    visibility: SessionVisibility | None = None,
) -> list[Tool]:
    """The `automations` tool; its jobs live beside `store`.

    Every job belongs to the session that added it: other sessions neither list, read,
    change, run nor remove it.

    Args:
        store: A session store (`MemoryStore`, `SQLiteStore`, `PostgresStore`) or a
            `clawcell.store.JobStore`.
        scheduler: The `clawcell.automations.Scheduler` of this process, if it runs one:
            `status` reports it and `add`/`run` wake it. Without one, jobs fire wherever a
            worker (`clawcell automations run`) serves the same store.
        max_jobs: Jobs one session may own at once (default 20).
        visibility: The sessions' `SessionVisibility`: an `agentTurn` job may post only into
            its own session or one `send` allows (any session when `None`). Pass the one
            the session tools use.

    Returns:
        `[automations]`.

    Raises:
        ConfigurationError: `store` is not a store.
    """
    from ...store import SessionStore, job_store_for
    from ._tool import automations_tool

    jobs = scheduler.jobs if scheduler is not None else job_store_for(store)
    session_store = store if isinstance(store, SessionStore) else None
    may_post = None if visibility is None else visibility.may_post
    return [
        automations_tool(
            jobs,
            scheduler=scheduler,
            session_store=session_store,
            max_jobs=max_jobs,
            may_post=may_post,
        )
    ]
