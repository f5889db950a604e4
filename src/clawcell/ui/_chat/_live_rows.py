"""The store rows behind `StoreTurns` (`_store_turns`), and the writer of a turn's messages.

* **The session's live row**, a parked-run row of the derived session `<session>\x1flive`
  (run id `live`), never claimed: its `meta` holds each turn (`seq`, `owner`, `state`, how
  many of its messages and chunks are stored, where the history stood when it began), the
  queue (`{id: {text, order}}`), the Stops asked for and the queued messages taken. Every
  change is a JSON Merge Patch of disjoint keys (one row-locked statement each), so no
  read-modify-write loses another worker's change, and each bumps the row's revision:
  PostgreSQL's `runs` trigger sends `NOTIFY`, heard on the store's one `LISTEN` connection;
  SQLite is polled. Followers wait with `wait_for_change`, as for parked runs.
* **Elections**, `put_new` entries of that derived session: `seq:<n>` makes one worker the
  starter of the session's *n*-th turn (a message racing it is queued instead), `taken:<id>`
  makes one of "run it next" and "drop it" win a queued message, `over:<turn>` makes one
  worker end a dead worker's turn.
* **A turn's messages**, written by its worker in chunks (`c:<turn>:<n>`, entries of the
  derived session): the first at once, then at most one write every `FLUSH_SECONDS` however
  fast the turn streams, each chunk about `CHUNK_BYTES`, at most `MAX_TURN_BYTES` a turn
  (past that its later messages reach only its own worker's pages; a reload shows the
  transcript). Turns are forgotten (chunks deleted) `RETAIN_S` after they ended.
* **Heartbeats**: each worker renews an entry of `clawcell\x1fworkers` (key: its owner id)
  every third of its lease; `clawcell\x1flive` lists the sessions with a running turn and
  the worker running it, for the sweep.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any, Final, cast

from ...errors import StaleRunError, StoreUnavailableError
from ...store import FirstWriter, SessionStore, StoredValue, cancel_requested
from ._turns import RETAIN_S, RETAIN_TURNS, LiveTurn, QueuedMessage

__all__ = [
    "CHUNK_BYTES",
    "FLUSH_SECONDS",
    "INDEX",
    "MAX_TURN_BYTES",
    "LiveRows",
    "Record",
    "TurnWriter",
    "evictable",
    "queue_of",
    "row_of",
    "running_of",
    "stale_taken",
    "turns_of",
    "value_of",
]

FLUSH_SECONDS: Final = 0.1
"""Seconds between two writes of one turn's messages, at least (the first goes at once)."""
CHUNK_BYTES: Final = 32_768
"""Characters of SSE messages in one stored chunk, about (a message is never split)."""
MAX_TURN_BYTES: Final = 16 * 1024 * 1024
"""Characters of one turn's messages stored at most; later ones stay on their worker."""
RUN: Final = "live"
# Store-wide rows start with the separator: a session's derived rows are `<session>\x1f<what>`
# and session ids hold no control character, so no session's row can be one of these.
INDEX: Final = "\x1fclawcell\x1flive"
"""The sessions with a running turn (key: session id, value: its turn and worker)."""
_WORKERS: Final = "\x1fclawcell\x1fworkers"
# Where workers before this release wrote their heartbeats: written and read as well until the
# next release, so that in a rolling upgrade neither version takes the other's workers for dead.
_OLD_WORKERS: Final = "clawcell\x1fworkers"
_RETRY: Final = 0.05
_log = logging.getLogger("clawcell.ui")

Record = dict[str, Any]


def row_of(session_id: str) -> str:
    return session_id + "\x1flive"


def turns_of(meta: Record) -> dict[str, Record]:
    turns = meta.get("turns")
    return {k: v for k, v in cast(Record, turns).items() if isinstance(v, dict)} if isinstance(
        turns, dict
    ) else {}  # fmt: skip


