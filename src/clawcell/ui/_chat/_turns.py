"""Turns that belong to the server: a turn runs whether or not a page watches it.

A turn is started by a request but not owned by it: its SSE messages are produced by a task
of the registry and kept as the turn's backlog, and any number of pages follow them (the
backlog so far, then live), from any tab, leaving and coming back at will. Closing a page,
reloading it or following a link only ends that page's stream; Stop names the turn it stops.

Messages sent while a turn runs wait in the session's queue, visible to every page, where the
user may edit or drop them; when the turn ends (finished, stopped or failed) the registry
starts the next queued message as the following turn.

`TurnRegistry` is the seam the routes use. `LocalTurns` keeps the truth in this process's
memory (one process serves a session's turns); `StoreTurns` (`_store_turns`) keeps it in a
store every worker shares, so any worker answers "which turn runs, what is queued" alike and
relays a turn's messages to pages on other workers. Finished turns are
kept `RETAIN_S` seconds (at most `RETAIN_TURNS` per session) so a page that reconnects after a
turn ended still gets its end; a page asking for a turn no longer kept is told to reload
(`gone`), as the transcript then holds the turn whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

from ..._lazy import value_class

__all__ = [
    "KEEPALIVE_S",
    "MAX_QUEUED",
    "LiveTurn",
    "LocalTurns",
    "NextTurn",
    "QueuedMessage",
    "TurnRegistry",
    "TurnState",
    "queue_message_id",
]

TurnState = Literal["running", "finished", "stopped", "interrupted"]
"""`interrupted`: the worker running the turn died; another worker ended it (`StoreTurns`)."""
RETAIN_S: Final = 300.0
RETAIN_TURNS: Final = 16
MAX_QUEUED: Final = 20
"""Messages one session's queue holds; a 21st is refused (`409`)."""
KEEPALIVE_S: Final = 15.0
"""A quiet live stream sends an SSE comment this often (proxies close silent streams)."""

_SEQ = itertools.count(1)


@value_class
class QueuedMessage:
    """A message sent while a turn ran, waiting to become the next turn."""

    id: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "text": self.text}


def queue_message_id() -> str:
    """A fresh id for a queued message (unique across workers: random)."""
    return f"q{next(_SEQ)}-{secrets.token_hex(4)}"


class _Signal:
    """Wakes everyone waiting, each time it fires (a fresh event per generation).

    A waiter names the generation it last looked at: a fire that came while it was busy
    elsewhere (a follower suspended on a `yield` while the turn ended) wakes it at once
    instead of being lost until the next keepalive.
    """

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.generation = 0

    def fire(self) -> None:
        self.generation += 1
        self._event.set()
        self._event = asyncio.Event()

    async def wait(self, timeout: float, *, since: int) -> bool:
        """Whether it fired after generation `since`, waiting at most `timeout` seconds."""
        if self.generation != since:
            return True
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._event.wait()
                return True
        return False


@dataclass(kw_only=True, eq=False)
class LiveTurn:
    """One turn of a session: its SSE messages so far, its state and its Stop."""

    turn_id: str
    session_id: str
    seq: int
    """The turn's place among every turn of this registry (later turns have larger ones)."""
    history_index: int | None = None
    """How many stored messages the session had when the turn began (`None` until known):
    a page drawn while the turn runs shows history up to there and the turn from its backlog."""
    indexed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once `history_index` is known (before the agent starts writing): a page drawn
    meanwhile waits for it, or it would draw the turn's first messages twice."""
    messages: list[str] = field(default_factory=list[str])
    state: TurnState = "running"
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    ended_at: float | None = None


Producer = Callable[[LiveTurn], AsyncIterator[str]]
NextTurn = Callable[[str, str], Awaitable[object] | object]
"""Starts the turn of a queued message (session id, text); may be a coroutine function."""
"""Makes a turn's SSE messages (given the turn, whose `stop` it must honour)."""


