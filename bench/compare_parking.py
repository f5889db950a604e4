"""Parking (`bench_parking.py`'s park and resume) of this tree against another source tree.

A script, not a test. Each round runs one fresh process per tree, in a shuffled order, that
parks and resumes `--repeat` cells with the in-memory store and with a `SQLiteStore`
(after ten to warm up) and reports per step the median wall time and the median CPU time
of the whole process (`time.process_time`, every thread: less sensitive than wall time to
the other processes of a shared machine, but blind to waits for the disk). Prints the
median of the per-round medians for both trees, their ratio and the median of the
per-round ratios (paired), and writes `bench/results/parking_comparison.{json,md}`.

    .venv/bin/python bench/compare_parking.py --baseline /path/to/other/src --rounds 8
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
CHILD = """
import asyncio, json, statistics, tempfile, time
from pathlib import Path
from clawcell import CodeMode, Limits
from clawcell.store import SQLiteStore

CELL = "await yield_control('bench');\\nreturn 1;"

async def steps(mode, repeat):
    samples = {{"park": [], "resume": [], "park_cpu": [], "resume_cpu": []}}
    for index in range(10 + repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        parked = await mode.exec(CELL)
        mid_wall, mid_cpu = time.perf_counter(), time.process_time()
        done = await mode.wait(parked["runId"])
        end_wall, end_cpu = time.perf_counter(), time.process_time()
        assert done["status"] == "completed", done
        if index >= 10:
            samples["park"].append((mid_wall - wall) * 1000)
            samples["resume"].append((end_wall - mid_wall) * 1000)
            samples["park_cpu"].append((mid_cpu - cpu) * 1000)
            samples["resume_cpu"].append((end_cpu - mid_cpu) * 1000)
    return samples

async def main(directory):
    out = {{}}
    for kind in ("memory", "sqlite"):
        store = SQLiteStore(directory / "p.sqlite") if kind == "sqlite" else None
        async with CodeMode(limits=Limits(timeout_ms=60_000), store=store, session_id="b") as mode:
            for step, values in (await steps(mode, {repeat})).items():
                out[f"{{step}}_{{kind}}"] = statistics.median(values)
        if store is not None:
            await store.close()
    return out

with tempfile.TemporaryDirectory() as d:
    print(json.dumps(asyncio.run(main(Path(d)))))
"""


def _one(source: Path, repeat: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(repeat=repeat)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="another tree's src/")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve(), "this tree": HERE}
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        order = list(trees)
        random.shuffle(order)
        for name in order:
            rounds[name].append(_one(trees[name], args.repeat))
    _write(_rows(rounds), args)


def _rows(rounds: dict[str, list[dict[str, float]]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for figure in rounds["this tree"][0]:
        base = statistics.median(r[figure] for r in rounds["baseline"])
        this = statistics.median(r[figure] for r in rounds["this tree"])
        paired = statistics.median(
            t[figure] / b[figure]
            for t, b in zip(rounds["this tree"], rounds["baseline"], strict=True)
            if b[figure] > 0
        )
        row = {"figure": figure, "baseline_ms": round(base, 3), "this_ms": round(this, 3)}
        rows.append({**row, "ratio": round(this / base, 3), "paired_ratio": round(paired, 3)})
    return rows


def _write(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    lines = [
        "| figure | baseline (ms) | this tree (ms) | ratio | paired ratio |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['figure']} | {r['baseline_ms']:.3f} | {r['this_ms']:.3f} | {r['ratio']:.3f} "
        f"| {r['paired_ratio']:.3f} |"
        for r in rows
    ]
    table = "\n".join(lines)
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "rounds": args.rounds,
        "repeat": args.repeat,
        "load_average": os.getloadavg()[0],
    }
    payload = {"meta": meta, "baseline": str(args.baseline), "rows": rows}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "parking_comparison.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / "parking_comparison.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
