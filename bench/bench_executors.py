"""The two executors side by side: QuickJS (the default) and V8 (opt-in, Deno workers).

A script, not a test: for each executor it measures warm `exec("return 1")`, the 1e7-iteration
loop, 1,000 sequential echo calls, 1,000 echo calls in `Promise.all` batches of 128, and the
busy-loop overshoot past a 200 ms budget (on V8 that includes replacing the killed worker's
place with a warm spare). The executors are measured in alternating rounds in one process, so
drift on a shared machine lands on both; the figure is the median of the per-round medians.
Prints a table and writes `bench/results/executors.{json,md}`.

    .venv/bin/python bench/bench_executors.py [--rounds 3] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import clawcell
from bench_runtime import LOOP, PARALLEL, SEQUENTIAL
from clawcell.runtime import executor_named

RESULTS = Path(__file__).resolve().parent / "results"
EXECUTORS = ("quickjs", "v8")
ORIGINAL_NODE = {  # the original's node executor on this machine (issue 30's table)
    "warm exec('return 1')": 5.74,
    "1,000 sequential echo calls": 1668.0,
    "1,000 echo calls, Promise.all batches of 128": 373.0,
    "1e7-iteration loop": 23.3,
}
TARGETS = {  # issue 30: V8 targets
    "warm exec('return 1')": 2.0,
    "1e7-iteration loop": 2 * 23.3,
    "1,000 sequential echo calls": 1668.0,
    "1,000 echo calls, Promise.all batches of 128": 373.0,
}


async def _echo(params: dict[str, Any]) -> dict[str, Any]:
    return params


def _tools() -> list[clawcell.Tool]:
    return [clawcell.Tool(name="echo", execute=_echo, parameters={"type": "object"})]


async def _timed(mode: clawcell.CodeMode, code: str, repeat: int) -> float:
    samples: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        envelope = await mode.exec(code)
        samples.append((time.perf_counter() - start) * 1000)
        if envelope["status"] == "failed" and envelope["code"] != "timeout":
            raise RuntimeError(f"benchmark cell failed: {envelope}")
    return statistics.median(samples)


async def _round(executor: str, repeat: int) -> dict[str, float]:
    out: dict[str, float] = {}
    async with clawcell.CodeMode(_tools(), executor=executor_named(executor)) as mode:
        for _ in range(5):
            await mode.exec("return 1")
        out["warm exec('return 1')"] = await _timed(mode, "return 1", repeat * 20)
        out["1e7-iteration loop"] = await _timed(mode, LOOP, repeat)
        out["1,000 sequential echo calls"] = await _timed(mode, SEQUENTIAL, repeat)
        out["1,000 echo calls, Promise.all batches of 128"] = await _timed(mode, PARALLEL, repeat)
    limits = clawcell.Limits(timeout_ms=200)
    async with clawcell.CodeMode(
        _tools(), limits=limits, executor=executor_named(executor)
    ) as mode:
        await mode.exec("return 1")
        overshoot = await _timed(mode, "while (true) {}", max(2, repeat // 2))
        out["busy loop: overshoot past timeoutMs=200"] = overshoot - 200
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in EXECUTORS}
    for index in range(args.rounds):
        order = EXECUTORS if index % 2 == 0 else tuple(reversed(EXECUTORS))
        for name in order:
            rounds[name].append(asyncio.run(_round(name, args.repeat)))
    rows: list[dict[str, Any]] = []
    for figure in rounds["quickjs"][0]:
        quickjs = statistics.median(r[figure] for r in rounds["quickjs"])
        v8 = statistics.median(r[figure] for r in rounds["v8"])
        target = TARGETS.get(figure)
        rows.append(
            {
                "figure": figure,
                "quickjs_ms": round(quickjs, 3),
                "v8_ms": round(v8, 3),
                "original_node_ms": ORIGINAL_NODE.get(figure),
                "v8_target_ms": target,
                "v8_meets_target": None if target is None else v8 <= target,
            }
        )
    _write(rows, args)


def _write(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    lines = [
        "| figure | QuickJS (ms) | V8 (ms) | original, node (ms) | V8 target (ms) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        node = "–" if r["original_node_ms"] is None else f"{r['original_node_ms']:.2f}"
        target = "–" if r["v8_target_ms"] is None else f"≤ {r['v8_target_ms']:.1f}"
        lines.append(
            f"| {r['figure']} | {r['quickjs_ms']:.2f} | {r['v8_ms']:.2f} | {node} | {target} |"
        )
    table = "\n".join(lines)
    meta = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "rounds": args.rounds,
        "repeat": args.repeat,
    }
    RESULTS.mkdir(exist_ok=True)
    payload = {"meta": meta, "rows": rows}
    (RESULTS / "executors.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / "executors.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
