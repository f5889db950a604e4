"""`SessionTurns`: one turn per session across stores sharing a database, Stop from any of them."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from clawcell.errors import StaleRunError
from clawcell.store import MemoryStore, SessionTurns
from clawcell.store._turns import FencedAppend
from tests._swallowing import HANG_CEILING_S, CancelSwallowingStore, ends_when_its_loop_closes
from tests.conftest import run

from .conftest import StoreFactory


def test_of_concurrent_first_turns_of_a_session_exactly_one_holds_it(
    new_durable_store: StoreFactory,
) -> None:
    async def body() -> list[bool]:
        stores = [new_durable_store() for _ in range(4)]
        try:
            turns = [SessionTurns(s, lease_seconds=30) for s in stores]
            holds = await asyncio.gather(*(t.hold("s", wait=0) for t in turns))
            for hold in holds:
                if hold is not None:
                    await hold.release()
            return [hold is not None for hold in holds]
        finally:
            for store in stores:
                await store.close()

    held = run(body())
    assert held.count(True) == 1


def test_a_second_turn_waits_for_the_first_to_release(new_durable_store: StoreFactory) -> None:
    async def body() -> list[str]:
        async with new_durable_store() as store_a, new_durable_store() as store_b:
            a, b = SessionTurns(store_a), SessionTurns(store_b)
            order: list[str] = []
            first = await a.hold("s", wait=0)
            assert first is not None
            assert await b.hold("s", wait=0) is None  # held: not waiting means refused
            second = asyncio.create_task(b.hold("s", wait=60))
            order.append("first ends")
            await first.release()
            hold = await second
            assert hold is not None
            order.append("second holds")
            assert await b.holder("s") == b.owner
            await hold.release()
            assert await b.holder("s") is None
            return order

    assert run(body()) == ["first ends", "second holds"]


def test_a_stop_sent_through_another_store_reaches_the_holder(
    new_durable_store: StoreFactory,
) -> None:
    async def body() -> tuple[bool, bool, bool]:
        async with new_durable_store() as store_a, new_durable_store() as store_b:
            a, b = SessionTurns(store_a), SessionTurns(store_b)
            hold = await a.hold("s", wait=0)
            assert hold is not None
            sent = await b.stop("s")
            await asyncio.wait_for(hold.stop_requested.wait(), 30)
            await hold.release()
            after = await b.stop("s")  # no turn runs: nothing to stop
            later = await a.hold("s", wait=0)
            assert later is not None
            stopped_later = later.stop_requested.is_set()  # the old Stop is not the new turn's
            await later.release()
            return sent, after, stopped_later

    assert run(body()) == (True, False, False)


def test_a_holder_whose_lease_lapsed_and_was_taken_is_fenced_out(
    new_durable_store: StoreFactory,
) -> None:
    async def body() -> None:
        async with new_durable_store() as store_a, new_durable_store() as store_b:
            a = SessionTurns(store_a, lease_seconds=0.2)
            b = SessionTurns(store_b, lease_seconds=30)
            stalled = await a.hold("s", wait=0)
            assert stalled is not None
            await stalled._keeper.close()  # pyright: ignore[reportPrivateUsage]
            taken = await b.hold("s", wait=60)  # waits for the stalled lease to lapse
            assert taken is not None
            with pytest.raises(StaleRunError):
                await stalled.check()
            await taken.check()
            await stalled.release()
            assert await b.holder("s") == b.owner
            await taken.release()

    run(body())


def _entry(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


class _Unfenced:
    """A store without `append_transcript_fenced` (one written before it): a memory store's
    methods but that one."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name == "append_transcript_fenced":
            raise AttributeError(name)
        return getattr(self._store, name)


def test_an_append_by_a_holder_whose_lease_was_taken_is_refused_and_stores_nothing(
    new_durable_store: StoreFactory,
) -> None:
    async def body() -> list[dict[str, Any]]:
        async with new_durable_store() as store_a, new_durable_store() as store_b:
            a = SessionTurns(store_a, lease_seconds=0.2)
            b = SessionTurns(store_b, lease_seconds=30)
            stalled = await a.hold("s", wait=0)
            assert stalled is not None
            await stalled.append([_entry("first")])
            await stalled._keeper.close()  # pyright: ignore[reportPrivateUsage]
            taken = await b.hold("s", wait=60)  # waits for the stalled lease to lapse
            assert taken is not None
            with pytest.raises(StaleRunError):
                await stalled.append([_entry("late")])
            await taken.append([_entry("second")])
            await stalled.release()
            await taken.release()
            return await store_b.read_transcript("s")

    assert [e["content"][0]["text"] for e in run(body())] == ["first", "second"]


