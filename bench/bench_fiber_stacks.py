"""Resident memory of pooled guests after deep cells, and the watchdog's wake rate.

Since 449ae33 a turn runs as a wasmtime call future, on a stack of the store's own that the
store keeps between calls (`runtime/_wasm/_stacks.py`). This script measures, each in a fresh
process, for this tree and for any other trees given with `--tree` (a `git archive` of an
older commit's `src`, with `src/clawcell/runtime/vendor/acorn.js` copied in), alternated
round by round:

* `RSS growth, 64 guests`: the process's resident memory after 64 concurrent cells (64
  guests, then idle in the pool), before and after one more cell each that stringifies 7,000
  nested arrays (native recursion down most of the 2 MiB wasm stack, without a trap);
* `watchdog wakes/s`: how often the watchdog thread chose its next instant while one cell
  made 1,000 sequential tool calls (each turn watches its slice's end).

It prints the medians and writes `bench/results/fiber_stacks.{json,md}` with the load average.

    .venv/bin/python bench/bench_fiber_stacks.py --rounds 3 --tree before=/tmp/old/src
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import machine_meta, write_results

HERE = Path(__file__).resolve().parent
GUESTS = 64
DEPTH = 7000

CHILD = r"""
import asyncio, gc, json, sys, time
from clawcell import CodeMode, Limits, Tool
from clawcell.runtime._wasm import _backstop

wakes = [0]
snapshot = _backstop.Watchdog._snapshot

def counted(self):
    wakes[0] += 1
    return snapshot(self)

_backstop.Watchdog._snapshot = counted

def rss_mib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")

async def echo(params):
    return params

async def main():
    gate = asyncio.Event()
    holding = [0]

    async def hold(params):
        holding[0] += 1
        await gate.wait()
        return params

    tools = [
        Tool(name="echo", execute=echo, parameters={"type": "object"}),
        Tool(name="hold", execute=hold, parameters={"type": "object"}),
    ]
    async with CodeMode(tools, limits=Limits(timeout_ms=60_000)) as mode:
        async def wave(body):
            gate.clear()
            holding[0] = 0
            cells = [asyncio.ensure_future(mode.exec(body)) for _ in range(GUESTS)]
            while holding[0] < GUESTS:  # every cell holds a guest of its own
                await asyncio.sleep(0.01)
            gate.set()
            return await asyncio.gather(*cells)

        await wave("await hold({}); await echo({}); return 1")
        gc.collect()
        before = rss_mib()
        deep = (
            "await hold({}); await echo({});\n"
            f"let o = []; for (let i = 0; i < {DEPTH}; i++) o = [o];\n"
            "return JSON.stringify(o).length;"
        )
        ran = await wave(deep)
        assert all(r["status"] == "completed" for r in ran), ran[0]
        gc.collect()
        after = rss_mib()
        start, woke = time.perf_counter(), wakes[0]
        done = await mode.exec("for (let i = 0; i < 1000; i++) await echo({ i }); return 1;")
        took = time.perf_counter() - start
        assert done["status"] == "completed", done
        rate = (wakes[0] - woke) / took
        print(json.dumps({"rss_growth_mib": after - before, "wakes_per_s": rate}))

GUESTS, DEPTH = int(sys.argv[1]), int(sys.argv[2])
asyncio.run(main())
"""


def measure(src: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(GUESTS), str(DEPTH)],
        env=env,
        cwd="/",
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description="RSS of pooled guests after deep cells")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[], help="name=path/to/src")
    args = parser.parse_args()
    trees = {"this tree": str(HERE.parent / "src")}
    for item in args.tree:
        name, _, path = item.partition("=")
        trees[name] = path
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, src in trees.items():
            runs[name].append(measure(src))
    lines = [
        f"| tree | RSS growth, {GUESTS} guests (MiB) | per guest (KiB) | watchdog wakes/s |",
        "| --- | ---: | ---: | ---: |",
    ]
    data: dict[str, object] = {"meta": machine_meta(rounds=args.rounds, trees=trees)}
    for name, results in runs.items():
        growth = statistics.median(r["rss_growth_mib"] for r in results)
        wakes = statistics.median(r["wakes_per_s"] for r in results)
        data[name] = {"rss_growth_mib": growth, "wakes_per_s": wakes, "rounds": results}
        lines.append(f"| {name} | {growth:.1f} | {growth / GUESTS * 1024:.0f} | {wakes:.0f} |")
    load = os.getloadavg()[0]
    table = "\n".join(lines)
    print(table)
    print(f"load average {load:.2f}, {args.rounds} alternated rounds, medians")
    write_results(
        "fiber_stacks",
        data,
        f"{table}\n\nLoad average {load:.2f}; {args.rounds} alternated rounds; medians.\n",
    )


if __name__ == "__main__":
    main()
