"""Parked-run lease operations on SQLite and PostgreSQL: latency, wake-ups, contention.

Run: `.venv/bin/python bench/bench_scale_out.py`. It uses `CLAWCELL_TEST_POSTGRES_DSN` when
set, or else re-runs itself under `scripts/pg-test-env` (a throwaway local PostgreSQL). Prints
a table and writes `bench/results/scale_out.json`. A script, not a test: timings never gate
anything.

* per operation, one process, p50/p99 over 300 calls: unfenced `save_run` of a 64 KiB
  snapshot, `claim_run`, fenced `save_run`, `update_run_meta`, `release_run`, `take_run`;
* wake-up: a second store object waits with `wait_for_change`; the time from the start of
  an `update_run_meta` to the waiter's return (SQLite polls, PostgreSQL is `NOTIFY`d);
* contention: 4 worker processes claim, save and release random runs of 32 for 3 s; the
  total cycles per second and the share of claims lost to another worker.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from clawcell.store import PostgresStore, SQLiteStore, open_store

RESULTS = Path(__file__).parent / "results" / "scale_out.json"
DSN_VARIABLE = "CLAWCELL_TEST_POSTGRES_DSN"
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
        "take_run": await timed(lambda i: store.take_run(SESSION, ids[i]), repeat),
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
    dsn = os.environ.get(DSN_VARIABLE)
    if not dsn:
        script = Path(__file__).resolve().parents[1] / "scripts" / "pg-test-env"
        return subprocess.run([script, sys.executable, __file__], check=False).returncode
    results: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine()}
    with tempfile.TemporaryDirectory() as directory:
        results["sqlite"] = backend(str(Path(directory) / "bench.db"), "clawcell")
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    try:
        results["postgres"] = backend(dsn, schema)
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    report(results)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
