"""Text deltas coalesced: a model streaming word by word becomes a few messages a second.

A fast model sends one `text_delta` per word; one SSE message (and one browser update) per
word costs more than the text itself. `coalesce_deltas` reads the agent's events in a pump
task and merges consecutive deltas: the first delta after a quiet spell goes out at once (so
the first words show without delay), later ones at most every `interval` seconds or when
`max_chars` have piled up; any other event flushes the text before it, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, Final, TypeGuard, cast

__all__ = ["FLUSH_INTERVAL", "MAX_FLUSH_CHARS", "STOPPED", "coalesce_deltas"]

FLUSH_INTERVAL: Final = 0.05
"""Seconds between two text messages of one turn, at most 20 a second."""
MAX_FLUSH_CHARS: Final = 32_768
"""Text that is sent without waiting for the interval."""

_END: Final = object()
_log = logging.getLogger("clawcell.ui")


def _text_of(event: Mapping[str, Any]) -> str:
    return str(event.get("text", event.get("delta", "")))


class _Pending:
    """The deltas merged so far (the first one's fields, the texts joined)."""

    def __init__(self) -> None:
        self.first: Mapping[str, Any] | None = None
        self.parts: list[str] = []
        self.chars = 0

    def add(self, event: Mapping[str, Any]) -> None:
        self.first = self.first or event
        text = _text_of(event)
        self.parts.append(text)
        self.chars += len(text)

    def take(self) -> dict[str, Any] | None:
        if self.first is None:
            return None
        merged = {k: v for k, v in self.first.items() if k != "delta"}
        merged["text"] = "".join(self.parts)
        self.first, self.parts, self.chars = None, [], 0
        return merged


STOPPED: Final = {"type": "turn_stopped"}
"""What the stream ends with when `stop` was set: the turn was cancelled."""


async def _pump(
    events: AsyncIterator[dict[str, Any]], queue: asyncio.Queue[object], stop: asyncio.Event
) -> None:
    try:
        async for event in events:
            queue.put_nowait(event)
    except asyncio.CancelledError:
        if not stop.is_set():
            raise
        queue.put_nowait(dict(STOPPED))  # cancelled by `stop`: the consumer says so and ends
    except Exception as exc:  # handed to the consumer, which raises it in order
        queue.put_nowait(exc)
    finally:
        queue.put_nowait(_END)


async def _side_pump(side: AsyncIterator[dict[str, Any]], queue: asyncio.Queue[object]) -> None:
    try:
        async for event in side:
            queue.put_nowait(event)
    except Exception:  # a side view must never break the turn
        _log.warning("a side stream of a turn failed; the turn goes on without it", exc_info=True)


async def _stop_when(stop: asyncio.Event, pump: asyncio.Task[None]) -> None:
    await stop.wait()
    pump.cancel()  # raises CancelledError in the agent's stream: it cancels its cell


async def coalesce_deltas(
    events: AsyncIterator[dict[str, Any]],
    *,
    interval: float = FLUSH_INTERVAL,
    max_chars: int = MAX_FLUSH_CHARS,
    stop: asyncio.Event | None = None,
    side: AsyncIterator[dict[str, Any]] | None = None,
) -> AsyncGenerator[dict[str, Any]]:
    """`events` (event dicts) with consecutive `text_delta`s merged; see the module doc.

    Setting `stop` cancels `events` where it is (a running cell is cancelled with it); the
    result then ends with `{"type": "turn_stopped"}`. Closing the result cancels the pump
    and closes `events` too. `side` events (which never end the result; a failing `side`
    is logged and dropped) go out among the others as they come.
    """
    queue: asyncio.Queue[object] = asyncio.Queue()
    stop = stop or asyncio.Event()
    pump = asyncio.create_task(_pump(events, queue, stop))
    watcher = asyncio.create_task(_stop_when(stop, pump))
    sider = asyncio.create_task(_side_pump(side, queue)) if side is not None else None
    pending = _Pending()
    loop = asyncio.get_running_loop()
    last_flush = -math.inf
    held: object = None  # an item drained from the queue that ended a run of deltas
    try:
        while True:
            item, held = held, None
            if item is None:
                item = await _next(queue, pending, last_flush + interval - loop.time())
            if _is_delta(item):
                pending.add(item)
                while not queue.empty() and pending.chars < max_chars:  # what already arrived
                    held = queue.get_nowait()
                    if not _is_delta(held):
                        break
                    pending.add(held)
                    held = None
                early = loop.time() < last_flush + interval and pending.chars < max_chars
                if held is None and early:
                    continue
            if (merged := pending.take()) is not None:
                last_flush = loop.time()
                yield merged
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            if item is not None and not _is_delta(item):
                yield cast(dict[str, Any], item)
    finally:
        watcher.cancel()
        if sider is not None:
            sider.cancel()
        pump.cancel()
        with contextlib.suppress(BaseException):
            await pump
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()


async def _next(queue: asyncio.Queue[object], pending: _Pending, remaining: float) -> object:
    """The next item, or `None` once the pending text's interval is over."""
    try:
        async with asyncio.timeout(None if pending.first is None else max(0.0, remaining)):
            return await queue.get()
    except TimeoutError:
        return None


def _is_delta(item: object) -> TypeGuard[dict[str, Any]]:
    return isinstance(item, dict) and cast(dict[str, object], item).get("type") == "text_delta"
