"""What the scripts that measure this tree against another source tree share: a child process
per tree per round in a shuffled order (so drift on a shared machine lands on both), the
median of each figure's per-round medians, the median of the per-round ratios (paired), and
the table they write. Not a benchmark itself.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from _common import RESULTS

HERE = Path(__file__).resolve().parents[1] / "src"
Rounds = dict[str, list[dict[str, float]]]
_Sample = TypeVar("_Sample")


def run_child(code: str, source: Path, *paths: Path) -> dict[str, float]:
    """Runs `code` in a fresh Python whose `clawcell` is the one in `source` (then `paths`)
    and returns the JSON object its last line printed."""
    path = os.pathsep.join(str(p) for p in (source, *paths))
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": path},
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def alternate(baseline: Path, rounds: int, one: Callable[[Path], dict[str, float]]) -> Rounds:
    """`one(source)` for the baseline tree and this one, `rounds` times, in a random order each
    round; the figures per tree, a dict per round."""
    return shuffled_rounds({"baseline": baseline.resolve(), "this tree": HERE}, rounds, one)


def shuffled_rounds(
    trees: Mapping[str, Path], rounds: int, one: Callable[[Path], _Sample]
) -> dict[str, list[_Sample]]:
    """`one(source)` for every tree, `rounds` times, in a random order each round: the samples
    per tree, in round order (so that round `i` of two trees can be paired)."""
    samples: dict[str, list[_Sample]] = {name: [] for name in trees}
    for _ in range(rounds):
        order = list(trees)
        random.shuffle(order)
        for name in order:
            samples[name].append(one(trees[name]))
    return samples


def prepare(trees: Mapping[str, Path], one: Callable[[Path], object]) -> None:
    """Byte-compiles every tree, as installed packages are (see bench_runtime.py), and runs
    `one` once in each, untimed: it fills the engine cache and the stored guest image."""
    for source in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(source)], check=True)
        one(source)


def paired_rows(rounds: Rounds) -> list[dict[str, Any]]:
    """Per figure: both trees' medians, their ratio and the median per-round ratio."""
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


def write_comparison(stem: str, rows: list[dict[str, Any]], baseline: Path, **meta: Any) -> None:
    """Prints the table and writes `results/<stem>.{json,md}`, with the date, load and `meta`."""
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
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), **meta, "load_average": os.getloadavg()[0]}
    payload = {"meta": meta, "baseline": str(baseline), "rows": rows}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / f"{stem}.md").write_text(table + "\n")
    print(table)
