"""Parked-run lease operations on SQLite and PostgreSQL: latency, wake-ups, contention.

Run: `.venv/bin/python bench/bench_scale_out.py`. It uses `CLAWCELL_TEST_POSTGRES_DSN` when
set, or else re-runs itself under `scripts/pg-test-env` (a throwaway local PostgreSQL). Prints
a table and writes `bench/results/scale_out.json`. A script, not a test: timings never gate
anything.

* per operation, one process, p50/p99 over 300 calls: unfenced `save_run` of a 64 KiB
  snapshot, `claim_run`, fenced `save_run`, `update_run_meta`, `release_run`, `delete_run`;
* wake-up: a second store object waits with `wait_for_change`; the time from the start of
  an `update_run_meta` to the waiter's return (SQLite polls, PostgreSQL is `NOTIFY`d);
* contention: 4 worker processes claim, save and release random runs of 32 for 3 s; the
  total cycles per second and the share of claims lost to another worker;
* cells (the proof load of issue 15, `tests/store/_load.py`): 500 cells that park at once, on
  slow tools and on a yield, driven through `CodeMode` worker processes with every `exec` and
  `wait` sent to a random worker, 64 cells in flight. Loads: PostgreSQL with 4 workers
  SIGKILLed every 2–5 s and restarted (and 10 % of `wait`s sent to two workers at once); the
  same without kills or duplicate waits; SQLite with one worker process; the last two again
  with 128 cells in flight. Every load is checked with `check_load` (every cell right, every
  charge at most once or `effectStatus: "unknown"`, no run in two workers at once); the
  script exits 1 when one is not. Cells per second and `wait` p50/p99 (from sending the
  `wait` to its envelope, which includes waiting for slow tools within the 1 s budget).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _postgres import drop_schema, postgres_dsn_or_rerun
from clawcell.store import PostgresStore, SQLiteStore, open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.store._load import LoadPlan, LoadResult, run_load
from tests.store._load_checks import check_load

RESULTS = Path(__file__).parent / "results" / "scale_out.json"
BLOB = bytes(range(256)) * 256
HOUR = 3600.0
SESSION = "bench"
Store = SQLiteStore | PostgresStore


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": statistics.median(ordered),
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))],
    }


async def timed(action: Callable[[int], Awaitable[object]], repeat: int) -> dict[str, float]:
    samples: list[float] = []
    for i in range(repeat):
        start = time.perf_counter()
        await action(i)
        samples.append((time.perf_counter() - start) * 1000)
    return percentiles(samples)


async def operations(store: Store, repeat: int = 300) -> dict[str, dict[str, float]]:
    meta = {"expiresAt": time.time() + HOUR, "cell": {"pending": ["c1"]}}
    ids = [f"cm_{uuid.uuid4().hex}" for _ in range(repeat)]
    leases: dict[int, Any] = {}

    async def claim(i: int) -> None:
        claimed = await store.claim_run(SESSION, ids[i], owner="bench", lease_seconds=HOUR)
        assert claimed is not None
        leases[i] = claimed.lease

    async def fenced(i: int) -> None:
        await store.save_run(SESSION, ids[i], BLOB, meta, expected_version=leases[i].version)

    async def patch(i: int) -> None:
        await store.update_run_meta(
            SESSION, ids[i], version=leases[i].version, patch={"settled": {"c1": {"ok": True}}}
        )

    return {
        "save_run_64k": await timed(lambda i: store.save_run(SESSION, ids[i], BLOB, meta), repeat),
        "claim_run": await timed(claim, repeat),
        "save_run_fenced": await timed(fenced, repeat),
        "update_run_meta": await timed(patch, repeat),
        "release_run": await timed(lambda i: store.release_run(leases[i]), repeat),
        "delete_run": await timed(lambda i: store.delete_run(SESSION, ids[i]), repeat),
    }


async def wake_ups(make: Callable[[], Store], repeat: int = 40) -> dict[str, float]:
    samples: list[float] = []
    async with make() as writer, make() as waiter:
        version = await writer.save_run(SESSION, "cm_wake", b"", {"expiresAt": time.time() + HOUR})
        for i in range(repeat):
            seen = await waiter.load_run(SESSION, "cm_wake")
            assert seen is not None
            task = asyncio.create_task(
                waiter.wait_for_change(SESSION, "cm_wake", timeout=HOUR, since=seen.revision)
            )
            await asyncio.sleep(0.05)  # let the waiter settle into its wait
            start = time.perf_counter()
            await writer.update_run_meta(SESSION, "cm_wake", version=version, patch={"i": i})
            await task
            samples.append((time.perf_counter() - start) * 1000)
    return percentiles(samples)


def contend(target: str, schema: str, owner: str, seconds: float, queue: Any) -> None:
    async def main() -> tuple[int, int]:
        cycles = lost = 0
        async with open_store(target, schema=schema) as store:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                run_id = f"cm_{random.randrange(32)}"
                claimed = await store.claim_run(SESSION, run_id, owner=owner, lease_seconds=HOUR)
                if claimed is None:
                    lost += 1
                    continue
                await store.save_run(
                    SESSION, run_id, BLOB, claimed.run.meta, expected_version=claimed.lease.version
                )
                await store.release_run(claimed.lease)
                cycles += 1
        return cycles, lost

    queue.put(asyncio.run(main()))


def contention(
    target: str, schema: str, workers: int = 4, seconds: float = 3.0
) -> dict[str, float]:
    async def park() -> None:
        async with open_store(target, schema=schema) as store:
            for i in range(32):
                await store.save_run(SESSION, f"cm_{i}", BLOB, {"expiresAt": time.time() + HOUR})

    asyncio.run(park())
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    processes = [
        context.Process(target=contend, args=(target, schema, f"w{i}", seconds, queue))
        for i in range(workers)
    ]
    for process in processes:
        process.start()
    totals = [queue.get() for _ in processes]
    for process in processes:
        process.join()
    cycles = sum(c for c, _ in totals)
    lost = sum(lost for _, lost in totals)
    return {"cycles_per_s": cycles / seconds, "claims_lost_share": lost / max(1, cycles + lost)}


def backend(target: str, schema: str) -> dict[str, Any]:
    def make() -> Store:
        return open_store(target, schema=schema)

    async def main() -> dict[str, Any]:
        async with make() as store:
            result: dict[str, Any] = await operations(store)
        result["wake_up"] = await wake_ups(make)
        return result

    result = asyncio.run(main())
    result["contention_4_workers"] = contention(target, schema)
    return result


CELLS = 500
CELL_LOADS: dict[str, tuple[str, LoadPlan]] = {
    "postgres_4_workers_killed": (
        "postgres",
        LoadPlan(
            cells=CELLS, workers=4, concurrency=64, kill_every_s=(2.0, 5.0), duplicate_waits=0.1
        ),
    ),
    "postgres_4_workers": (
        "postgres",
        LoadPlan(cells=CELLS, workers=4, concurrency=64, duplicate_waits=0.0),
    ),
    "sqlite_1_process": (
        "sqlite",
        LoadPlan(cells=CELLS, workers=1, concurrency=64, duplicate_waits=0.0),
    ),
    # 64 cells in flight, each about 3 s long with its pauses, hold the rate near 21 cells/s;
    # with 128 the machine sets it (with 200 and more, legs of this shared 2-core machine
    # start missing their 1 s budget and fail with `timeout`).
    "postgres_4_workers_128_in_flight": (
        "postgres",
        LoadPlan(cells=CELLS, workers=4, concurrency=128, duplicate_waits=0.0),
    ),
    "sqlite_1_process_128_in_flight": (
        "sqlite",
        LoadPlan(cells=CELLS, workers=1, concurrency=128, duplicate_waits=0.0),
    ),
}


def cell_figures(result: LoadResult) -> dict[str, Any]:
    with sqlite3.connect(result.ledger) as conn:
        attempts, keys = conn.execute(
            "SELECT count(*), count(DISTINCT key) FROM attempts"
        ).fetchone()
    paid = [value["paid"] for value in result.values.values()]
    return {
        "cells": result.plan.cells,
        "workers": result.plan.workers,
        "concurrency": result.plan.concurrency,
        "elapsed_s": result.elapsed_s,
        "cells_per_s": len(result.values) / result.elapsed_s,
        "wait": percentiles(result.wait_ms),
        "waits": len(result.wait_ms),
        "exec": percentiles(result.exec_ms),
        "kills": len(result.kills),
        "charges_with_receipt": sum(1 for p in paid if "receipt" in p),
        "charges_unknown": sum(1 for p in paid if p.get("effectStatus") == "unknown"),
        "charges_attempted_again_after_a_kill": attempts - keys,
        "completions_recovered_from_the_store": result.recovered,
        "retries": result.retries,
        "problems": check_load(result),
    }


def cell_loads(dsn: str) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for name, (kind, plan) in CELL_LOADS.items():
        with tempfile.TemporaryDirectory() as directory:
            ledger = Path(directory) / "ledger.db"
            if kind == "sqlite":
                result = asyncio.run(
                    run_load(plan, str(Path(directory) / "cells.db"), "clawcell", ledger)
                )
            else:
                schema = f"bench_{uuid.uuid4().hex[:8]}"
                try:
                    result = asyncio.run(run_load(plan, dsn, schema, ledger))
                finally:
                    drop_schema(dsn, schema)
            figures[name] = cell_figures(result)
    return figures


def report_cells(figures: dict[str, Any]) -> None:
    print(
        f"\n{'cells load':<34} {'cells/s':>8} {'wait p50':>10} {'p99':>9} "
        f"{'kills':>6} {'unknown':>8}"
    )
    for name, f in figures.items():
        print(
            f"{name:<34} {f['cells_per_s']:>8.1f} {f['wait']['p50_ms']:>7.0f} ms "
            f"{f['wait']['p99_ms']:>6.0f} ms {f['kills']:>6} {f['charges_unknown']:>8}"
        )
        for problem in f["problems"][:10]:
            print(f"  PROBLEM: {problem}")


def report(results: dict[str, Any]) -> None:
    print(f"{'measure':<32} {'sqlite p50':>11} {'p99':>9} {'postgres p50':>13} {'p99':>9}")
    for name in results["sqlite"]:
        if name == "contention_4_workers":
            continue
        s, p = results["sqlite"][name], results["postgres"][name]
        print(
            f"{name:<32} {s['p50_ms']:>8.3f} ms {s['p99_ms']:>6.2f} ms "
            f"{p['p50_ms']:>10.3f} ms {p['p99_ms']:>6.2f} ms"
        )
    for name in ("sqlite", "postgres"):
        c = results[name]["contention_4_workers"]
        print(
            f"{name}: 4 workers {c['cycles_per_s']:,.0f} claim+save+release cycles/s, "
            f"{c['claims_lost_share']:.0%} of claims found the run held"
        )


def main() -> int:
    dsn = postgres_dsn_or_rerun(__file__)
    results: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine()}
    with tempfile.TemporaryDirectory() as directory:
        results["sqlite"] = backend(str(Path(directory) / "bench.db"), "clawcell")
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    try:
        results["postgres"] = backend(dsn, schema)
    finally:
        drop_schema(dsn, schema)
    report(results)
    results["cells"] = cell_loads(dsn)
    report_cells(results["cells"])
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    return 1 if any(f["problems"] for f in results["cells"].values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