@pytest.mark.parametrize("wrap", [False, True], ids=["fenced-append", "renew-then-append"])
def test_an_append_on_one_memory_store_is_fenced_with_or_without_the_capability(
    wrap: bool,
) -> None:
    async def body() -> list[dict[str, Any]]:
        shared = MemoryStore()
        store = cast(MemoryStore, _Unfenced(shared)) if wrap else shared
        assert isinstance(store, FencedAppend) is not wrap
        a = SessionTurns(store, lease_seconds=0.2)
        b = SessionTurns(store, lease_seconds=30)
        stalled = await a.hold("s", wait=0)
        assert stalled is not None
        await stalled._keeper.close()  # pyright: ignore[reportPrivateUsage]
        taken = await b.hold("s", wait=60)
        assert taken is not None
        with pytest.raises(StaleRunError):
            await stalled.append([_entry("late")])
        await taken.append([_entry("kept")])
        await taken.release()
        return await shared.read_transcript("s")

    assert [e["content"][0]["text"] for e in run(body())] == ["kept"]


def test_workers_of_one_memory_store_share_its_turn_leases() -> None:
    async def body() -> tuple[bool, bool]:
        async with MemoryStore() as store:
            a, b = SessionTurns(store), SessionTurns(store)
            hold = await a.hold("s", wait=0)
            assert hold is not None
            refused = await b.hold("s", wait=0) is None
            await hold.release()
            again = await b.hold("s", wait=0)
            assert again is not None
            await again.release()
            return refused, again.version > hold.version

    assert run(body()) == (True, True)


def test_a_hold_taken_from_a_lapsed_lease_names_the_holder_that_never_released(
    new_durable_store: StoreFactory,
) -> None:
    async def body() -> tuple[str | None, str | None, str | None]:
        async with new_durable_store() as store_a, new_durable_store() as store_b:
            a = SessionTurns(store_a, lease_seconds=0.2)
            b = SessionTurns(store_b, lease_seconds=30)
            first = await a.hold("s", wait=0)
            assert first is not None and first.took_over_from is None
            await first._keeper.close()  # pyright: ignore[reportPrivateUsage]
            taken = await b.hold("s", wait=60)  # the "dead" worker's lease lapses
            assert taken is not None
            await taken.release()
            after_release = await a.hold("s", wait=0)
            assert after_release is not None
            await after_release.release()
            return taken.took_over_from, after_release.took_over_from, a.owner

    dead, after_release, owner_a = run(body())
    assert dead == owner_a and after_release is None


class _SwallowingStore(MemoryStore):
    """A store whose `wait_for_change` answers a cancellation with "changed" instead of
    raising it, as Python 3.11's `asyncio.wait_for` (psycopg's pool uses it too) does when
    the awaited event fires in the step the cancellation lands."""

    async def wait_for_change(
        self, session_id: str, run_id: str, *, timeout: float, since: int | None = None
    ) -> bool:
        try:
            return await super().wait_for_change(session_id, run_id, timeout=timeout, since=since)
        except asyncio.CancelledError:
            return True


def test_release_ends_even_when_the_watch_loses_its_cancellation() -> None:
    async def body() -> bool:
        store = _SwallowingStore()
        hold = await SessionTurns(store, lease_seconds=30).hold("s", wait=0)
        assert hold is not None
        for _ in range(5):  # the watch is waiting for a change now
            await asyncio.sleep(0)
        async with asyncio.timeout(60):  # on the old code: the watch never ended
            await hold.release()
        again = await SessionTurns(store, lease_seconds=30).hold("s", wait=0)
        assert again is not None
        await again.release()
        return True

    assert run(body())


def test_a_hold_never_released_ends_its_watch_when_its_loop_closes_though_a_wait_swallowed() -> (
    None
):
    # The loop closing around a turn that never released cancels its watch once and waits for
    # it; the watch's wait swallowed that, and the old watch went on watching forever.
    async def main() -> None:
        store = CancelSwallowingStore("wait_for_change")
        assert await SessionTurns(store, lease_seconds=30).hold("s", wait=0) is not None
        await store.entered.wait()

    assert ends_when_its_loop_closes(main)


def test_a_cancelled_wait_for_a_held_session_ends_though_the_store_swallowed_the_cancel() -> None:
    async def body() -> None:
        store = CancelSwallowingStore("wait_for_change", armed=False)
        first = await SessionTurns(store, lease_seconds=30).hold("s", wait=0)
        assert first is not None
        for _ in range(5):  # its watch waits for a change now, not armed
            await asyncio.sleep(0)
        store.armed = True
        waiting = asyncio.create_task(SessionTurns(store, lease_seconds=30).hold("s", wait=3600))
        await store.entered.wait()
        waiting.cancel()
        await asyncio.wait({waiting}, timeout=HANG_CEILING_S)  # the old code waited an hour
        assert waiting.cancelled()
        await first.release()

    run(body())
