"""Load benchmark: many concurrent cells in one process.

A script, not a test: prints a table of medians and writes `bench/results/load.json`. Each
scenario runs in a fresh subprocess, so its peak RSS is its own. Run it with `make bench` or
`.venv/bin/python bench/bench_load.py [--repeat N]`.

* `io_bound`: 100 concurrent cells, each making 5 sequential tool calls that sleep 50 ms
  (ideal: 250 ms of wall time);
* `cpu_bound`: 20 concurrent cells that compute (no tool calls); the speedup is the sum of
  their single-cell times over the wall time of all 20, bounded by the guest threads and by
  the cores other processes leave free. So that a busy machine cannot hide how the work was
  spread, it also reports the CPU seconds each guest thread spent (its share), the
  process's CPU time over the wall time (its utilisation: 2.0 is two full cores) and how often
  all guest threads were runnable at once (sampled every 2 ms from `/proc`: near 1.0 means
  they never waited for each other, e.g. on the GIL, only for the CPUs);
* `parked`: 1,000 cells parked on `yield_control`, spread over 16 `CodeMode`s (a runtime
  holds at most 64 parked runs); the figure is the RSS they add.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import clawcell
from clawcell.runtime import compiled_reactor

RESULTS = Path(__file__).resolve().parent / "results"
IO_CELL = "for (let i = 0; i < 5; i++) await nap({ i });\nreturn 1;"
CPU_CELL = "let x = 0;\nfor (let i = 0; i < 4e6; i++) x = (x + i * 7) % 1000003;\nreturn x;"
PARK_CELL = "await yield_control('parked');\nreturn 1;"
ROOMY = clawcell.Limits(timeout_ms=120_000)


async def _nap(_: dict[str, Any]) -> Any:
    await asyncio.sleep(0.05)
    return None


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def _guest_thread_cpu() -> dict[str, float]:
    """CPU seconds each guest thread has used (Linux `/proc/self/task/<tid>/stat`)."""
    ticks = os.sysconf("SC_CLK_TCK")
    spent: dict[str, float] = {}
    for thread in threading.enumerate():
        if thread.name.startswith("clawcell-guest-") and thread.native_id is not None:
            with open(f"/proc/self/task/{thread.native_id}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            spent[thread.name] = (int(fields[11]) + int(fields[12])) / ticks
    return spent


def _thread_state(native_id: int) -> str:
    with open(f"/proc/self/task/{native_id}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]


class _RunnableSampler:
    """Samples, every 2 ms, whether every guest thread is runnable (state `R`)."""

    def __init__(self) -> None:
        self._ids = [
            t.native_id
            for t in threading.enumerate()
            if t.name.startswith("clawcell-guest-") and t.native_id is not None
        ]
        self._stop = threading.Event()
        self.samples = self.all_runnable = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.002):
            self.samples += 1
            self.all_runnable += all(_thread_state(i) == "R" for i in self._ids)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.all_runnable / max(self.samples, 1)


async def _io_bound(repeat: int) -> dict[str, Any]:
    tools = [clawcell.Tool(name="nap", execute=_nap, parameters={"type": "object"})]
    walls: list[float] = []
    cpus: list[float] = []
    async with clawcell.CodeMode(tools, limits=ROOMY) as mode:
        await asyncio.gather(*(mode.exec(IO_CELL) for _ in range(100)))  # warm 100 guests
        for _ in range(repeat):
            start, cpu = time.perf_counter(), _cpu_s()
            envelopes = await asyncio.gather(*(mode.exec(IO_CELL) for _ in range(100)))
            walls.append((time.perf_counter() - start) * 1000)
            cpus.append((_cpu_s() - cpu) * 1000)
            assert all(e["status"] == "completed" for e in envelopes), envelopes[0]
    wall = statistics.median(walls)
    return {
        "wall_ms": round(wall, 1),
        "ideal_ms": 250,
        "ratio": round(wall / 250, 3),
        "cpu_ms": round(statistics.median(cpus), 1),
        "best_wall_ms": round(min(walls), 1),
    }


async def _cpu_bound(repeat: int) -> dict[str, Any]:
    singles: list[float] = []
    walls: list[float] = []
    utilisation: list[float] = []
    runnable: list[float] = []
    async with clawcell.CodeMode(limits=ROOMY) as mode:
        await mode.exec(CPU_CELL)
        shares = dict.fromkeys(_guest_thread_cpu(), 0.0)
        for _ in range(repeat):
            start = time.perf_counter()
            await mode.exec(CPU_CELL)
            singles.append((time.perf_counter() - start) * 1000)
            before = _guest_thread_cpu()
            start, cpu, sampler = time.perf_counter(), _cpu_s(), _RunnableSampler()
            envelopes = await asyncio.gather(*(mode.exec(CPU_CELL) for _ in range(20)))
            wall_s = time.perf_counter() - start
            runnable.append(sampler.stop())
            walls.append(wall_s * 1000)
            utilisation.append((_cpu_s() - cpu) / wall_s)
            after = _guest_thread_cpu()
            for name in after:
                shares[name] = shares.get(name, 0.0) + after[name] - before.get(name, 0.0)
            assert all(e["status"] == "completed" for e in envelopes), envelopes[0]
    single, wall = statistics.median(singles), statistics.median(walls)
    total = sum(shares.values()) or 1.0
    return {
        "single_ms": round(single, 1),
        "wall_ms": round(wall, 1),
        "speedup": round(20 * single / wall, 2),
        "utilisation": round(statistics.median(utilisation), 2),
        "all_guest_threads_runnable": round(statistics.median(runnable), 2),
        "guest_threads": len(shares),
        "guest_thread_cpu_share": {n: round(v / total, 3) for n, v in sorted(shares.items())},
    }


async def _parked(_: int) -> dict[str, Any]:
    modes = [clawcell.CodeMode(limits=ROOMY, session_id=f"s{i}") for i in range(16)]
    for mode in modes:  # warm: engine, guests, canonical image
        envelope = await mode.exec(PARK_CELL)
        assert envelope["status"] == "waiting", envelope
    before = _rss_mib()
    parked = 0
    while parked < 1000:
        envelope = await modes[parked % 16].exec(PARK_CELL)
        assert envelope["status"] == "waiting", envelope
        parked += 1
    added = _rss_mib() - before
    for mode in modes:
        await mode.aclose()
    return {
        "cells": parked,
        "added_rss_mib": round(added, 1),
        "per_cell_kib": round(added * 1024 / parked, 1),
    }


SCENARIOS = {"io_bound": _io_bound, "cpu_bound": _cpu_bound, "parked": _parked}


def _child(name: str, repeat: int) -> None:
    compiled_reactor()
    result = asyncio.run(SCENARIOS[name](repeat))
    result["peak_rss_mib"] = round(_peak_mib(), 1)
    result["load_average"] = round(os.getloadavg()[0], 1)  # other processes' demand
    print(json.dumps(result))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scenario", choices=sorted(SCENARIOS))
    args = parser.parse_args()
    if args.scenario:
        _child(args.scenario, args.repeat)
        return 0
    results: dict[str, Any] = {}
    for name in SCENARIOS:
        out = subprocess.run(
            [sys.executable, __file__, "--scenario", name, "--repeat", str(args.repeat)],
            check=True,
            capture_output=True,
            text=True,
        )
        results[name] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{name:10} {results[name]}")
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count()}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "load.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
