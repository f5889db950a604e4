"""The V8 executor's memory bound: how far a flood gets past the watchdog, and what the
watchdog's sampling costs a warm cell.

A script, not a test. Three figures:

* **Overshoot of the fastest flood.** A Python child writes 2 GiB (`b'x' * 2**31`, page
  faults at memory speed) behind a channel whose watchdog bound is 256 MiB; the figure is
  the resident memory the watchdog read when it fired, minus the bound (median and maximum
  of `--floods` runs).
* **Overshoot of a V8 flood past the guard.** A cell builds a `Float64Array` from a huge
  array-like (written element by element before the guard sees the buffer) under a 16 MiB
  limit (bound 16 + 128 MiB); the same figure from the watchdog's message.
* **Sampling cost.** Warm `exec("return 1")`, 1,000 sequential echo calls, and the host's CPU
  time while a cell computes for a while (a 1e8 loop) on V8, with the watchdog sampling every
  2 ms and with it sampling never (`SAMPLE_S` patched), alternating in one process
  (`--rounds`), the median of per-round medians.

Prints tables and writes `bench/results/v8_memory.{json,md}`.

    .venv/bin/python bench/bench_v8_memory.py [--floods 10] [--rounds 4] [--repeat 200]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import time
from typing import Any

import clawcell
from _common import machine_meta, write_results
from clawcell.runtime import EngineFailure, GuestConfig, V8Executor
from clawcell.runtime._v8 import _process as v8_process  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._v8._process import Channel, WorkerDied  # pyright: ignore[reportPrivateUsage]
from clawcell.runtime._v8._watch import OVERHEAD_MB, ResidentWatch  # pyright: ignore[reportPrivateUsage]

MIB = 1024 * 1024
HELD = re.compile(r"held (\d+) MiB")
ARRAY_LIKE = "const a = new Float64Array({ length: 2 ** 27 });\nreturn a.length;"
SEQUENTIAL = "for (let i = 0; i < 1000; i++) await echo({ i }); return 1;"
COMPUTE = "let s = 0; for (let i = 0; i < 1e8; i++) s += i; return s;"


def _python_flood(bound_mib: int) -> int:
    child = subprocess.Popen(
        [sys.executable, "-c", "import time\nb = b'x' * 2**31\ntime.sleep(60)\n"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    channel = Channel(child, watch=ResidentWatch(child.pid, bound_mib * MIB))
    try:
        channel.receive(time.monotonic() + 60)
    except WorkerDied as died:
        return _held(died.stderr) - bound_mib
    finally:
        channel.close()
    raise RuntimeError("the flood was not stopped")


def _v8_flood(executor: V8Executor, config: GuestConfig) -> int:
    guest = executor.acquire(config)
    try:
        guest.parse_cell(ARRAY_LIKE, time.monotonic() + 60)
        failure = guest.run_segment(1, None, time.monotonic() + 60)
        if not isinstance(failure, EngineFailure) or "watchdog" not in failure.message:
            raise RuntimeError(f"the watchdog did not stop the flood: {failure!r}")
        bound = config.memory_limit_bytes // MIB + OVERHEAD_MB
        return _held(failure.message) - bound
    finally:
        executor.release(guest)


def _held(message: str) -> int:
    found = HELD.search(message)
    if found is None:
        raise RuntimeError(f"no figure in {message!r}")
    return int(found.group(1))


async def _echo(params: dict[str, Any]) -> dict[str, Any]:
    return params


async def _warm(repeat: int) -> tuple[float, float, float, float, float]:
    tools = [clawcell.Tool(name="echo", execute=_echo, parameters={"type": "object"})]
    async with clawcell.CodeMode(tools, executor="v8") as mode:
        for _ in range(5):
            await mode.exec("return 1")
        samples: list[float] = []
        cpu = time.process_time()
        for _ in range(repeat):
            start = time.perf_counter()
            await mode.exec("return 1")
            samples.append((time.perf_counter() - start) * 1000)
        warm_cpu = (time.process_time() - cpu) / repeat * 1000
        echo: list[float] = []
        for _ in range(3):
            start = time.perf_counter()
            await mode.exec(SEQUENTIAL)
            echo.append((time.perf_counter() - start) * 1000)
        compute: list[tuple[float, float]] = []  # (wall, host CPU) of a ~100 ms cell
        for _ in range(3):
            start, cpu = time.perf_counter(), time.process_time()
            await mode.exec(COMPUTE)
            compute.append((time.perf_counter() - start, time.process_time() - cpu))
    return (
        statistics.median(samples),
        warm_cpu,
        statistics.median(echo),
        statistics.median(c[0] * 1000 for c in compute),
        statistics.median(c[1] * 1000 for c in compute),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--floods", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    python = [_python_flood(256) for _ in range(args.floods)]
    executor = V8Executor(spares=1)
    config = GuestConfig(memory_limit_bytes=16 * MIB, install_config='{"bindings":[]}')
    try:
        v8 = [_v8_flood(executor, config) for _ in range(args.floods)]
    finally:
        executor.close()
    sampled: dict[str, list[tuple[float, float, float, float, float]]] = {
        "every 2 ms": [],
        "never": [],
    }
    for index in range(args.rounds):
        order = list(sampled) if index % 2 == 0 else list(reversed(sampled))
        for name in order:
            v8_process.SAMPLE_S = 0.002 if name == "every 2 ms" else 3600.0  # pyright: ignore[reportAttributeAccessIssue]
            sampled[name].append(asyncio.run(_warm(args.repeat)))
    v8_process.SAMPLE_S = 0.002  # pyright: ignore[reportAttributeAccessIssue]
    rows: dict[str, tuple[float, float]] = {
        "fastest flood (Python, 2 GiB written), bound 256 MiB: overshoot MiB median / max": (
            statistics.median(python), max(python)),
        "V8 array-like flood past the guard, bound 144 MiB: overshoot MiB median / max": (
            statistics.median(v8), max(v8)),
    }  # fmt: skip
    for name, runs in sampled.items():
        rows[f"warm exec('return 1'): wall ms / host CPU ms, sampling {name}"] = (
            statistics.median(r[0] for r in runs),
            statistics.median(r[1] for r in runs),
        )
        rows[f"1,000 sequential echo calls: wall ms, sampling {name}"] = (
            statistics.median(r[2] for r in runs),
            0.0,
        )
        rows[f"1e8-iteration loop: wall ms / host CPU ms, sampling {name}"] = (
            statistics.median(r[3] for r in runs),
            statistics.median(r[4] for r in runs),
        )
    lines = ["| figure | a | b |", "| --- | ---: | ---: |"]
    lines += [f"| {name} | {a:.2f} | {b:.2f} |" for name, (a, b) in rows.items()]
    table = "\n".join(lines)
    print(table)
    meta = machine_meta(floods=args.floods, rounds=args.rounds, repeat=args.repeat)
    data = {"meta": meta, "python_overshoot_mib": python, "v8_overshoot_mib": v8, "rows": rows}
    write_results("v8_memory", data, table + "\n")


if __name__ == "__main__":
    main()
