"""`LeaseKeeper`: a held run stays held while its worker works, and a lost run is noticed."""

from __future__ import annotations

import asyncio
import time

import pytest

from clawcell.errors import StaleRunError
from clawcell.store import ClaimedRun, LeaseKeeper

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
