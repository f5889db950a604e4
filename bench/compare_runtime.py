"""The runtime bench of this tree against another source tree, measured alternately.

A script, not a test. `bench/bench_runtime.py`'s warm figures (warm exec, sequential and batched
echo calls on both threads, the 1e7 loop, the busy-loop overshoot) run in a fresh process per
tree per round, the two trees in a shuffled order each round, so drift on a shared machine
lands on both. Prints the median of each figure's per-round medians for both trees and their
ratio, and writes `bench/results/runtime_comparison.{json,md}`.

    .venv/bin/python bench/compare_runtime.py --baseline /path/to/other/src --rounds 5
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
CHILD = (
    "import asyncio, json, statistics, bench_runtime\n"
    "samples = asyncio.run(bench_runtime._warm({repeat}))\n"
    "print(json.dumps({{k: statistics.median(v) for k, v in samples.items()}}))\n"
)


def _one(source: Path, repeat: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": f"{source}{os.pathsep}{BENCH}"}
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
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve(), "this tree": HERE}
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        order = list(trees)
        random.shuffle(order)
        for name in order:
            rounds[name].append(_one(trees[name], args.repeat))
    rows = _rows(rounds)
    _write(rows, args)


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
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "rounds": args.rounds, "repeat": args.repeat}
    RESULTS.mkdir(exist_ok=True)
    payload = {"meta": meta, "baseline": str(args.baseline), "rows": rows}
    (RESULTS / "runtime_comparison.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / "runtime_comparison.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