def running_of(meta: Record) -> tuple[str, Record] | None:
    """The session's running turn (the latest, should two claim to run)."""
    running = [(k, v) for k, v in turns_of(meta).items() if v.get("state") == "running"]
    return max(running, key=lambda item: int(item[1].get("seq", 0))) if running else None


def queue_of(meta: Record) -> tuple[QueuedMessage, ...]:
    queue = meta.get("queue")
    ordered: list[tuple[int, str, str]] = []
    for key, value in cast(Record, queue).items() if isinstance(queue, dict) else ():
        entry = cast(Record, value) if isinstance(value, dict) else {}
        if isinstance(order := entry.get("order"), int):  # an edit racing its take: ignored
            ordered.append((order, key, str(entry.get("text", ""))))
    return tuple(QueuedMessage(id=k, text=text) for _, k, text in sorted(ordered))


def value_of(data: object) -> StoredValue:
    return StoredValue(json=json.dumps(data, ensure_ascii=False))


class LiveRows:
    """One worker's access to the rows: loads, merge patches, heartbeats."""

    def __init__(self, store: SessionStore, first: FirstWriter, owner: str, lease: float) -> None:
        self.store, self.first, self.owner, self.lease = store, first, owner, lease
        self._versions: dict[str, int] = {}  # the live rows' versions (never claimed: fixed)
        self._beat_until = 0.0
        self.closing = asyncio.Event()

    async def load(self, session_id: str) -> tuple[Record, int | None]:
        """The live row's `meta` and revision (`{}`, `None` when it does not exist yet)."""
        run = await self.store.load_run(row_of(session_id), RUN)
        if run is None:
            return {}, None
        self._versions[session_id] = run.version
        return dict(run.meta), run.revision

    async def patch(self, session_id: str, patch: Record) -> None:
        row = row_of(session_id)
        for _ in range(10):
            version = self._versions.get(session_id)
            if version is None:
                run = await self.store.load_run(row, RUN)
                if run is None:
                    await self.create(row)
                    continue
                version = self._versions[session_id] = run.version
            try:
                await self.store.update_run_meta(row, RUN, version=version, patch=patch)
                return
            except StaleRunError:
                self._versions.pop(session_id, None)
        raise StoreUnavailableError(f"the live row of session {session_id!r} kept changing.")

    async def create(self, row: str) -> None:
        """Create a session's live row once, whichever worker gets there first."""
        if await self.first.put_new(row, "creator", value_of(time.time())):
            await self.store.save_run(row, RUN, b"", {})
            return
        created = await self.store.get(row, "creator")
        if created is not None and float(created.json) + self.lease < time.time():
            await self.store.delete(row, "creator")  # its creator died before writing it
            return
        await asyncio.sleep(_RETRY)

    async def beat(self) -> None:
        """Renew this worker's heartbeat unless it was renewed in the last sixth of the lease
        (the sweep calls this every third: each call renews, two thirds of a lease spare)."""
        now = time.time()
        if now < self._beat_until - self.lease * 5 / 6:
            return
        until = now + self.lease
        for row in (_WORKERS, _OLD_WORKERS):
            await self.store.put(row, self.owner, value_of({"until": until}))
        self._beat_until = until

    async def alive(self, owner: object) -> bool:
        if owner == self.owner:
            return not self.closing.is_set()
        for row in (_WORKERS, _OLD_WORKERS):
            beat = await self.store.get(row, str(owner))
            with contextlib.suppress(ValueError, TypeError, AttributeError, KeyError):
                if beat is not None and float(json.loads(beat.json)["until"]) > time.time():
                    return True
        return False

    async def wait(self, session_id: str, *, timeout: float, since: int | None) -> bool:
        """Wait for a change of the session's live row (`False`: none within `timeout`)."""
        return await self.store.wait_for_change(
            row_of(session_id), RUN, timeout=timeout, since=since
        )

    async def messages(self, session_id: str, turn_id: str, chunks: int) -> list[str]:
        """The stored messages of a turn (its first `chunks` chunks)."""
        row, messages = row_of(session_id), list[str]()
        for chunk in range(chunks):
            stored = await self.store.get(row, f"c:{turn_id}:{chunk}")
            if stored is not None:
                messages += json.loads(stored.json)["messages"]
        return messages

    async def withdraw(self) -> None:
        """Delete this worker's heartbeat (it stops)."""
        for row in (_WORKERS, _OLD_WORKERS):
            await self.store.delete(row, self.owner)

    async def unlist(self, session_id: str, turn_id: str) -> None:
        """Take the session out of the index of running turns, if `turn_id` is what it names."""
        listed = await self.store.get(INDEX, session_id)
        if listed is not None and json.loads(listed.json).get("turnId") == turn_id:
            await self.store.delete(INDEX, session_id)


