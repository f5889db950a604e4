"""`wait_for_revision`, the wait under every backend's `wait_for_change`: a waiter cancelled in
the very loop step its event fires is cancelled, not left waiting again (Python 3.11's
`asyncio.wait_for` returned the event's result then, and a turn lease's watch task, cancelled
as its turn ended, never ended: the turn's stream hung after `turn_finished`)."""

from __future__ import annotations

import asyncio

from clawcell.store._waiting import Poll, wait_for_revision
from tests.conftest import run


def test_a_waiter_cancelled_as_its_event_fires_ends_cancelled() -> None:
    async def scenario() -> tuple[bool, int]:
        event, reads = asyncio.Event(), 0

        async def revision() -> int:
            nonlocal reads
            reads += 1
            return 7  # never changes: only the event or the cancellation ends the wait

        waiter = asyncio.create_task(
            wait_for_revision(
                event=event,
                revision=revision,
                since=7,
                timeout=3600,
                poll=Poll(first=3600, cap=3600),
            )
        )
        while reads == 0:  # the first read is done: the waiter sleeps on the event now
            await asyncio.sleep(0)
        for _ in range(3):
            await asyncio.sleep(0)
        event.set()
        waiter.cancel()  # in the same step: both land before the waiter runs again
        for _ in range(20):
            await asyncio.sleep(0)
        cancelled = waiter.done() and waiter.cancelled()
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
        return cancelled, reads

    cancelled, reads = run(scenario())
    assert cancelled
    assert reads == 1  # it never went back to read the revision
