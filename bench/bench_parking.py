"""Parking speed, side by side with the original (issue 9's table).

Run: `.venv/bin/python bench/bench_parking.py`. Prints a table of medians and writes
`bench/results/parking.json`. A script, not a test.

* `exec` of a cell that calls `yield_control()` until its `waiting` envelope;
* `wait` on that run until its `completed` envelope (the resume);
* a new `CodeMode` and its first cell (`return 1`) in a warm process;

each with the default in-memory store and with a durable `SQLiteStore` (where the park is
committed before `waiting` returns and `wait` takes the run from SQLite first). The
original's figures were measured on this machine with `shared/oracle/bench-code-mode.mjs`
(scenarios e and r) and are quoted from the issue.
"""

from __future__ import annotations

import asyncio
import json
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from clawcell import CodeMode, Limits
from clawcell.store import SQLiteStore

RESULTS = Path(__file__).parent / "results" / "parking.json"
CELL = "await yield_control('bench');\nreturn 1;"
LIMITS = Limits(timeout_ms=60_000)
ORIGINAL = {  # node executor, quickjs executor (ms, medians on this machine)
    "exec_to_waiting": (2.3, 5.4),
    "wait_to_completed": (0.78, 2.4),
    "new_runtime_first_cell": (2.9, 4.5),
}
TARGETS = {
    "exec_to_waiting_memory": 1.5,
    "exec_to_waiting_sqlite": 3.0,
    "wait_to_completed_memory": 0.5,
    "wait_to_completed_sqlite": 2.0,
    "new_runtime_first_cell_memory": 2.0,
}


async def _park_and_resume(mode: CodeMode, repeat: int) -> tuple[float, float]:
    parks: list[float] = []
    resumes: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        parked = await mode.exec(CELL)
        parks.append((time.perf_counter() - start) * 1000)
        assert parked["status"] == "waiting", parked
        start = time.perf_counter()
        done = await mode.wait(parked["runId"])
        resumes.append((time.perf_counter() - start) * 1000)
        assert done["status"] == "completed", done
    return statistics.median(parks), statistics.median(resumes)


async def _first_cells(store: SQLiteStore | None, repeat: int) -> float:
    samples: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        async with CodeMode(limits=LIMITS, store=store, session_id="bench") as mode:
            envelope = await mode.exec("return 1")
        samples.append((time.perf_counter() - start) * 1000)
        assert envelope["status"] == "completed"
    return statistics.median(samples)


async def bench(directory: Path, repeat: int) -> dict[str, float]:
    results: dict[str, float] = {}
    for name in ("memory", "sqlite"):
        store = SQLiteStore(directory / "bench.sqlite") if name == "sqlite" else None
        async with CodeMode(limits=LIMITS, store=store, session_id="bench") as mode:
            await _park_and_resume(mode, 10)  # warm the pool and the canonical image
            park, resume = await _park_and_resume(mode, repeat)
        results[f"exec_to_waiting_{name}"] = park
        results[f"wait_to_completed_{name}"] = resume
        await _first_cells(store, 5)
        results[f"new_runtime_first_cell_{name}"] = await _first_cells(store, repeat // 2)
        if store is not None:
            await store.close()
    return results


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        results = asyncio.run(bench(Path(directory), repeat=200))
    print(f"{'measure':<34} {'clawcell':>9} {'target':>8} {'orig node':>10} {'orig qjs':>9}")
    for key, value in results.items():
        node, quickjs = ORIGINAL[key.rsplit("_", 1)[0]]
        target = TARGETS.get(key)
        shown = "" if target is None else f"≤ {target}"
        print(f"{key:<34} {value:>6.2f} ms {shown:>8} {node:>7} ms {quickjs:>6} ms")
    RESULTS.parent.mkdir(exist_ok=True)
    payload: dict[str, Any] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "medians_ms": results,
        "targets_ms": TARGETS,
        "original_ms": {key: {"node": n, "quickjs": q} for key, (n, q) in ORIGINAL.items()},
    }
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n", "utf-8")


if __name__ == "__main__":
    main()