class TurnWriter:
    """Stores one of this worker's turns' messages as they come: the first at once, then at
    most one write every `flush` seconds, in chunks of about `CHUNK_BYTES`, up to
    `MAX_TURN_BYTES` (the rest stays on this worker)."""

    def __init__(self, rows: LiveRows, turn: LiveTurn, flush: float) -> None:
        self._rows, self._turn, self._flush = rows, turn, flush
        self.sent = 0  # messages handed to the store (or dropped past the cap)
        self.count = 0  # messages stored
        self.chunks = 0
        self.chars = 0
        self.truncated = False
        self.indexed = False
        self.wake = asyncio.Event()
        self.done = asyncio.Event()

    async def run(self) -> None:
        """Write until `done` is set and everything is written."""
        turn = self._turn
        while True:
            await self.wake.wait()
            self.wake.clear()
            try:
                await self._write()
            except StoreUnavailableError:
                _log.warning("storing the messages of turn %r failed", turn.turn_id, exc_info=True)
            if cancel_requested() or (self.done.is_set() and self.sent >= len(turn.messages)):
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._flush):
                    await self.done.wait()
            if self.sent < len(turn.messages):
                self.wake.set()

    async def _write(self) -> None:
        turn, rows = self._turn, self._rows
        new = turn.messages[self.sent :]
        if not new and (self.indexed or turn.history_index is None):
            return
        writes: dict[str, StoredValue | None] = {}
        chunks, count, chars = self.chunks, self.count, self.chars
        piece: list[str] = []
        for message in [*new, None]:
            size = sum(map(len, piece))
            if piece and (message is None or size + len(message) > CHUNK_BYTES):
                if chars + size > MAX_TURN_BYTES:
                    self.truncated = True
                    break
                writes[f"c:{turn.turn_id}:{chunks}"] = value_of({"from": count, "messages": piece})
                chunks, count, chars, piece = chunks + 1, count + len(piece), chars + size, []
            if message is not None and not self.truncated:
                piece.append(message)
        if writes:
            await rows.store.apply(row_of(turn.session_id), writes)
        record = {"count": count, "chunks": chunks, "historyIndex": turn.history_index}
        await rows.patch(turn.session_id, {"turns": {turn.turn_id: record}})
        self.sent, self.chunks, self.count, self.chars = (
            self.sent + len(new), chunks, count, chars)  # fmt: skip
        self.indexed = turn.history_index is not None


def evictable(meta: Record) -> list[str]:
    """Ended turns past `RETAIN_S`, and beyond the latest `RETAIN_TURNS`."""
    now, turns = time.time(), turns_of(meta)
    ended = sorted(
        (int(r.get("seq", 0)), k) for k, r in turns.items() if r.get("state") != "running"
    )
    old = {k for _, k in ended if now - float(turns[k].get("endedAt") or now) > RETAIN_S}
    old |= {k for _, k in ended[: max(len(ended) - RETAIN_TURNS + 1, 0)]}
    return sorted(old)


def stale_taken(meta: Record) -> list[str]:
    """Queued messages taken longer than `RETAIN_S` ago (their elections can go)."""
    taken = meta.get("taken")
    items = cast(Record, taken).items() if isinstance(taken, dict) else ()
    return [k for k, at in items if isinstance(at, float | int) and time.time() - at > RETAIN_S]
