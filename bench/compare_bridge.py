"""The guest-thread bridge against the loop thread, in this tree and another, alternately.

A script, not a test. Each round runs one fresh process per variant (in a shuffled order):
the baseline tree, this tree, and this tree with every turn handed to the guest thread whole
(`runtime/_crossing.FIBERS_USABLE` off: the default path before stop 48; until stop 47 this
variant was "not holding", the hold a later stop removed).
A process times a cell of 1,000 sequential echo calls on the guest thread and on the loop
thread, alternating the two modes cell by cell, and counts the process's context switches
(`getrusage`, every thread) and CPU time per call in each mode; one more guest-thread cell,
not timed, counts the segments whose guest thread ran on the CPU the loop thread handed them
over from (`sched_getcpu` on both sides). Prints per variant the
median over rounds of each figure, the guest/loop ratio paired cell by cell, and each
variant against the baseline paired round by round, with the load average seen at each
round; writes `bench/results/bridge_comparison.{json,md}`.

    .venv/bin/python bench/compare_bridge.py --baseline /path/to/other/src --rounds 6
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

BENCH = Path(__file__).resolve().parent
HERE = BENCH.parent / "src"
RESULTS = BENCH / "results"
CALLS = 1000
CHILD = """
import asyncio, ctypes, json, resource, statistics, time
import clawcell
import clawcell._runs._host as host
import clawcell.runtime._guest as guest_module
import clawcell.runtime._worker as worker

if {handed_off}:
    import clawcell.runtime._crossing as crossing
    crossing.FIBERS_USABLE = False

SEQUENTIAL = "for (let i = 0; i < {calls}; i++) await echo({{ i }}); return 1;"

async def echo(params):
    return params

def switches():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_nvcsw + usage.ru_nivcsw

async def timed(mode):
    switched, cpu, start = switches(), time.process_time(), time.perf_counter()
    envelope = await mode.exec(SEQUENTIAL)
    wall = (time.perf_counter() - start) * 1000
    assert envelope["status"] == "completed", envelope
    return wall, (time.process_time() - cpu) * 1e6 / {calls}, (switches() - switched) / {calls}

def count_same_cpu():
    # For one more cell, not timed: on how many segments did the guest thread run on the
    # CPU the loop thread was on when it handed the segment over?
    cpu, seen, counts = ctypes.PyDLL(None).sched_getcpu, [], [0, 0]
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
    return counts

async def main():
    tools = [clawcell.Tool(name="echo", execute=echo, parameters={{"type": "object"}})]
    out = {{"guest": [], "loop": []}}
    async with clawcell.CodeMode(tools) as guest, clawcell.CodeMode(
        tools, guest_thread=False
    ) as loop:
        modes = {{"guest": guest, "loop": loop}}
        for mode in modes.values():
            await mode.exec(SEQUENTIAL)
        for cell in range({cells}):
            order = ["guest", "loop"] if cell % 2 == 0 else ["loop", "guest"]
            for name in order:
                out[name].append(await timed(modes[name]))
    counts = count_same_cpu()
    async with clawcell.CodeMode(tools) as counted:
        await counted.exec(SEQUENTIAL)
    ratios = [g[0] / l[0] for g, l in zip(out["guest"], out["loop"])]
    figures = {{"guest/loop (paired)": statistics.median(ratios)}}
    figures["segments on the loop's CPU (share)"] = counts[0] / max(counts[1], 1)
    for name, samples in out.items():
        figures[f"{{name}} ms"] = statistics.median(s[0] for s in samples)
        figures[f"{{name}} CPU us/call"] = statistics.median(s[1] for s in samples)
        figures[f"{{name}} switches/call"] = statistics.median(s[2] for s in samples)
    print(json.dumps(figures))

asyncio.run(main())
"""


HANDED_OFF = "this tree, handed off"


def _one(name: str, source: Path, cells: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    code = CHILD.format(calls=CALLS, cells=cells, handed_off=name == HANDED_OFF)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="another tree's src/")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--cells", type=int, default=6, help="cells per mode per process")
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve(), "this tree": HERE, HANDED_OFF: HERE}
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    loads: list[float] = []
    for _ in range(args.rounds):
        order = list(trees)
        random.shuffle(order)
        for name in order:
            rounds[name].append(_one(name, trees[name], args.cells))
        loads.append(os.getloadavg()[0])
    _write(_rows(rounds), args, loads)


def _rows(rounds: dict[str, list[dict[str, float]]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    base_rounds = rounds["baseline"]
    for figure in base_rounds[0]:
        row: dict[str, Any] = {"figure": figure}
        for name, runs in rounds.items():
            row[name] = statistics.median(r[figure] for r in runs)
            if name != "baseline":
                pairs = [
                    t[figure] / b[figure]
                    for t, b in zip(runs, base_rounds, strict=True)
                    if b[figure] > 0
                ]  # none when the baseline's figure is 0 in every round (a share, say)
                paired = round(statistics.median(pairs), 3) if pairs else None
                row[f"{name} / baseline, paired"] = paired
        rows.append(row)
    return rows


def _write(rows: list[dict[str, Any]], args: argparse.Namespace, loads: list[float]) -> None:
    columns = [key for key in rows[0] if key != "figure"]
    lines = [
        "| figure | " + " | ".join(columns) + " |",
        "| --- |" + " ---: |" * len(columns),
    ]
    lines += [
        "| "
        + " | ".join([r["figure"]] + [("–" if r[c] is None else f"{r[c]:.3f}") for c in columns])
        + " |"
        for r in rows
    ]
    lines.append(f"\nLoad average (1 min) after each round: {', '.join(f'{x:.1f}' for x in loads)}")
    table = "\n".join(lines)
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "rounds": args.rounds,
        "cells": args.cells,
        "calls": CALLS,
        "load_after_each_round": loads,
    }
    RESULTS.mkdir(exist_ok=True)
    payload = {"meta": meta, "baseline": str(args.baseline), "rows": rows}
    (RESULTS / "bridge_comparison.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / "bridge_comparison.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
