"""Guest thread against loop thread in the process layouts of `bench_runtime.py` and
`compare_bridge.py`, to tell what their different guest/loop ratios come from.

A script, not a test. Both layouts run the same cell (1,000 sequential `await echo({ i })`) and
tool. `runtime` (as `bench_runtime.py`): one `CodeMode` at a time, 50 warm `exec("return 1")`,
then all guest-thread cells, then all loop-thread cells. `bridge` (as `compare_bridge.py`): both
`CodeMode`s open, cells alternating guest/loop. `--pin same|split` pins the loop thread and the
guest threads to one CPU or to two (default: left to the scheduler), the two placements the
scheduler settles into. Each round runs one fresh process per layout, in a shuffled order;
printed per layout are the medians over rounds of each figure: wall ms and process CPU µs per
call, context switches per call, the share of segments run on the CPU the loop thread handed
them over from, and guest/loop paired cell by cell. Writes
`bench/results/layouts_comparison.{json,md}` with the load average after each round.

    .venv/bin/python bench/compare_layouts.py --rounds 5 [--pin same|split]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
CHILD = r"""
import asyncio, ctypes, json, os, resource, statistics, sys, threading, time
import clawcell
import clawcell._runs._host as host
import clawcell.runtime._guest as guest_module

LAYOUT, CELLS, PIN = sys.argv[1], int(sys.argv[2]), sys.argv[3]
SEQUENTIAL = "for (let i = 0; i < 1000; i++) await echo({ i }); return 1;"
cpu = ctypes.PyDLL(None).sched_getcpu
seen, counts = [], [0, 0]
segment, runner = guest_module.Guest.run_segment, host.run_on_guest_thread

def run_segment(self, *args):
    seen.append(cpu())
    return segment(self, *args)

async def run(function, *args, **kwargs):
    submitted = cpu()
    result = await runner(function, *args, **kwargs)
    if seen:
        counts[0] += seen.pop() == submitted
        counts[1] += 1
    return result

guest_module.Guest.run_segment, host.run_on_guest_thread = run_segment, run

def pin():
    if PIN == "none":
        return
    cpus = sorted(os.sched_getaffinity(0))
    loop_cpu, guest_cpu = cpus[0], cpus[0] if PIN == "same" else cpus[-1]
    os.sched_setaffinity(threading.get_native_id(), {loop_cpu})
    for thread in threading.enumerate():
        if thread.name.startswith("clawcell-guest-") and thread.native_id:
            os.sched_setaffinity(thread.native_id, {guest_cpu})

async def echo(params):
    return params

def switches():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_nvcsw + usage.ru_nivcsw

async def timed(mode):
    counts[:] = [0, 0]
    switched, used, start = switches(), time.process_time(), time.perf_counter()
    envelope = await mode.exec(SEQUENTIAL)
    assert envelope["status"] == "completed", envelope
    return {
        "wall ms": (time.perf_counter() - start) * 1000,
        "CPU us/call": (time.process_time() - used) * 1000,
        "switches/call": (switches() - switched) / 1000,
        "on the loop's CPU": counts[0] / max(counts[1], 1),
    }

def tools():
    return [clawcell.Tool(name="echo", execute=echo, parameters={"type": "object"})]

LIMITS = clawcell.Limits(timeout_ms=300_000)  # a loaded machine must not fail the cell

async def runtime_layout():
    out = {}
    for guest_thread in (True, False):
        async with clawcell.CodeMode(tools(), guest_thread=guest_thread, limits=LIMITS) as mode:
            for _ in range(50):
                await mode.exec("return 1")
            pin()
            out[guest_thread] = [await timed(mode) for _ in range(CELLS)]
    return out

async def bridge_layout():
    out = {True: [], False: []}
    async with clawcell.CodeMode(tools(), limits=LIMITS) as guest, clawcell.CodeMode(
        tools(), guest_thread=False, limits=LIMITS
    ) as loop:
        modes = {True: guest, False: loop}
        for mode in modes.values():
            await mode.exec(SEQUENTIAL)
        pin()
        for cell in range(CELLS):
            for guest_thread in ((True, False) if cell % 2 == 0 else (False, True)):
                out[guest_thread].append(await timed(modes[guest_thread]))
    return out

out = asyncio.run(runtime_layout() if LAYOUT == "runtime" else bridge_layout())
figures = {}
for guest_thread, samples in out.items():
    name = "guest" if guest_thread else "loop"
    for key in samples[0]:
        figures[f"{name} {key}"] = statistics.median(s[key] for s in samples)
figures["guest/loop wall, paired"] = statistics.median(
    g["wall ms"] / l["wall ms"] for g, l in zip(out[True], out[False])
)
figures["guest/loop CPU, paired"] = statistics.median(
    g["CPU us/call"] / l["CPU us/call"] for g, l in zip(out[True], out[False])
)
del figures["loop on the loop's CPU"]
print(json.dumps(figures))
"""
LAYOUTS = ("runtime", "bridge")


def _one(layout: str, cells: int, pin: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, layout, str(cells), pin],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"the {layout} layout failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cells", type=int, default=6, help="cells per mode per process")
    parser.add_argument("--pin", choices=("none", "same", "split"), default="none")
    args = parser.parse_args()
    rounds: dict[str, list[dict[str, float]]] = {layout: [] for layout in LAYOUTS}
    loads: list[float] = []
    for _ in range(args.rounds):
        for layout in random.sample(LAYOUTS, len(LAYOUTS)):
            rounds[layout].append(_one(layout, args.cells, args.pin))
        loads.append(round(os.getloadavg()[0], 2))
    figures = list(rounds["runtime"][0])
    rows: list[dict[str, Any]] = [
        {"figure": f, **{x: statistics.median(r[f] for r in rounds[x]) for x in LAYOUTS}}
        for f in figures
    ]
    lines = ["| figure | layout of bench_runtime.py | layout of compare_bridge.py |"]
    lines.append("| --- | ---: | ---: |")
    lines += [f"| {r['figure']} | {r['runtime']:.3f} | {r['bridge']:.3f} |" for r in rows]
    lines.append(f"\npin: {args.pin}; load average (1 min) after each round: {loads}")
    table = "\n".join(lines)
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "rounds": args.rounds,
        "cells": args.cells,
        "pin": args.pin,
        "load_after_each_round": loads,
    }
    RESULTS.mkdir(exist_ok=True)
    stem = "layouts_comparison" if args.pin == "none" else f"layouts_comparison_{args.pin}"
    payload = {"meta": meta, "rows": rows, "rounds": rounds}
    (RESULTS / f"{stem}.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / f"{stem}.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
