"""`StoreTurns`: the turn registry whose truth is a store every worker shares.

With several workers on one store, any worker must answer "which turn runs in this session,
what is queued" alike, relay a turn's messages to the pages it serves, and end a turn whose
worker died. So everything a page sees lives in the store (the rows: `_live_rows`): each
session's live row (its turns, queue and Stops, changed only by JSON Merge Patches of
disjoint keys, woken by `NOTIFY` or polling), `put_new` elections (who starts the session's
*n*-th turn, who takes a queued message, who ends a dead worker's turn), each turn's messages
in chunks written at most every 0.1 s, and the workers' heartbeats.

A running turn whose worker's heartbeat lapsed is ended by the first worker that notices (a
request, a follower, or each worker's sweep, started with the app: `tend`): see
`docs/scale-out.md`. This worker's own turns are tasks here; nothing else is in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import secrets
import socket
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

from ...errors import ClosedError, ConfigurationError, StoreUnavailableError
from ...store import FirstWriter, SessionStore, StoredValue, cancel_requested
from ._live_follow import follow_rows
from ._live_rows import (
    FLUSH_SECONDS,
    INDEX,
    LiveRows,
    Record,
    TurnWriter,
    evictable,
    queue_of,
    row_of,
    running_of,
    stale_taken,
    turns_of,
    value_of,
)
from ._turns import (
    MAX_QUEUED,
    LiveTurn,
    NextTurn,
    Producer,
    QueuedMessage,
    TurnState,
    queue_message_id,
)

__all__ = ["StoreTurns"]

_log = logging.getLogger("clawcell.ui")

Interrupted = Callable[[list[str]], list[str]]
"""The SSE messages that tell a dead worker's turn's pages it ended (given its messages)."""
Recover = Callable[[str], Awaitable[object]]
"""Stores what ends a dead worker's turn in the session's transcript (`Agent.recover_turn`)."""


class StoreTurns:
    """Turns whose truth is `store`, shared by every worker (see the module docstring).

    Args:
        store: The store the workers share (it must have `put_new`).
        next_turn: Starts (with `start`) the turn of a queued message once the session is
            free; called with the session id and the message's text.
        interrupted: The SSE messages that end a dead worker's turn on its pages.
        recover: Stores the end of a dead worker's turn in the transcript.
        owner: This worker's id, unique per process (`host:pid:uuid4` by default).
        lease_seconds: How long a worker's heartbeat lasts; its turns are taken over this
            long (and at most a third more) after it died.
        flush_seconds: Seconds between two writes of a turn's messages, at least.
    """

    def __init__(
        self,
        store: SessionStore,
        next_turn: NextTurn,
        *,
        interrupted: Interrupted = lambda stored: [],
        recover: Recover | None = None,
        owner: str | None = None,
        lease_seconds: float = 30.0,
        flush_seconds: float = FLUSH_SECONDS,
    ) -> None:
        if not isinstance(store, FirstWriter):
            raise ConfigurationError(
                f"`StoreTurns` needs a store with `put_new` (`FirstWriter`), got {store!r}: "
                "use `SQLiteStore` or `PostgresStore`, or `LocalTurns` for one process."
            )
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4()}"
        self._rows = LiveRows(store, store, self.owner, lease_seconds)
        self._store, self._first, self._closing = store, store, self._rows.closing
        self._next_turn, self._interrupted, self._recover = next_turn, interrupted, recover
        self._lease, self._flush = lease_seconds, flush_seconds
        self._owned: dict[str, LiveTurn] = {}
        self._ending: set[str] = set()  # dead workers' turns this worker is ending
        self._tasks: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- turns -------------------------------------------------------------------------

    async def current(self, session_id: str) -> LiveTurn | None:
        meta, revision = await self._rows.load(session_id)
        running = running_of(meta)
        if running is None:
            return None
        turn_id, record = running
        if turn_id in self._owned:
            return self._owned[turn_id]
        if not await self._rows.alive(record.get("owner")):
            await self._end_dead(session_id, turn_id, record)
            return None
        deadline = time.monotonic() + self._lease  # its worker is about to record it
        while record.get("historyIndex") is None and time.monotonic() < deadline:
            await self._rows.wait(session_id, timeout=1.0, since=revision)
            meta, revision = await self._rows.load(session_id)
            record = turns_of(meta).get(turn_id, record)
        turn = LiveTurn(turn_id=turn_id, session_id=session_id, seq=int(record["seq"]))
        turn.history_index = record.get("historyIndex")
        turn.indexed.set()
        return turn

    async def start(self, session_id: str, producer: Producer) -> LiveTurn | None:
        await self._rows.beat()
        self.tend()
        row = row_of(session_id)
        for _ in range(5):
            meta, _revision = await self._rows.load(session_id)
            if running_of(meta) is not None:
                return None  # another worker's turn began since the caller looked
            seq = int(meta.get("last", 0)) + 1
            turn_id = f"t{seq}-{secrets.token_hex(4)}"
            elected = {"turnId": turn_id, "owner": self.owner, "at": time.time()}
            if await self._first.put_new(row, f"seq:{seq}", value_of(elected)):
                break
            if not await self._stale_election(session_id, seq):
                return None  # another worker started the session's turn meanwhile
        else:
            return None
        record = {"seq": seq, "owner": self.owner, "state": "running", "count": 0, "chunks": 0}
        evicted = evictable(meta)
        await self._rows.patch(session_id, {"last": seq, "turns": {turn_id: record} | {
            t: None for t in evicted}, "taken": {m: None for m in stale_taken(meta)}})  # fmt: skip
        await self._store.put(INDEX, session_id, value_of({"turnId": turn_id, "owner": self.owner}))
        self._spawn(self._forget(session_id, meta, evicted))
        turn = LiveTurn(turn_id=turn_id, session_id=session_id, seq=seq)
        self._owned[turn_id] = turn
        self._spawn(self._drive(session_id, turn, producer))
        return turn

    async def _stale_election(self, session_id: str, seq: int) -> bool:
        """Whether the `seq`-th turn's starter died before recording it (then skip it)."""
        elected = await self._store.get(row_of(session_id), f"seq:{seq}")
        meta, _ = await self._rows.load(session_id)
        if elected is None or int(meta.get("last", 0)) >= seq:
            return int(meta.get("last", 0)) >= seq
        if float(json.loads(elected.json).get("at", 0)) + self._lease > time.time():
            return False
        await self._rows.patch(session_id, {"last": seq})
        return True

    async def _forget(self, session_id: str, meta: Record, evicted: list[str]) -> None:
        """Delete the stored messages of turns past their time (and their elections)."""
        turns, writes = turns_of(meta), dict[str, StoredValue | None]()
        for turn_id in evicted:
            record = turns[turn_id]
            writes |= {f"c:{turn_id}:{n}": None for n in range(int(record.get("chunks", 0)))}
            writes |= {f"seq:{record.get('seq')}": None, f"over:{turn_id}": None}
        writes |= {f"taken:{m}": None for m in stale_taken(meta)}
        if writes:
            with contextlib.suppress(StoreUnavailableError):
                await self._store.apply(row_of(session_id), writes)

    async def _drive(self, session_id: str, turn: LiveTurn, producer: Producer) -> None:
        writer = TurnWriter(self._rows, turn, self._flush)
        writing = asyncio.create_task(writer.run())
        control = asyncio.create_task(self._control(session_id, turn))
        try:
            async for message in producer(turn):
                turn.messages.append(message)
                writer.wake.set()
        finally:
            turn.state = "stopped" if turn.stop.is_set() else "finished"
            turn.ended_at = time.monotonic()
            control.cancel()
            writer.done.set()
            writer.wake.set()
            with contextlib.suppress(Exception):
                await writing
            try:
                await self._end(session_id, turn, writer.count)
            except StoreUnavailableError:  # its pages learn the end from the sweep, later
                _log.warning("recording the end of turn %r failed", turn.turn_id, exc_info=True)
            finally:
                self._owned.pop(turn.turn_id, None)
            await self._drain(session_id)

    async def _end(self, session_id: str, turn: LiveTurn, count: int) -> None:
        ended = {"state": turn.state, "endedAt": time.time(), "count": count}
        for attempt in range(3):  # the page must learn the end: retry a brief outage
            try:
                await self._rows.patch(session_id, {"turns": {turn.turn_id: ended},
                                                    "stops": {turn.turn_id: None}})  # fmt: skip
                break
            except StoreUnavailableError:
                if attempt == 2:
                    raise
                await asyncio.sleep(self._lease / 10)
        await self._rows.unlist(session_id, turn.turn_id)

    async def _control(self, session_id: str, turn: LiveTurn) -> None:
        """Set the turn's `stop` when a Stop for it is recorded (by any worker)."""
        revision: int | None = None
        while not turn.stop.is_set() and not cancel_requested():
            try:
                meta, revision = await self._rows.load(session_id)
                stops = meta.get("stops")
                if isinstance(stops, dict) and cast(Record, stops).get(turn.turn_id):
                    turn.stop.set()
                if turn.stop.is_set() or cancel_requested():  # the read may have swallowed it
                    return
                await self._rows.wait(session_id, timeout=self._lease / 3, since=revision)
            except StoreUnavailableError:
                _log.warning("watching turn %r for a Stop failed", turn.turn_id, exc_info=True)
                await asyncio.sleep(0 if cancel_requested() else self._lease / 10)

    async def stop(self, session_id: str, turn_id: str) -> TurnState | None:
        if (owned := self._owned.get(turn_id)) is not None:
            if owned.state == "running":
                owned.stop.set()
            return owned.state
        meta, _ = await self._rows.load(session_id)
        record = turns_of(meta).get(turn_id)
        if record is None:
            return None
        if record.get("state") != "running":
            return cast(TurnState, record.get("state"))
        await self._rows.patch(session_id, {"stops": {turn_id: True}})
        return "running"

    # -- the queue ---------------------------------------------------------------------

    async def queue(self, session_id: str) -> tuple[QueuedMessage, ...]:
        meta, _ = await self._rows.load(session_id)
        return queue_of(meta)

    async def enqueue(self, session_id: str, text: str) -> QueuedMessage | None:
        meta, _ = await self._rows.load(session_id)
        if len(queue_of(meta)) >= MAX_QUEUED:
            return None
        message = QueuedMessage(id=queue_message_id(), text=text)
        entry = {"text": text, "order": time.time_ns()}  # wall clocks order workers' messages
        await self._rows.patch(session_id, {"queue": {message.id: entry}})
        await self._drain(session_id)  # the turn may have ended since the caller looked
        return message

    async def edit(self, session_id: str, message_id: str, text: str) -> QueuedMessage | None:
        meta, _ = await self._rows.load(session_id)
        if all(m.id != message_id for m in queue_of(meta)):
            return None
        await self._rows.patch(session_id, {"queue": {message_id: {"text": text}}})
        if await self._store.get(row_of(session_id), f"taken:{message_id}") is not None:
            return None  # it left the queue meanwhile (a turn or dropped)
        return QueuedMessage(id=message_id, text=text)

    async def drop(self, session_id: str, message_id: str) -> bool:
        return await self._take(session_id, message_id)

    async def _take(self, session_id: str, message_id: str) -> bool:
        """Take a message out of the queue, if this call is the one that gets it."""
        meta, _ = await self._rows.load(session_id)
        if all(m.id != message_id for m in queue_of(meta)):
            return False
        taken = value_of({"at": time.time()})
        if not await self._first.put_new(row_of(session_id), f"taken:{message_id}", taken):
            return False
        await self._rows.patch(session_id, {"queue": {message_id: None},
                                       "taken": {message_id: time.time()}})  # fmt: skip
        return True

    async def _drain(self, session_id: str) -> None:
        """Start the queue's next message when no turn runs (whichever worker gets it)."""
        if self._closing.is_set():
            return
        meta, _ = await self._rows.load(session_id)
        if running_of(meta) is not None:
            return
        for message in queue_of(meta):
            if await self._take(session_id, message.id):
                started = self._next_turn(session_id, message.text)
                if inspect.isawaitable(started):
                    await started
                return

    def follow(
        self, session_id: str, turn_id: str | None, start: int, *, until_idle: bool = False
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """As `LocalTurns.follow`, from the store: a turn running on any worker is followed
        live (its worker's chunks, woken by the live row's changes); a turn whose worker
        died is ended here when the follower notices."""
        return follow_rows(self._rows, session_id, turn_id, start, until_idle=until_idle,
                           end_dead=self._end_dead)  # fmt: skip

    # -- a dead worker's turns ---------------------------------------------------------

    async def _end_dead(self, session_id: str, turn_id: str, record: Record) -> None:
        """End a turn whose worker died: marked `interrupted`, its pages told, the agent's
        transcript mended and the queue's next message started (by one worker only)."""
        row = row_of(session_id)
        if turn_id in self._ending:
            return
        if not await self._first.put_new(row, f"over:{turn_id}", value_of(self.owner)):
            elected = await self._store.get(row, f"over:{turn_id}")
            if elected is not None and not await self._rows.alive(json.loads(elected.json)):
                await self._store.delete(row, f"over:{turn_id}")  # it died too: elect again
            return
        self._ending.add(turn_id)
        chunks, count = int(record.get("chunks", 0)), int(record.get("count", 0))
        messages = self._interrupted(await self._rows.messages(session_id, turn_id, chunks))
        if messages:
            await self._store.put(row, f"c:{turn_id}:{chunks}",
                                  value_of({"from": count, "messages": messages}))  # fmt: skip
        ended = {"state": "interrupted", "endedAt": time.time(), "takenOverBy": self.owner,
                 "chunks": chunks + bool(messages), "count": count + len(messages)}  # fmt: skip
        await self._rows.patch(session_id, {"turns": {turn_id: ended}, "stops": {turn_id: None}})
        _log.warning("turn %r of session %r: its worker %r died; ended here",
                     turn_id, session_id, record.get("owner"))  # fmt: skip
        self._spawn(self._after_dead(session_id, turn_id))

    async def _after_dead(self, session_id: str, turn_id: str) -> None:
        try:
            if self._recover is not None:
                await self._recover(session_id)
            await self._rows.unlist(session_id, turn_id)
            await self._drain(session_id)
        finally:
            self._ending.discard(turn_id)

    def tend(self) -> None:
        """Start sweeping (the app's lifespan does; a first turn does without one)."""
        if self._sweeper is None and not self._closing.is_set():
            self._sweeper = asyncio.get_running_loop().create_task(self._sweeping())

    async def _sweeping(self) -> None:
        """Every third of the lease: renew the heartbeat, end dead workers' turns."""
        while not self._closing.is_set() and not cancel_requested():
            try:
                await self._rows.beat()
                await self.sweep()
            except StoreUnavailableError:
                _log.warning("the turn sweep failed; retrying", exc_info=True)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0 if cancel_requested() else self._lease / 3):
                    await self._closing.wait()

    async def sweep(self) -> int:
        """End every running turn whose worker's heartbeat lapsed; how many were ended."""
        ended = 0
        for session_id, listed in (await self._store.items(INDEX)).items():
            owner = json.loads(listed.json).get("owner")
            if owner == self.owner or await self._rows.alive(owner):
                continue
            meta, _ = await self._rows.load(session_id)
            running = running_of(meta)
            if running is None or running[1].get("owner") != owner:
                await self._store.delete(INDEX, session_id)  # already ended
                continue
            await self._end_dead(session_id, *running)
            ended += 1
        return ended

    async def close(self) -> None:
        """Stop this worker's turns, end its followers' streams, wait for the turns, and
        withdraw its heartbeat."""
        self._closing.set()
        for turn in list(self._owned.values()):
            turn.stop.set()
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        tasks = list(self._tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(StoreUnavailableError, ClosedError):  # closed first: it lapses
            await self._rows.withdraw()
