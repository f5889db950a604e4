"""The parked-run record: its versioned state, and damaged records refused with `SnapshotError`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from clawcell import CodeMode, Limits, SnapshotError
from clawcell.store import SQLiteStore
from tests._sealing import save_sealed

SESSION = "record-session"
LIMITS = Limits(timeout_ms=60_000)


async def _park(path: Path) -> tuple[str, dict[str, Any]]:
    async with SQLiteStore(path) as store:
        async with CodeMode(store=store, session_id=SESSION, limits=LIMITS) as mode:
            parked = await mode.exec(
                "await store('k', 1); text('o'); await yield_control(); return 7"
            )
        assert parked["status"] == "waiting"
        saved = await store.load_run(SESSION, parked["runId"])
        assert saved is not None
        return parked["runId"], dict(saved.meta)


async def _wait_with_meta(path: Path, run_id: str, meta: dict[str, Any]) -> dict[str, Any]:
    async with SQLiteStore(path) as store:
        saved = await store.load_run(SESSION, run_id)
        assert saved is not None
        await save_sealed(store, SESSION, run_id, saved.blob, meta)
        async with CodeMode(store=store, session_id=SESSION, limits=LIMITS) as mode:
            return await mode.wait(run_id)


def test_a_parked_record_is_versioned_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    run_id, meta = asyncio.run(_park(path))

    assert meta["version"] == 1
    assert sorted(meta) == [
        "approvals",
        "cell",
        "expiresAt",
        "ledger",
        "restartSafe",
        "seal",
        "version",
        "writes",
    ]
    done = asyncio.run(_wait_with_meta(path, run_id, meta))
    assert (done["status"], done["value"]) == ("completed", 7)


def test_a_record_of_0_1_without_a_version_is_read(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    run_id, meta = asyncio.run(_park(path))
    del meta["version"]

    assert asyncio.run(_wait_with_meta(path, run_id, meta))["value"] == 7


def _tamper(meta: dict[str, Any], change: str) -> dict[str, Any]:
    meta = {**meta, "cell": dict(meta["cell"]), "ledger": dict(meta["ledger"])}
    match change:
        case "version":
            meta["version"] = 99
        case "no-cell":
            del meta["cell"]
        case "cell-not-object":
            meta["cell"] = [1, 2]
        case "pending-not-list":
            meta["cell"]["pending"] = "x"
        case "pending-id-int":
            meta["cell"]["pending"] = [{"id": 5, "method": "yield", "args": []}]
        case "pending-entry-empty":
            meta["cell"]["pending"] = [{}]
        case "reply-payload-int":
            entry = {"id": "bridge:sleep:1", "method": "sleep", "args": [1]}
            meta["cell"]["pending"] = [{**entry, "reply": {"ok": True, "payload": 3}}]
        case "flag-not-bool":
            meta["cell"]["valueReady"] = "yes"
        case "ledger-items-int":
            meta["ledger"]["items"] = 4
        case "ledger-receipt-empty":
            meta["ledger"]["receipt"] = []
        case "ledger-missing-max":
            del meta["ledger"]["max"]
        case "writes-not-pairs":
            meta["writes"] = {"k": "v"}
        case "writes-json-int":
            meta["writes"] = {"k": [1, False]}
        case "expires-text":
            meta["expiresAt"] = "soon"
        case "restart-safe-text":
            meta["restartSafe"] = "no"
        case _:
            raise AssertionError(change)
    return meta


CHANGES = [
    "version",
    "no-cell",
    "cell-not-object",
    "pending-not-list",
    "pending-id-int",
    "pending-entry-empty",
    "reply-payload-int",
    "flag-not-bool",
    "ledger-items-int",
    "ledger-receipt-empty",
    "ledger-missing-max",
    "writes-not-pairs",
    "writes-json-int",
    "expires-text",
    "restart-safe-text",
]


@pytest.mark.parametrize("change", CHANGES)
def test_a_damaged_record_is_refused_with_a_snapshot_error(tmp_path: Path, change: str) -> None:
    path = tmp_path / "state.db"
    run_id, meta = asyncio.run(_park(path))

    with pytest.raises(SnapshotError) as caught:
        asyncio.run(_wait_with_meta(path, run_id, _tamper(meta, change)))

    assert caught.value.code == "invalid_snapshot"
    expected = "not supported" if change == "version" else "parked run record is damaged"
    assert expected in caught.value.message


def test_the_next_cell_runs_normally_after_a_damaged_record(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    run_id, meta = asyncio.run(_park(path))
    with pytest.raises(SnapshotError):
        asyncio.run(_wait_with_meta(path, run_id, _tamper(meta, "pending-id-int")))

    async def fresh() -> dict[str, Any]:
        store = SQLiteStore(path)
        async with store, CodeMode(store=store, session_id=SESSION, limits=LIMITS) as mode:
            return await mode.exec("return (await load('k')) ?? 'no value'")

    assert asyncio.run(fresh())["value"] == "no value"


def test_forged_entry_points_in_a_snapshot_never_reach_a_later_cell(tmp_path: Path) -> None:
    from clawcell.runtime import GuestPool
    from clawcell.runtime._wasm._snapshot import decode, encode  # pyright: ignore[reportPrivateUsage]

    path = tmp_path / "state.db"
    run_id, meta = asyncio.run(_park(path))
    canonical = GuestPool(
        memory_limit_bytes=LIMITS.memory_limit_bytes,
        install_config='{"maxPending": 1, "bindings": []}',
    )

    async def forge_and_continue() -> tuple[dict[str, Any], list[Any]]:
        async with SQLiteStore(path) as store:
            saved = await store.load_run(SESSION, run_id)
            assert saved is not None
            image = canonical.acquire().canonical()
            state = decode(saved.blob, image, max_memory_bytes=1 << 30)
            state.meta["handles"] = [1, 2, 3, 4, 5]
            await save_sealed(
                store,
                SESSION,
                run_id,
                encode(state, image, stack_pointer=state.stack_pointer, meta=state.meta),
                meta,
            )
            async with CodeMode(store=store, session_id=SESSION, limits=LIMITS) as mode:
                forged = await mode.wait(run_id)
                later = [(await mode.exec(f"return {i}"))["value"] for i in range(3)]
        return forged, later

    forged, later = asyncio.run(forge_and_continue())
    assert forged["status"] == "failed"
    assert later == [0, 1, 2]


def test_live_parked_runs_are_counted_over_the_runtimes_that_still_exist() -> None:
    import gc

    from clawcell._runs._parked import live_parked_in_process  # pyright: ignore[reportPrivateUsage]

    async def park_in_two_runtimes() -> list[int]:
        counts = [live_parked_in_process()]
        first, second = CodeMode(limits=LIMITS), CodeMode(limits=LIMITS)
        for mode in (first, second):
            assert (await mode.exec("await yield_control(); return 1"))["status"] == "waiting"
        counts.append(live_parked_in_process())
        await first.aclose()  # its parked run ends
        counts.append(live_parked_in_process())
        del second, mode  # dropped without closing: its runs go with it
        gc.collect()
        counts.append(live_parked_in_process())
        return counts

    before, both, one, none = asyncio.run(park_in_two_runtimes())
    assert (both - before, one - before, none - before) == (2, 1, 0)
