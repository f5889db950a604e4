"""Host memory: guests are freed when their `CodeMode` closes or their pool is dropped.

Host callbacks stay in a process-wide registry until their store is deleted (as they did in
wasmtime-py's slab); a callback that referenced its guest kept every guest, store and linear
memory alive (D15).
RSS bounds here are generous ratios of what a leak costs, never timings.
"""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest

from clawcell import CodeMode, Limits
from clawcell.runtime import Guest, GuestPool
from tests.conftest import in_forked_child, run

ROOMY = Limits(timeout_ms=60_000)
FORTY_MIB = "const a = new Uint8Array(40 * 1024 * 1024);\na.fill(7);\nreturn a.length;"


def rss_mib() -> float:
    """Resident set size of this process in MiB (Linux `/proc/self/statm`)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


def live_guests() -> int:
    gc.collect()
    return sum(1 for obj in gc.get_objects() if isinstance(obj, Guest))


async def _open_and_close(count: int, code: str) -> list[Any]:
    values: list[Any] = []
    for _ in range(count):
        async with CodeMode([], limits=ROOMY) as mode:
            values.append((await mode.exec(code))["value"])
    return values


def test_closed_code_modes_free_their_guests() -> None:
    # The process-wide shelf keeps a few idle guests per configuration (bounded by
    # `SHELF_GUESTS`); beyond those, nothing of a closed `CodeMode` stays alive.
    run(_open_and_close(2, "return 1;"))
    before = live_guests()
    assert run(_open_and_close(10, "return 1;")) == [1] * 10
    assert live_guests() == before


def test_a_dropped_pool_frees_its_guests() -> None:
    install = '{"maxPending":1,"bindings":[],"test":"dropped-pool"}'
    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=install)
    pool.acquire()  # the configuration's template stays on the shelf
    before = live_guests()
    held = [pool.acquire() for _ in range(3)]
    assert live_guests() == before + 3
    del pool, held
    assert live_guests() == before


def test_memory_of_grown_guests_is_returned_after_close() -> None:
    # Leaking, 20 cells of 40 MiB each hold about 800 MiB; freed, the figure stays flat.
    run(_open_and_close(1, FORTY_MIB))  # warm: engine, module, worker thread
    gc.collect()
    start = rss_mib()
    assert run(_open_and_close(20, FORTY_MIB)) == [40 * 1024 * 1024] * 20
    gc.collect()
    assert rss_mib() - start < 100


def test_sixty_open_close_cycles_keep_rss_flat() -> None:
    run(_open_and_close(1, "return 1;"))
    gc.collect()
    start = rss_mib()
    run(_open_and_close(60, "return [1, 2, 3];"))
    gc.collect()
    assert rss_mib() - start < 100


def _rss_over_cycles() -> bytes:
    """In a fresh (forked) process: RSS after 100 warm-up cycles, 500 and 1,000 more."""
    samples: list[float] = []
    for count in (100, 500, 500):
        assert run(_open_and_close(count, "return [1, 2, 3];")) == [[1, 2, 3]] * count
        gc.collect()
        samples.append(rss_mib())
    return json.dumps(samples).encode()


@pytest.mark.slow
def test_a_thousand_open_close_cycles_keep_rss_flat() -> None:
    # A forked child, so the figure is the cycles' own and not what other tests left behind.
    out = in_forked_child(_rss_over_cycles, timeout=600.0)
    assert out is not None, "the open/close cycles hung"
    warm, half, end = json.loads(out)
    # Leaking, the last 500 cycles hold about 1.3 GiB; 25 MiB is allocator noise.
    assert end - half < 25, (warm, half, end)
    assert end - warm < 50, (warm, half, end)


def test_parked_runs_of_all_runtimes_share_one_bound_on_live_guests() -> None:
    # Per runtime, 1,000 idle parked cells over 16 runtimes kept 128 live guests (336 MiB).
    from clawcell._runs._parked import (  # pyright: ignore[reportPrivateUsage]
        MAX_LIVE_PARKED,
        live_parked_in_process,
    )

    async def main() -> list[Any]:
        modes = [CodeMode([], limits=ROOMY, session_id=f"s{i}") for i in range(4)]
        parked = [
            (mode, await mode.exec(f"await yield_control('p');\nreturn {i};"))
            for i, mode in enumerate(modes * 6)
        ]
        live = live_parked_in_process()
        values = [(await mode.wait(p["runId"]))["value"] for mode, p in parked]
        for mode in modes:
            await mode.aclose()
        return [live, values, live_parked_in_process()]

    live, values, after = run(main())
    assert live == MAX_LIVE_PARKED
    assert values == list(range(24))
    assert after == 0