class TurnRegistry(Protocol):
    """What the routes need of the turns; `LocalTurns` is the one-process registry."""

    async def current(self, session_id: str) -> LiveTurn | None:
        """The session's running turn, if any."""
        ...

    async def start(self, session_id: str, producer: Producer) -> LiveTurn | None:
        """Start a turn (the caller checked that none runs) and return it; `None` when
        another worker started one meanwhile (queue the message instead)."""
        ...

    async def stop(self, session_id: str, turn_id: str) -> TurnState | None:
        """Stop `turn_id` if it still runs; its state before (`None`: not known)."""
        ...

    async def queue(self, session_id: str) -> tuple[QueuedMessage, ...]:
        """The session's queued messages, oldest first."""
        ...

    async def enqueue(self, session_id: str, text: str) -> QueuedMessage | None:
        """Queue `text` behind the running turn (`None`: the queue is full)."""
        ...

    async def edit(self, session_id: str, message_id: str, text: str) -> QueuedMessage | None:
        """Change a queued message's text (`None`: it is no longer queued)."""
        ...

    async def drop(self, session_id: str, message_id: str) -> bool:
        """Take a message out of the queue (`False`: it was no longer queued)."""
        ...

    def follow(
        self, session_id: str, turn_id: str | None, start: int, *, until_idle: bool = False
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """The session's turns as they happen: see `LocalTurns.follow`."""
        ...

    async def close(self) -> None:
        """Stop every running turn and wait for them to end."""
        ...


@dataclass(kw_only=True)
class _Session:
    turns: list[LiveTurn] = field(default_factory=list[LiveTurn])
    queue: list[QueuedMessage] = field(default_factory=list[QueuedMessage])
    changed: _Signal = field(default_factory=_Signal)
    queue_version: int = 0


class LocalTurns:
    """Turns held in this process: tasks of the running event loop, backlogs in memory.

    Args:
        next_turn: Starts (with `start`, before returning) the turn for a queued message
            once the session is free; called with the session id and the message's text.
        clock: Seconds for retention (a test passes a controlled one).
    """

    def __init__(
        self,
        next_turn: NextTurn,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._next_turn, self._clock = next_turn, clock
        self._sessions: dict[str, _Session] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    def _session(self, session_id: str) -> _Session:
        return self._sessions.setdefault(session_id, _Session())

    async def current(self, session_id: str) -> LiveTurn | None:
        session = self._sessions.get(session_id)
        if session and session.turns and session.turns[-1].state == "running":
            return session.turns[-1]
        return None

    async def start(self, session_id: str, producer: Producer) -> LiveTurn:
        session = self._session(session_id)
        self._evict(session)
        seq = next(_SEQ)
        turn = LiveTurn(turn_id=f"t{seq}-{secrets.token_hex(4)}", session_id=session_id, seq=seq)
        session.turns.append(turn)
        task = asyncio.get_running_loop().create_task(self._drive(session, turn, producer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        session.changed.fire()
        return turn

    async def _drive(self, session: _Session, turn: LiveTurn, producer: Producer) -> None:
        try:
            async for message in producer(turn):
                turn.messages.append(message)
                session.changed.fire()
        finally:
            turn.state = "stopped" if turn.stop.is_set() else "finished"
            turn.ended_at = self._clock()
            with contextlib.suppress(RuntimeError):  # forget it once its time is past
                asyncio.get_running_loop().call_later(RETAIN_S + 1, self._expire, turn.session_id)
            if session.queue:  # the next queued message is the next turn, with no gap between
                message = session.queue.pop(0)
                session.queue_version += 1
                started = self._next_turn(turn.session_id, message.text)
                if inspect.isawaitable(started):
                    await started
            session.changed.fire()

    async def stop(self, session_id: str, turn_id: str) -> TurnState | None:
        turn = self._find(session_id, turn_id)
        if turn is None:
            return None
        state = turn.state
        if state == "running":
            turn.stop.set()
        return state

    def _find(self, session_id: str, turn_id: str) -> LiveTurn | None:
        session = self._sessions.get(session_id)
        turns = session.turns if session else []
        return next((t for t in turns if t.turn_id == turn_id), None)

    def _expire(self, session_id: str) -> None:
        session = self._sessions.get(session_id)
        if session is None:
            return
        self._evict(session)
        if not session.turns and not session.queue:  # nothing a page could still ask for
            del self._sessions[session_id]

    def _evict(self, session: _Session) -> None:
        now = self._clock()
        kept = [t for t in session.turns if t.ended_at is None or now - t.ended_at < RETAIN_S]
        session.turns = kept[-RETAIN_TURNS:] if len(kept) > RETAIN_TURNS else kept

    async def queue(self, session_id: str) -> tuple[QueuedMessage, ...]:
        session = self._sessions.get(session_id)
        return tuple(session.queue) if session else ()

    async def enqueue(self, session_id: str, text: str) -> QueuedMessage | None:
        session = self._session(session_id)
        if len(session.queue) >= MAX_QUEUED:
            return None
        message = QueuedMessage(id=queue_message_id(), text=text)
        session.queue.append(message)
        self._queue_changed(session)
        return message

    async def edit(self, session_id: str, message_id: str, text: str) -> QueuedMessage | None:
        session = self._session(session_id)
        for index, message in enumerate(session.queue):
            if message.id == message_id:
                session.queue[index] = edited = QueuedMessage(id=message_id, text=text)
                self._queue_changed(session)
                return edited
        return None

    async def drop(self, session_id: str, message_id: str) -> bool:
        session = self._session(session_id)
        kept = [message for message in session.queue if message.id != message_id]
        dropped, session.queue = len(kept) != len(session.queue), kept
        if dropped:
            self._queue_changed(session)
        return dropped

    def _queue_changed(self, session: _Session) -> None:
        session.queue_version += 1
        session.changed.fire()

    async def follow(
        self, session_id: str, turn_id: str | None, start: int, *, until_idle: bool = False
    ) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """The session's turns as they happen, as `(kind, data)` pairs: `("message", {"sse":
        …})` for each of a turn's SSE messages, `("turn", {turnId, state})` as the page begins
        following a turn, `("turn_end", {turnId, state})` when it ended, `("queue", {queue})`
        whenever the queue changed, `("keepalive", {})` after a quiet spell, `("gone", {})`
        when `turn_id` is no longer kept (the page reloads: the transcript has it).

        Starts with `turn_id` at message `start` (else the running turn, from its start),
        then every later turn of the session. With `until_idle`, ends when no turn runs."""
        session = self._session(session_id)
        self._evict(session)
        turn = self._first(session, turn_id)
        if turn is None:
            yield "gone", {"turnId": turn_id}
            return
        done = turn.seq - 1 if isinstance(turn, LiveTurn) else turn
        offset, sent_queue, followed = start, -1, None
        while not self._closed:
            seen = session.changed.generation  # what this pass looks at
            if sent_queue != session.queue_version:
                sent_queue = session.queue_version
                yield "queue", {"queue": [m.to_json() for m in session.queue]}
            current = next((t for t in session.turns if t.seq > done), None)
            if current is not None and current is not followed:
                followed = current
                yield "turn", {"turnId": current.turn_id, "state": current.state}
            if current is not None:
                for message in current.messages[offset:]:
                    offset += 1
                    yield "message", {"sse": message}
                if current.state != "running" and offset >= len(current.messages):
                    yield "turn_end", {"turnId": current.turn_id, "state": current.state}
                    done, offset = current.seq, 0
                    continue
            elif until_idle:
                return
            if not await session.changed.wait(KEEPALIVE_S, since=seen):
                yield "keepalive", {}

    def _first(self, session: _Session, turn_id: str | None) -> LiveTurn | int | None:
        """Where a page starts following: the turn it names (`None`: no longer kept), else
        the running one, else the sequence number after which the next turn will start."""
        if turn_id is not None:
            return next((t for t in session.turns if t.turn_id == turn_id), None)
        running = next((t for t in session.turns if t.state == "running"), None)
        return running or (session.turns[-1].seq if session.turns else 0)

    async def close(self) -> None:
        """Stop every running turn, end every follower's stream, and wait for the turns."""
        self._closed = True
        for session in self._sessions.values():
            for turn in session.turns:
                turn.stop.set()
            session.queue.clear()
            session.changed.fire()
        tasks = list(self._tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
