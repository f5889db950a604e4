"""Following a session's turns from the store (`StoreTurns.follow`): the pairs a page's live
stream is made of, read from the session's live row and its turns' stored chunks, woken by
the row's changes (PostgreSQL: `NOTIFY` on the store's one `LISTEN` connection; SQLite:
polling), whichever worker runs the turn."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from ...store import cancel_requested
from . import _turns
from ._live_rows import LiveRows, Record, queue_of, row_of, running_of, turns_of

__all__ = ["follow_rows"]

EndDead = Callable[[str, str, Record], Awaitable[None]]
"""Ends a running turn whose worker died (session id, turn id, its record)."""


async def follow_rows(
    rows: LiveRows,
    session_id: str,
    turn_id: str | None,
    start: int,
    *,
    until_idle: bool,
    end_dead: EndDead,
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """The session's turns as `LocalTurns.follow` tells them: `turn_id` from message `start`
    (else the running turn, from its start), then every later turn. After a quiet spell a
    running turn's worker is checked: a dead one's turn is ended (`end_dead`)."""
    row = row_of(session_id)
    meta, revision = await rows.load(session_id)
    while revision is None:
        await rows.create(row)
        meta, revision = await rows.load(session_id)
    if turn_id is not None:
        if turn_id not in turns_of(meta):
            yield "gone", {"turnId": turn_id}
            return
        done = int(turns_of(meta)[turn_id]["seq"]) - 1
    else:
        running = running_of(meta)
        done = int(running[1]["seq"]) - 1 if running else int(meta.get("last", 0))
    offset, chunk, sent_queue, followed = start, 0, None, None
    while not rows.closing.is_set() and not cancel_requested():
        queue = [m.to_json() for m in queue_of(meta)]
        if queue != sent_queue:
            sent_queue = queue
            yield "queue", {"queue": queue}
        turns = turns_of(meta).items()
        later = [(int(r.get("seq", 0)), k, r) for k, r in turns if int(r.get("seq", 0)) > done]
        current = min(later, key=lambda item: item[0]) if later else None
        if current is not None:
            seq, current_id, record = current
            if current_id != followed:
                followed, chunk = current_id, 0
                yield "turn", {"turnId": current_id, "state": record.get("state")}
            while chunk < int(record.get("chunks", 0)):
                stored = await rows.store.get(row, f"c:{current_id}:{chunk}")
                if stored is None:  # forgotten: the transcript holds the turn now
                    yield "gone", {"turnId": current_id}
                    return
                data = json.loads(stored.json)
                for index, message in enumerate(data["messages"], int(data["from"])):
                    if index >= offset:
                        offset += 1
                        yield "message", {"sse": message}
                chunk += 1
            if record.get("state") != "running":
                yield "turn_end", {"turnId": current_id, "state": record.get("state")}
                done, offset = seq, 0
                continue
        elif until_idle:
            return
        if not await _changed(rows, session_id, revision):
            if current is not None and not await rows.alive(current[2].get("owner")):
                await end_dead(session_id, current[1], current[2])
            else:
                yield "keepalive", {}
        meta, revision = await rows.load(session_id)


async def _changed(rows: LiveRows, session_id: str, revision: int | None) -> bool:
    """Whether the live row changed within a keepalive (`False`: a quiet spell)."""
    waiter = asyncio.ensure_future(
        rows.wait(session_id, timeout=_turns.KEEPALIVE_S, since=revision)
    )
    closing = asyncio.ensure_future(rows.closing.wait())
    try:
        await asyncio.wait({waiter, closing}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (waiter, closing):
            task.cancel()
    return closing.done() or (waiter.done() and not waiter.cancelled() and waiter.result())
