"""Run leases, fencing, wake-ups and the sweeper: one contract on every backend."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from clawcell.errors import ConfigurationError, InputError, StaleRunError
from clawcell.store import ClaimedRun, Lease, SweepReport

from .conftest import StoreFactory

HOUR = 3600.0
LATER = {"expiresAt": time.time() + 10 * HOUR}


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def gone(run_id: str) -> str:
    return (
        f"parked run {run_id!r} of session 's' is gone (taken, deleted or swept); stop working "
        "on it and drop this worker's copy."
    )


def moved(run_id: str, current: int, expected: int) -> str:
    return (
        f"parked run {run_id!r} of session 's' is at version {current}, not {expected}: another "
        "worker claimed it since; stop working on it and drop this worker's copy."
    )


def test_a_claim_leases_the_run_and_raises_its_version(new_store: StoreFactory) -> None:
    async def scenario() -> tuple[int, ClaimedRun | None, ClaimedRun | None, Any]:
        async with new_store() as store:
            saved = await store.save_run("s", "cm_1", b"snap", LATER)
            first = await store.claim_run("s", "cm_1", owner="a", lease_seconds=HOUR)
            second = await store.claim_run("s", "cm_1", owner="b", lease_seconds=HOUR)
            return saved, first, second, await store.load_run("s", "cm_1")

    saved, first, second, loaded = run(scenario())

    assert saved == 1
    assert first is not None and second is None
    assert (first.run.blob, dict(first.run.meta)) == (b"snap", LATER)
    assert (first.lease.owner, first.lease.version, first.run.version) == ("a", 2, 2)
    assert first.lease.expires_at == pytest.approx(time.time() + HOUR, abs=60)
    assert (loaded.owner, loaded.version, loaded.lease_expires_at) == (
        "a",
        2,
        first.lease.expires_at,
    )


def test_an_expired_lease_is_claimed_by_another_owner_from_the_last_save(
    new_store: StoreFactory,
) -> None:
    async def scenario() -> tuple[Lease, ClaimedRun | None]:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"v1", LATER)
            dying = await store.claim_run("s", "cm_1", owner="a", lease_seconds=HOUR)
            assert dying is not None
            await store.save_run("s", "cm_1", b"v2", LATER, expected_version=dying.lease.version)
            short = await store.renew_lease(dying.lease, lease_seconds=0)  # "a" stops renewing
            return short, await store.claim_run("s", "cm_1", owner="b", lease_seconds=HOUR)

    short, revived = run(scenario())

    assert revived is not None
    assert (revived.run.blob, revived.lease.owner, revived.lease.version) == (b"v2", "b", 3)
    assert short.version == 2


def test_a_stale_owners_writes_are_refused_and_change_nothing(new_store: StoreFactory) -> None:
    async def scenario() -> Any:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"v1", LATER)
            old = await store.claim_run("s", "cm_1", owner="a", lease_seconds=0)
            new = await store.claim_run("s", "cm_1", owner="b", lease_seconds=HOUR)
            assert old is not None and new is not None
            refusals: list[tuple[str, str]] = []
            attempts = [
                store.save_run("s", "cm_1", b"late", {}, expected_version=old.lease.version),
                store.update_run_meta("s", "cm_1", version=old.lease.version, patch={"x": 1}),
                store.renew_lease(old.lease, lease_seconds=HOUR),
                store.release_run(old.lease),
            ]
            for attempt in attempts:
                with pytest.raises(StaleRunError) as caught:
                    await attempt
                refusals.append((caught.value.code, caught.value.message))
            return refusals, await store.load_run("s", "cm_1")

    refusals, current = run(scenario())

    assert refusals == [("stale_run", moved("cm_1", 3, 2))] * 4
    assert (current.blob, dict(current.meta), current.owner, current.version) == (
        b"v1",
        LATER,
        "b",
        3,
    )


def test_writes_to_a_run_that_is_gone_are_refused(new_store: StoreFactory) -> None:
    async def scenario() -> list[str]:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"v1", LATER)
            claimed = await store.claim_run("s", "cm_1", owner="a", lease_seconds=HOUR)
            assert claimed is not None
            await store.delete_run("s", "cm_1")
            messages: list[str] = []
            for attempt in (
                store.save_run("s", "cm_1", b"x", {}, expected_version=2),
                store.release_run(claimed.lease),
            ):
                with pytest.raises(StaleRunError) as caught:
                    await attempt
                messages.append(caught.value.message)
            return messages

    assert run(scenario()) == [gone("cm_1")] * 2


def test_a_released_run_is_claimable_and_its_releaser_can_no_longer_renew(
    new_store: StoreFactory,
) -> None:
    async def scenario() -> tuple[str, ClaimedRun | None]:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"v1", LATER)
            claimed = await store.claim_run("s", "cm_1", owner="a", lease_seconds=HOUR)
            assert claimed is not None
            await store.release_run(claimed.lease)
            with pytest.raises(StaleRunError) as caught:
                await store.renew_lease(claimed.lease, lease_seconds=HOUR)
            return caught.value.message, await store.claim_run(
                "s", "cm_1", owner="b", lease_seconds=HOUR
            )

    message, next_claim = run(scenario())

    assert message == (
        "parked run 'cm_1' of session 's' is not leased to this worker (it was released); "
        "claim it again before renewing or releasing."
    )
    assert next_claim is not None and next_claim.lease.version == 3


def test_results_written_back_after_a_park_merge_into_the_meta(new_store: StoreFactory) -> None:
    async def scenario() -> Any:
        async with new_store() as store:
            meta = {**LATER, "pending": {"c1": {"tool": "slow"}, "c2": {"tool": "slow"}}}
            version = await store.save_run("s", "cm_1", b"snap", meta)
            await store.update_run_meta(
                "s", "cm_1", version=version, patch={"settled": {"c1": {"ok": True}}}
            )
            await store.update_run_meta(
                "s",
                "cm_1",
                version=version,
                patch={"settled": {"c2": {"ok": False}}, "pending": None},
            )
            claimed = await store.claim_run("s", "cm_1", owner="b", lease_seconds=HOUR)
            assert claimed is not None
            return claimed.run.blob, dict(claimed.run.meta)

    blob, meta = run(scenario())

    assert blob == b"snap"
    assert meta == {**LATER, "settled": {"c1": {"ok": True}, "c2": {"ok": False}}}


def test_an_unfenced_save_drops_the_lease_and_fences_its_holder(new_store: StoreFactory) -> None:
    async def scenario() -> tuple[int, Any]:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"v1", LATER)
            claimed = await store.claim_run("s", "cm_1", owner="a", lease_seconds=HOUR)
            assert claimed is not None
            version = await store.save_run("s", "cm_1", b"v2", LATER)
            with pytest.raises(StaleRunError):
                await store.update_run_meta("s", "cm_1", version=2, patch={"x": 1})
            return version, await store.load_run("s", "cm_1")

    version, loaded = run(scenario())

    assert version == 3
    assert (loaded.owner, loaded.lease_expires_at, loaded.blob) == (None, None, b"v2")


def test_an_expired_run_cannot_be_claimed(new_store: StoreFactory) -> None:
    async def scenario() -> ClaimedRun | None:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"v1", {"expiresAt": time.time() - 1})
            return await store.claim_run("s", "cm_1", owner="a", lease_seconds=HOUR)

    assert run(scenario()) is None


@pytest.mark.parametrize("seconds", [-1, float("inf"), float("nan"), True])
def test_a_bad_lease_length_is_a_configuration_error(new_store: StoreFactory, seconds: Any) -> None:
    async def scenario() -> str:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"v1", LATER)
            with pytest.raises(ConfigurationError) as caught:
                await store.claim_run("s", "cm_1", owner="a", lease_seconds=seconds)
            return caught.value.message

    assert run(scenario()) == (
        f"`lease_seconds` must be a finite number of seconds ≥ 0, got {seconds!r}."
    )


def test_the_sweeper_removes_expired_unleased_runs_only(new_store: StoreFactory) -> None:
    async def scenario() -> tuple[SweepReport, SweepReport, list[str]]:
        async with new_store() as store:
            soon = {"expiresAt": 1000.0}
            await store.save_run("s", "expired", b"", soon)
            await store.save_run("s", "leased", b"", LATER)
            await store.save_run("s", "fresh", b"", {"expiresAt": 5000.0})
            await store.save_run("s", "forever", b"", {})
            held = await store.claim_run("s", "leased", owner="a", lease_seconds=10 * HOUR)
            assert held is not None
            await store.update_run_meta("s", "leased", version=held.lease.version, patch=soon)
            first = await store.sweep(now=2000.0)
            # The sweeper's clock is given; the lease ran out by its own (real) clock later.
            second = await store.sweep(now=time.time() + 20 * HOUR)
            return first, second, [r.run_id for r in await store.list_runs("s")]

    first, second, left = run(scenario())

    assert first == SweepReport(runs=1)
    assert second == SweepReport(runs=2)
    assert left == ["forever"]


def test_a_waiter_wakes_when_the_run_changes(new_store: StoreFactory) -> None:
    async def scenario() -> tuple[bool, bool, bool]:
        async with new_store() as store:
            version = await store.save_run("s", "cm_1", b"", LATER)
            seen = await store.load_run("s", "cm_1")
            assert seen is not None
            waiter = asyncio.create_task(
                store.wait_for_change("s", "cm_1", timeout=HOUR, since=seen.revision)
            )
            await store.update_run_meta("s", "cm_1", version=version, patch={"r": 1})
            woke = await asyncio.wait_for(waiter, HOUR)
            current = await store.load_run("s", "cm_1")
            assert current is not None
            quiet = await store.wait_for_change("s", "cm_1", timeout=0.05, since=current.revision)
            stale = await store.wait_for_change("s", "cm_1", timeout=HOUR, since=seen.revision)
            return woke, quiet, stale

    assert run(scenario()) == (True, False, True)


def test_a_waiter_wakes_for_a_release_by_another_worker(new_durable_store: StoreFactory) -> None:
    async def scenario() -> tuple[bool, ClaimedRun | None]:
        async with new_durable_store() as waiting, new_durable_store() as working:
            await working.save_run("s", "cm_1", b"", LATER)
            held = await working.claim_run("s", "cm_1", owner="a", lease_seconds=HOUR)
            assert held is not None
            assert await waiting.claim_run("s", "cm_1", owner="b", lease_seconds=HOUR) is None
            seen = await waiting.load_run("s", "cm_1")
            assert seen is not None
            waiter = asyncio.create_task(
                waiting.wait_for_change("s", "cm_1", timeout=HOUR, since=seen.revision)
            )
            await working.release_run(held.lease)
            woke = await asyncio.wait_for(waiter, HOUR)
            return woke, await waiting.claim_run("s", "cm_1", owner="b", lease_seconds=HOUR)

    woke, claimed = run(scenario())

    assert woke is True
    assert claimed is not None and claimed.lease.version == 3


def test_a_waiter_on_a_missing_run_returns_at_once(new_store: StoreFactory) -> None:
    async def scenario() -> bool:
        async with new_store() as store:
            return await store.wait_for_change("s", "cm_none", timeout=HOUR)

    assert run(scenario()) is True


def test_an_empty_owner_is_a_configuration_error(new_store: StoreFactory) -> None:
    async def scenario() -> str:
        async with new_store() as store:
            await store.save_run("s", "cm_1", b"v1", LATER)
            with pytest.raises(ConfigurationError) as caught:
                await store.claim_run("s", "cm_1", owner="", lease_seconds=HOUR)
            return caught.value.message

    assert run(scenario()) == (
        "`owner` must be a non-empty string unique to this worker process, got ''."
    )


def test_meta_and_patches_that_are_not_json_are_refused(new_store: StoreFactory) -> None:
    async def scenario() -> tuple[list[str], Any]:
        async with new_store() as store:
            version = await store.save_run("s", "cm_1", b"v1", LATER)
            messages: list[str] = []
            for attempt in (
                store.save_run("s", "cm_1", b"v2", {"bad": {1, 2}}),
                store.update_run_meta("s", "cm_1", version=version, patch={"bad": float("nan")}),
            ):
                with pytest.raises(InputError) as caught:
                    await attempt
                messages.append(caught.value.message.split(" (")[0])
            return messages, await store.load_run("s", "cm_1")

    messages, current = run(scenario())

    assert messages == ["parked-run meta is not JSON-serialisable"] * 2
    assert (current.blob, dict(current.meta), current.version) == (b"v1", LATER, 1)
