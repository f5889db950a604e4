"""`LeaseKeeper`: a held run stays held while its worker works, and a lost run is noticed."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any, cast

import pytest

from clawcell.errors import StaleRunError
from clawcell.store import ClaimedRun, Lease, LeaseKeeper, SessionStore
from tests._swallowing import CancelSwallowingStore, ends_when_its_loop_closes

from .conftest import StoreFactory

LATER = {"expiresAt": time.time() + 36_000}


def test_a_kept_lease_is_renewed_and_blocks_other_claims(new_store: StoreFactory) -> None:
    async def scenario() -> tuple[float, float, ClaimedRun | None, ClaimedRun | None]:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"", LATER)
            claimed = await store.claim_run("s", "cm_1", owner="a", lease_seconds=60)
            assert claimed is not None
            async with LeaseKeeper(store, claimed.lease, lease_seconds=60, every=0.01) as keeper:
                while keeper.lease.expires_at == claimed.lease.expires_at:
                    await store.wait_for_change("s", "cm_1", timeout=0.05)
                renewed = keeper.lease.expires_at
                blocked = await store.claim_run("s", "cm_1", owner="b", lease_seconds=60)
                await keeper.release()
            after = await store.claim_run("s", "cm_1", owner="b", lease_seconds=60)
            return claimed.lease.expires_at, renewed, blocked, after

    first, renewed, blocked, after = asyncio.run(scenario())

    assert renewed > first
    assert blocked is None
    assert after is not None and after.lease.version == 3


def test_a_keeper_whose_run_was_taken_over_sets_lost(new_store: StoreFactory) -> None:
    async def scenario() -> bool:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"", LATER)
            claimed = await store.claim_run("s", "cm_1", owner="a", lease_seconds=0)
            assert claimed is not None
            assert await store.claim_run("s", "cm_1", owner="b", lease_seconds=60) is not None
            async with LeaseKeeper(store, claimed.lease, lease_seconds=60, every=0.01) as keeper:
                await asyncio.wait_for(keeper.lost.wait(), 60)
                with pytest.raises(StaleRunError):
                    await keeper.release()
            return keeper.lost.is_set()

    assert asyncio.run(scenario()) is True


class SwallowingStore:
    """A store whose first renewal swallows a cancellation, as Python 3.11's
    `asyncio.wait_for` does when it lands as the pool hands out a connection."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.renewing = asyncio.Event()
        self.renewals = 0

    async def renew_lease(self, lease: Lease, *, lease_seconds: float) -> Lease:
        self.renewals += 1
        if self.renewals == 1:
            self.renewing.set()
            with contextlib.suppress(asyncio.CancelledError):  # the swallowed cancellation
                await asyncio.Event().wait()
        return await self._store.renew_lease(lease, lease_seconds=lease_seconds)


def test_closing_a_keeper_stops_it_even_when_a_renewal_swallows_the_cancellation(
    new_store: StoreFactory,
) -> None:
    async def scenario() -> int:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"", LATER)
            claimed = await store.claim_run("s", "cm_1", owner="a", lease_seconds=60)
            assert claimed is not None
            swallowing = SwallowingStore(store)
            # The keeper only renews: a store with `renew_lease` alone stands in for one.
            double = cast(SessionStore, swallowing)
            async with LeaseKeeper(double, claimed.lease, lease_seconds=60, every=0.001):
                await swallowing.renewing.wait()
            return swallowing.renewals

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) == 1


def test_a_keeper_never_closed_ends_when_its_loop_closes_though_a_renewal_swallowed() -> None:
    # The loop closing around a keeper nobody closed cancels its task once and waits for it;
    # the renewal swallowed that, and the old keeper renewed on forever.
    async def main() -> None:
        store = CancelSwallowingStore("renew_lease")
        await store.save_run("s", "cm_1", b"", LATER)
        claimed = await store.claim_run("s", "cm_1", owner="a", lease_seconds=60)
        assert claimed is not None
        await LeaseKeeper(store, claimed.lease, lease_seconds=60, every=0.001).__aenter__()
        await store.entered.wait()

    assert ends_when_its_loop_closes(main)
