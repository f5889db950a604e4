"""Continuation timings and sizes: guest snapshots and the `wait` round trip.

Run: `.venv/bin/python bench/bench_continuations.py`. Prints a table of medians and writes
`bench/results/continuations.json` and `.md`. A script, not a test: timings never gate
anything.

* Snapshots of a really parked cell (compiled, started, pumped and stepped until it waits
  on `yield_control()`): an idle one, and one holding ~5 MB of JS objects (100,000 small
  objects; `JSON.stringify` of them is ~5.6 MB). For each: raw linear-memory bytes,
  compressed snapshot bytes, capture time (`Guest.snapshot()`) and restore time
  (`Guest.restore()` into another guest of the same pool).
* `wait` end to end (`await mode.wait(run_id)` until the `completed` envelope) when nothing is
  left to wait for: a cell parked on `yield_control()`, and a cell parked on a tool call that
  finished while the cell was parked. Each with the default in-memory store and with a
  durable `SQLiteStore` (the run is taken from SQLite first). `exec` is not timed.
"""

from __future__ import annotations

import asyncio
import json
import platform
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from clawcell import CodeMode, Limits, Tool
from clawcell.runtime import Guest, GuestPool
from clawcell.store import SQLiteStore

RESULTS = Path(__file__).parent / "results" / "continuations.json"
REPORT = RESULTS.with_suffix(".md")
INSTALL = json.dumps({"maxPending": 16, "bindings": []})

IDLE_CELL = "await yield_control('bench');\nreturn 1;"
BIG_CELL = (
    "globalThis.data = Array.from({ length: 100000 }, (_, i) => ({ i, s: 'item-' + i, "
    "tags: [i % 7, i % 11], nested: { even: i % 2 === 0 } }));\n"
    "await yield_control('bench');\nreturn data.length;"
)
TARGETS = {
    "idle_snapshot_compressed_bytes": ("≤ 65,536 bytes", 65_536),
    "idle_restore_ms": ("≤ 5 ms", 5.0),
    "wait_yield_memory_ms": ("≤ 10 ms", 10.0),
    "wait_settled_tool_memory_ms": ("≤ 10 ms", 10.0),
    "wait_yield_sqlite_ms": ("≤ 10 ms", 10.0),
    "wait_settled_tool_sqlite_ms": ("≤ 10 ms", 10.0),
}


def _median_ms(action: Callable[[], object], repeat: int) -> float:
    samples: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _parked_guest(pool: GuestPool, code: str) -> Guest:
    """A guest whose cell has run up to its `yield_control()` (the state a park snapshots)."""
    guest = pool.acquire()
    guest.deadline = time.monotonic() + 30
    report = guest.start_turn(guest.compile(code))
    assert [request[1] for request in report.requests] == ["yield"], report
    return guest


def bench_snapshots(name: str, code: str, repeat: int) -> dict[str, Any]:
    pool = GuestPool(memory_limit_bytes=64 * 1024 * 1024, install_config=INSTALL, max_idle=0)
    guest = _parked_guest(pool, code)
    blob = guest.snapshot()  # also computes the process's canonical image once
    target = pool.acquire()
    capture = _median_ms(guest.snapshot, repeat)
    restore = _median_ms(lambda: target.restore(blob), repeat)
    return {
        f"{name}_memory_bytes": guest.instance.memory.size,
        f"{name}_snapshot_compressed_bytes": len(blob),
        f"{name}_capture_ms": capture,
        f"{name}_restore_ms": restore,
        f"{name}_samples": repeat,
    }


async def _time_waits(
    mode: CodeMode, code: str, repeat: int, settle: Callable[[], Awaitable[None]]
) -> float:
    samples: list[float] = []
    for _ in range(repeat):
        parked = await mode.exec(code)
        assert parked["status"] == "waiting", parked
        await settle()
        start = time.perf_counter()
        envelope = await mode.wait(parked["runId"])
        samples.append((time.perf_counter() - start) * 1000)
        assert envelope["status"] == "completed", envelope
    return statistics.median(samples)


async def bench_wait(directory: Path, repeat: int) -> dict[str, Any]:
    results: dict[str, Any] = {"wait_samples": repeat}
    gates: list[asyncio.Event] = []
    finished = asyncio.Event()

    async def slow(_: dict[str, Any]) -> Any:
        gate = asyncio.Event()
        gates.append(gate)
        await gate.wait()
        finished.set()
        return "done"

    async def nothing() -> None:
        return None

    async def finish_tool() -> None:
        finished.clear()
        gates[-1].set()
        await finished.wait()
        await asyncio.sleep(0)  # let the task's done-callback run, as a parked cell would

    limits = Limits(timeout_ms=100)  # parks on the tool after 100 ms (exec is not timed)
    tools = [Tool(name="slow", execute=slow)]
    for store_name in ("memory", "sqlite"):
        store = SQLiteStore(directory / "bench.sqlite") if store_name == "sqlite" else None
        async with CodeMode(tools, limits=limits, store=store, session_id="bench") as mode:
            await _time_waits(mode, IDLE_CELL, 3, nothing)  # warm the pool and the image
            results[f"wait_yield_{store_name}_ms"] = await _time_waits(
                mode, IDLE_CELL, repeat, nothing
            )
            results[f"wait_settled_tool_{store_name}_ms"] = await _time_waits(
                mode, "return await slow();", max(5, repeat // 3), finish_tool
            )
    return results


def _report(results: dict[str, Any]) -> str:
    lines = [
        "# Continuations: snapshots and `wait`",
        "",
        f"Python {results['python']} on {results['machine']}; medians. "
        "Generated by `bench/bench_continuations.py`.",
        "",
        "| measurement | median | target | met |",
        "| --- | ---: | --- | :---: |",
    ]
    for key, value in results.items():
        if not (key.endswith("_ms") or key.endswith("_bytes")):
            continue
        shown = f"{value:,.3f} ms" if key.endswith("_ms") else f"{value:,} bytes"
        target, bound = TARGETS.get(key, ("", None))
        met = "" if bound is None else ("yes" if value <= bound else "**no**")
        lines.append(f"| {key} | {shown} | {target} | {met} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    results: dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine()}
    results.update(bench_snapshots("idle", IDLE_CELL, repeat=50))
    results.update(bench_snapshots("objects_5mb", BIG_CELL, repeat=7))
    with tempfile.TemporaryDirectory() as directory:
        results.update(asyncio.run(bench_wait(Path(directory), repeat=30)))
    print(f"{'measure':<40} {'median':>16}  target")
    for key, value in results.items():
        target = TARGETS.get(key, ("", None))[0]
        if key.endswith("_ms"):
            print(f"{key:<40} {value:>13.3f} ms  {target}")
        elif key.endswith("_bytes"):
            print(f"{key:<40} {value:>16,}  {target}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    REPORT.write_text(_report(results), "utf-8")


if __name__ == "__main__":
    main()
