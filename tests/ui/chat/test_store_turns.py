"""`StoreTurns`: two workers (two store objects on one SQLite file, one event loop here) see
one truth for a session's turns and queue, a page on either follows a turn running on the
other, a Stop reaches the turn's worker, writes are bounded, and a dead worker's turn is
ended by the other (its pages told, the transcript mended, the queue's next message run)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from clawcell.store import SQLiteStore, StoredValue
from clawcell.ui._chat._live_follow import follow_rows
from clawcell.ui._chat._live_rows import CHUNK_BYTES, INDEX, LiveRows, Record, TurnWriter, row_of
from clawcell.ui._chat._store_turns import StoreTurns
from clawcell.ui._chat._turns import LiveTurn
from tests._swallowing import CancelSwallowingStore, ends_when_its_loop_closes

Body = Callable[[StoreTurns, StoreTurns, list[tuple[str, str]]], Awaitable[None]]
DEAD = ['event: error\ndata: {"worker": "lost"}\n\n']


def _run(tmp_path: Path, body: Body, *, flush: float = 0.1) -> list[str]:
    """Run `body` with workers A and B; returns the sessions B recovered."""
    recovered: list[str] = []

    async def main() -> None:
        started: list[tuple[str, str]] = []

        async def recover(session_id: str) -> None:
            recovered.append(session_id)

        def next_turn(name: str) -> Callable[[str, str], None]:
            return lambda session, text: started.append((name, text))

        stores = [SQLiteStore(tmp_path / "state.db") for _ in range(2)]
        a = StoreTurns(stores[0], next_turn("a"), owner="a", flush_seconds=flush)
        b = StoreTurns(stores[1], next_turn("b"), owner="b", flush_seconds=flush,
                       interrupted=lambda stored: DEAD, recover=recover)  # fmt: skip
        try:
            await body(a, b, started)
        finally:
            for turns, store in ((a, stores[0]), (b, stores[1])):
                await turns.close()
                await store.close()

    asyncio.run(asyncio.wait_for(main(), timeout=120))
    return recovered


def _held(gate: asyncio.Event, entered: asyncio.Event) -> Callable[[LiveTurn], AsyncIterator[str]]:
    async def produce(turn: LiveTurn) -> AsyncIterator[str]:
        turn.history_index = 0
        turn.indexed.set()
        yield "event: one\ndata: {}\n\n"
        entered.set()
        either = {asyncio.ensure_future(turn.stop.wait()), asyncio.ensure_future(gate.wait())}
        await asyncio.wait(either, return_when="FIRST_COMPLETED")
        yield "event: two\ndata: {}\n\n"

    return produce


async def _held_turn(turns: StoreTurns, session: str = "s") -> tuple[LiveTurn, asyncio.Event]:
    """A turn started on `turns` that sent its first message and is held until the gate is
    set (or it is stopped): the turn and its gate."""
    gate, entered = asyncio.Event(), asyncio.Event()
    turn = await turns.start(session, _held(gate, entered))
    assert turn is not None
    await entered.wait()
    return turn, gate


async def _follow(turns: StoreTurns, until: str, turn_id: str | None = None) -> list[Any]:
    seen: list[Any] = []
    async for kind, data in turns.follow("s", turn_id, 0):
        seen.append((kind, data.get("sse", data.get("state", data.get("queue")))))
        if kind == until:
            return seen
    return seen


def test_both_workers_see_the_running_turn_and_one_queue_they_both_change(
    tmp_path: Path,
) -> None:
    async def body(a: StoreTurns, b: StoreTurns, started: list[tuple[str, str]]) -> None:
        turn, gate = await _held_turn(a)
        on_b = await b.current("s")
        assert on_b is not None and on_b.turn_id == turn.turn_id and on_b.history_index == 0
        assert await b.start("s", _held(gate, asyncio.Event())) is None  # the turn is A's
        first = await b.enqueue("s", "first")
        second = await a.enqueue("s", "second")
        assert first is not None and second is not None
        assert await a.edit("s", first.id, "first, edited") is not None
        assert await b.drop("s", second.id) and not await a.drop("s", second.id)
        assert [(m.id, m.text) for m in await a.queue("s")] == [(first.id, "first, edited")]
        assert await b.queue("s") == await a.queue("s")
        gate.set()
        ended, queue = False, None
        async for kind, data in b.follow("s", turn.turn_id, 0):
            ended = ended or (kind, data.get("state")) == ("turn_end", "finished")
            queue = data["queue"] if kind == "queue" else queue
            if ended and queue == []:
                break  # the turn ended and the queued message left the queue
        while not started:  # A hands the message on right after taking it
            await asyncio.sleep(0.01)
        assert started == [("a", "first, edited")]  # A ended its turn and took the next
        assert await b.queue("s") == ()

    _run(tmp_path, body)


def test_a_page_on_another_worker_follows_the_turn_live_and_its_stop_reaches_it(
    tmp_path: Path,
) -> None:
    async def body(a: StoreTurns, b: StoreTurns, started: list[tuple[str, str]]) -> None:
        turn, _ = await _held_turn(a)
        follower = asyncio.create_task(_follow(b, "turn_end"))
        assert await b.stop("s", turn.turn_id) == "running"  # recorded in the store
        seen = await follower
        one, two = "event: one\ndata: {}\n\n", "event: two\ndata: {}\n\n"
        assert seen == [("queue", []), ("turn", "running"), ("message", one),
                        ("message", two), ("turn_end", "stopped")]  # fmt: skip
        assert turn.state == "stopped" and await b.stop("s", turn.turn_id) == "stopped"

    _run(tmp_path, body)


def test_a_fast_turn_is_stored_in_a_few_bounded_chunks_not_a_write_per_message(
    tmp_path: Path,
) -> None:
    message = "event: text\ndata: " + "x" * 1000 + "\n\n"

    async def body(a: StoreTurns, b: StoreTurns, started: list[tuple[str, str]]) -> None:
        async def produce(turn: LiveTurn) -> AsyncIterator[str]:
            for _ in range(300):
                yield message

        turn = await a.start("s", produce)
        assert turn is not None
        seen = await _follow(b, "turn_end", turn.turn_id)
        assert [s for kind, s in seen if kind == "message"] == [message] * 300
        chunks = (await _meta(b))["turns"][turn.turn_id]["chunks"]
        # What came before the writer first ran is written at once (one message or all of
        # them, as the tasks happen to run); the rest waits for the next write (an hour here,
        # so only the turn's end writes it), in whole chunks of at most CHUNK_BYTES.
        per_chunk = CHUNK_BYTES // len(message)
        assert chunks in (-(-300 // per_chunk), 1 + -(-299 // per_chunk))

    _run(tmp_path, body, flush=3600.0)


async def _lapse(turns: StoreTurns, owner: str) -> None:
    # Both rows a heartbeat is written to (this release's and the one before's).
    lapsed = StoredValue(json=json.dumps({"until": 0}))
    for row in ("\x1fclawcell\x1fworkers", "clawcell\x1fworkers"):
        await turns._rows.store.put(row, owner, lapsed)  # pyright: ignore[reportPrivateUsage]


async def _meta(turns: StoreTurns) -> dict[str, Any]:
    meta, _ = await turns._rows.load("s")  # pyright: ignore[reportPrivateUsage]
    return meta


def test_a_dead_workers_turn_is_ended_by_the_sweep_of_another_and_its_pages_are_told(
    tmp_path: Path,
) -> None:
    async def body(a: StoreTurns, b: StoreTurns, started: list[tuple[str, str]]) -> None:
        turn, _ = await _held_turn(a)
        assert await b.enqueue("s", "after") is not None
        follower = asyncio.create_task(_follow(b, "turn_end", turn.turn_id))
        assert await b.sweep() == 0  # A is alive
        await _lapse(b, "a")  # A's heartbeat ran out: dead
        assert await b.sweep() == 1
        seen = await follower
        assert seen[-2:] == [("message", DEAD[0]), ("turn_end", "interrupted")]
        while not started:  # B mends the transcript, then runs the queue's next message
            await asyncio.sleep(0.01)
        assert started == [("b", "after")]
        assert await b._rows.store.items(INDEX) == {}  # pyright: ignore[reportPrivateUsage]
        assert await b.sweep() == 0  # ended once

    assert _run(tmp_path, body) == ["s"]


def test_a_request_that_finds_a_dead_workers_turn_ends_it_at_once(tmp_path: Path) -> None:
    async def body(a: StoreTurns, b: StoreTurns, started: list[tuple[str, str]]) -> None:
        turn, _ = await _held_turn(a)
        await _lapse(b, "a")
        assert await b.current("s") is None  # ended: a new message starts a turn
        record = (await _meta(b))["turns"][turn.turn_id]
        assert record["state"] == "interrupted" and record["takenOverBy"] == "b"
        again = await b.start("s", _held(asyncio.Event(), asyncio.Event()))
        assert again is not None and again.seq == turn.seq + 1
        await b.stop("s", again.turn_id)

    _run(tmp_path, body)


def test_a_session_named_clawcell_keeps_its_turn_through_another_workers_sweep(
    tmp_path: Path,
) -> None:
    # The store-wide rows (the index of running turns, the heartbeats) once had the shape of a
    # session's derived rows: the index was the live row of a session named "clawcell", whose
    # entries a sweep then read as sessions, deleting that session's turn record.
    async def body(a: StoreTurns, b: StoreTurns, started: list[tuple[str, str]]) -> None:
        turn, gate = await _held_turn(a, "clawcell")
        assert await b.sweep() == 0
        on_b = await b.current("clawcell")
        assert on_b is not None and on_b.turn_id == turn.turn_id
        assert row_of("clawcell") != INDEX and not INDEX.startswith("clawcell")
        gate.set()

    _run(tmp_path, body)


def test_a_worker_of_the_release_before_is_alive_by_its_heartbeat_in_the_old_row(
    tmp_path: Path,
) -> None:
    # A rolling upgrade: a worker of the release before writes its heartbeat only to
    # `clawcell\x1fworkers`; this release's workers must not take its turns for dead.
    async def body(a: StoreTurns, b: StoreTurns, started: list[tuple[str, str]]) -> None:
        await _held_turn(a)
        store = b._rows.store  # pyright: ignore[reportPrivateUsage]
        beat = await store.get("clawcell\x1fworkers", "a")
        assert beat is not None  # this release writes the old row too
        await store.delete("\x1fclawcell\x1fworkers", "a")  # as a worker of the release before
        assert await b.sweep() == 0 and await b.current("s") is not None
        await _lapse(b, "a")
        assert await b.sweep() == 1

    _run(tmp_path, body)


def test_a_loop_closing_with_the_registry_open_ends_its_sweeper() -> None:
    # The loop ends with the registry never closed: it cancels the sweeper and waits for it;
    # a sweep whose store read swallowed the cancellation once made it sweep on forever.
    async def main() -> None:
        store = CancelSwallowingStore("items")
        turns = StoreTurns(store, lambda s, t: None, owner="a")
        turns.tend()
        await store.entered.wait()  # the sweeper is in its first sweep's read

    assert ends_when_its_loop_closes(main), "the loop is still waiting for the sweeper"


def test_a_turn_of_a_registry_never_closed_ends_its_stop_watch_when_its_loop_closes() -> None:
    # The Stop watch of a running turn reads the live row; the read swallowed the loop's one
    # cancellation, and the old watch waited for a Stop forever.
    async def main() -> None:
        store = CancelSwallowingStore("load_run")
        turns = StoreTurns(store, lambda s, t: None, owner="a")
        turn = LiveTurn(turn_id="t1", session_id="s", seq=1)
        watch = turns._control("s", turn)  # pyright: ignore[reportPrivateUsage]
        asyncio.get_running_loop().create_task(watch)
        await store.entered.wait()

    assert ends_when_its_loop_closes(main)


def test_a_turn_writer_ends_when_its_loop_closes_though_a_write_swallowed_the_cancel() -> None:
    # The writer was storing a chunk when the loop closed; the write swallowed the one
    # cancellation, and the old writer then waited for more messages forever.
    async def main() -> None:
        store = CancelSwallowingStore("apply")
        rows = LiveRows(store, store, "a", 30.0)
        turn = LiveTurn(turn_id="t1", session_id="s", seq=1, messages=["first"])
        writer = TurnWriter(rows, turn, 0.01)
        writer.wake.set()
        asyncio.get_running_loop().create_task(writer.run())
        await store.entered.wait()

    assert ends_when_its_loop_closes(main)


def test_a_follower_ends_when_its_loop_closes_though_a_read_swallowed_the_cancel() -> None:
    # A page following a session whose read swallowed the loop's one cancellation: the old
    # follower sent keepalives forever.
    async def main() -> None:
        store = CancelSwallowingStore("load_run")
        rows = LiveRows(store, store, "a", 30.0)

        async def end_dead(session_id: str, turn_id: str, record: Record) -> None:
            raise AssertionError("no turn runs")

        async def follow() -> None:
            async for _ in follow_rows(rows, "s", None, 0, until_idle=False, end_dead=end_dead):
                pass

        asyncio.get_running_loop().create_task(follow())
        await store.entered.wait()

    assert ends_when_its_loop_closes(main)
