"""`cancel_requested`: whether the running task was asked to stop, whatever a call swallowed.

Every loop that keeps something alive in the background (a lease keeper, a heartbeat, a
watcher, a sweeper) awaits store calls, and a store call can swallow the `CancelledError`
meant for its task: Python 3.11's `asyncio.wait_for`, which the PostgreSQL pool uses while it
hands out a connection, returns the result that lands together with the cancellation and drops
the cancellation. The task then goes on as if nothing had happened, and a loop that relied on
the exception to end loops on; an event loop closing around it (`asyncio.run`'s end, a test
client's portal) cancels it once and waits for it forever.

`Task.cancelling()` still counts the request after it was swallowed, so each such loop asks
`cancel_requested()` after every call that may swallow, and ends (a background loop) or raises
`CancelledError` again (a caller's own wait). The store offers it because the store's calls
are what swallow, and every package that loops around them may import the store.
"""

from __future__ import annotations

import asyncio

__all__ = ["cancel_requested"]


def cancel_requested() -> bool:
    """Whether the running task was asked to stop, even if a call it awaited swallowed the
    `CancelledError`; `False` outside a task.

    A loop around store calls checks it after each call that may swallow a cancellation and
    ends then, or an event loop closing around the loop waits for it forever.
    """
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
