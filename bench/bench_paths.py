"""The default path, its turns begun on the loop thread or handed off whole, against the loop
thread.

Issue 39's first item: the default path (`CodeMode()`) within 1.2× of the loop-thread path
(`CodeMode(guest_thread=False)`) on 1,000 sequential calls. One process, three ways
alternated round by round (the order reversed every other round), each on the same cells:

* `sliced`: the default path as shipped (each turn begins on the loop thread as a call
  future and moves to its guest thread only past a slice: `runtime/_crossing.py`);
* `handed off`: the default path with every turn crossed whole on the guest thread, as
  before stop 48 and as on Python 3.14 (`_crossing.FIBERS_USABLE` off for the process);
* `loop`: `CodeMode(guest_thread=False)`.

Cells: 1,000 sequential echo calls, 1,000 calls in batches of 128, and `return 1` (200 per
round: its first segment runs on the guest thread in both default ways). It prints wall and
process CPU per cell (medians) and the median of the per-round ratios to the loop thread, and
writes `bench/results/paths.{json,md}` with the load average. (Until stop 47 this was
`bench_hold.py`, whose last results are `hold_stop47.*`.)

    .venv/bin/python bench/bench_paths.py --rounds 15
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import clawcell
from clawcell.runtime import _crossing  # pyright: ignore[reportPrivateUsage]

RESULTS = Path(__file__).resolve().parent / "results"
SEQUENTIAL = "for (let i = 0; i < 1000; i++) await echo({ i }); return 1;"
BATCHES = (
    "for (let b = 0; b < 1000; b += 128) {\n  const n = Math.min(128, 1000 - b);\n"
    "  await Promise.all(Array.from({ length: n }, (_, i) => echo({ i: b + i })));\n}\n"
    "return 1;"
)
CELLS = {"1,000 sequential calls": (SEQUENTIAL, 1), "1,000 calls in batches": (BATCHES, 1),
         "return 1": ("return 1", 200)}  # fmt: skip
WAYS = ("sliced", "handed off", "loop")


async def _echo(params: dict[str, Any]) -> dict[str, Any]:
    return params


async def _measure(rounds: int) -> dict[str, dict[str, list[tuple[float, float]]]]:
    tools = [clawcell.Tool(name="echo", execute=_echo, parameters={"type": "object"})]
    limits = clawcell.Limits(timeout_ms=60_000)
    out: dict[str, dict[str, list[tuple[float, float]]]] = {}
    async with (
        clawcell.CodeMode(tools, limits=limits) as default,
        clawcell.CodeMode(tools, limits=limits, guest_thread=False) as loop,
    ):
        fibers = _crossing.FIBERS_USABLE
        for name, (code, repeat) in CELLS.items():
            for _ in range(2):
                await default.exec(code)
                await loop.exec(code)
            per_way = out.setdefault(name, {})
            for index in range(rounds):
                for way in WAYS if index % 2 == 0 else WAYS[::-1]:
                    _crossing.FIBERS_USABLE = fibers and way == "sliced"  # pyright: ignore[reportAttributeAccessIssue]
                    mode = loop if way == "loop" else default
                    wall, cpu = time.perf_counter(), time.process_time()
                    for _ in range(repeat):
                        envelope = await mode.exec(code)
                        assert envelope["status"] == "completed", envelope
                    cpu_ms = (time.process_time() - cpu) * 1000 / repeat
                    wall_ms = (time.perf_counter() - wall) * 1000 / repeat
                    per_way.setdefault(way, []).append((wall_ms, cpu_ms))
        _crossing.FIBERS_USABLE = fibers  # pyright: ignore[reportAttributeAccessIssue]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    loads = [os.getloadavg()[0]]
    out = asyncio.run(_measure(args.rounds))
    loads.append(os.getloadavg()[0])
    lines = [
        "| cell | way | wall ms | CPU ms | wall ÷ loop | CPU ÷ loop |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for name, per_way in out.items():
        loop = per_way["loop"]
        for way in WAYS:
            rows = per_way[way]
            wall = statistics.median(r[0] for r in rows)
            cpu = statistics.median(r[1] for r in rows)
            wall_ratio = statistics.median(r[0] / b[0] for r, b in zip(rows, loop, strict=True))
            cpu_ratio = statistics.median(r[1] / b[1] for r, b in zip(rows, loop, strict=True))
            lines.append(
                f"| {name} | {way} | {wall:.3f} | {cpu:.3f} | {wall_ratio:.3f} | {cpu_ratio:.3f} |"
            )
    table = "\n".join(lines)
    print(table)
    RESULTS.mkdir(exist_ok=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": loads,
            "rounds": args.rounds}  # fmt: skip
    (RESULTS / "paths.json").write_text(json.dumps({"meta": meta, "rounds": out}, indent=2))
    head = f"{meta['date']}, load {loads[0]:.1f} → {loads[1]:.1f}, {args.rounds} rounds\n\n"
    (RESULTS / "paths.md").write_text(head + table + "\n")


if __name__ == "__main__":
    main()
