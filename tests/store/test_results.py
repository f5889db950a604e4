"""Saved results in the store: by scope and id, with an expiry the sweeper enforces."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from clawcell.store import SweepReport

from .conftest import StoreFactory

LATER = time.time() + 36_000


def test_results_round_trip_by_scope_and_are_replaced(new_store: StoreFactory) -> None:
    async def scenario() -> list[Any]:
        async with new_store() as store:
            await store.put_result("reply-1", "result_a", '{"rows":[1,2]}', expires_at=LATER)
            await store.put_result("reply-2", "result_a", '"other scope"')
            first = await store.get_result("reply-1", "result_a")
            await store.put_result("reply-1", "result_a", "[3]", expires_at=LATER)
            return [
                first,
                await store.get_result("reply-1", "result_a"),
                await store.get_result("reply-2", "result_a"),
                await store.get_result("reply-1", "unknown"),
                await store.delete_result("reply-1", "result_a"),
                await store.delete_result("reply-1", "result_a"),
                await store.get_result("reply-1", "result_a"),
            ]

    assert asyncio.run(scenario()) == [
        '{"rows":[1,2]}',
        "[3]",
        '"other scope"',
        None,
        True,
        False,
        None,
    ]


def test_an_expired_result_is_unavailable_and_swept(new_store: StoreFactory) -> None:
    async def scenario() -> tuple[str | None, SweepReport, str | None, SweepReport]:
        async with new_store() as store:
            await store.put_result("r", "old", "1", expires_at=time.time() - 1)
            await store.put_result("r", "kept", "2", expires_at=LATER)
            await store.put_result("r", "forever", "3")
            gone = await store.get_result("r", "old")
            first = await store.sweep()
            kept = await store.get_result("r", "kept")
            return gone, first, kept, await store.sweep(now=LATER + 1)

    gone, first, kept, later = asyncio.run(scenario())

    assert (gone, kept) == (None, "2")
    assert first == SweepReport(runs=0, results=1)
    assert later == SweepReport(runs=0, results=1)


def test_results_outlive_the_store_object(new_durable_store: StoreFactory) -> None:
    async def write() -> None:
        async with new_durable_store() as store:
            await store.put_result("reply-1", "result_a", '{"ok":true}', expires_at=LATER)

    async def read() -> str | None:
        async with new_durable_store() as store:
            return await store.get_result("reply-1", "result_a")

    asyncio.run(write())
    assert asyncio.run(read()) == '{"ok":true}'


def test_listing_a_scope_names_its_live_results_only(new_store: StoreFactory) -> None:
    async def scenario() -> tuple[list[str], list[str], list[str]]:
        async with new_store() as store:
            await store.put_result("r", "result_b", "1", expires_at=LATER)
            await store.put_result("r", "result_a", "2")
            await store.put_result("r", "result_old", "3", expires_at=time.time() - 1)
            await store.put_result("other", "result_c", "4")
            listed = await store.list_results("r")
            await store.delete_result("r", "result_a")
            return listed, await store.list_results("r"), await store.list_results("none")

    assert asyncio.run(scenario()) == (["result_a", "result_b"], ["result_b"], [])
