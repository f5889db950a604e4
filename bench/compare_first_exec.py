"""A cold start's first `exec` and exit, of this tree against other clawcell source trees.

A script, not a test: prints a table and writes `bench/results/first_exec_comparison.{json,md}`.

    .venv/bin/python bench/compare_first_exec.py --tree base=/tmp/base/src --rounds 25

Each round starts one process per tree, in a shuffled order, running `_first_exec_child.py`
(the cold-start text of `bench_runtime.py`), which reports the minor page faults, CPU and
wall time of its first `exec`; medians, and the wall time paired per round against the first
tree given (else this one). With `--instructions` (valgrind installed) each tree also runs
twice under callgrind, with a dump at each phase: `import clawcell`, `CodeMode()`, the first
`exec`, closing, and the interpreter's exit (finalization), which no in-process clock sees.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _callgrind
from _ab import prepare, shuffled_rounds

RESULTS = Path(__file__).resolve().parent / "results"
CHILD = Path(__file__).resolve().parent / "_first_exec_child.py"
HERE = Path(__file__).resolve().parents[1] / "src"
PHASES = ("start", "import asyncio", "import clawcell", "CodeMode()", "first exec", "close")


def _one(source: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    run = subprocess.run(
        [sys.executable, str(CHILD)], check=True, capture_output=True, text=True, env=env
    )
    return json.loads(run.stdout)


def _phases(source: Path) -> dict[str, int]:
    """Instructions of each phase of one run under callgrind (the last dump is the exit's)."""
    with tempfile.TemporaryDirectory() as name:
        scratch = Path(name)
        _callgrind.finish("callgrind", _callgrind.start(source, CHILD, ["--marks"], scratch))
        dumps = sorted(scratch.glob("out.*"), key=lambda p: int(p.suffix[1:]))
        totals = [_summary(dump) for dump in [*dumps, scratch / "out"]]
    return dict(zip([*PHASES, "exit"], totals, strict=True))


def _summary(dump: Path) -> int:
    with dump.open() as lines:
        return next(int(line.split()[1]) for line in lines if line.startswith("summary:"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tree", action="append", default=[], help="name=another tree's src/")
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--instructions", action="store_true", help="also count with callgrind")
    args = parser.parse_args()
    # The first tree is the one the others are paired with: the given ones first.
    trees = {n: Path(p).resolve() for n, p in (t.split("=", 1) for t in args.tree)}
    trees["this tree"] = HERE
    prepare(trees, _one)
    loads = [round(os.getloadavg()[0], 2)]
    samples = shuffled_rounds(trees, args.rounds, _one)
    loads.append(round(os.getloadavg()[0], 2))
    counts = {n: _best_phases(s) for n, s in trees.items()} if args.instructions else {}
    _write(_rows(samples, counts), args, loads)


def _best_phases(source: Path) -> dict[str, int]:
    """The smaller count of two runs, phase by phase (the first may still warm a cache)."""
    runs = [_phases(source) for _ in range(2)]
    return {phase: min(run[phase] for run in runs) for phase in runs[0]}


def _rows(
    samples: dict[str, list[dict[str, float]]], counts: dict[str, dict[str, int]]
) -> list[dict[str, Any]]:
    first = next(iter(samples))
    rows: list[dict[str, Any]] = []
    for name, values in samples.items():
        pairs = zip(values, samples[first], strict=True)
        row: dict[str, Any] = {
            "tree": name,
            "faults": statistics.median(v["faults"] for v in values),
            "cpu_ms": round(statistics.median(v["cpu_ms"] for v in values), 2),
            "wall_ms": round(statistics.median(v["wall_ms"] for v in values), 2),
            "paired_wall": round(
                statistics.median(a["wall_ms"] / b["wall_ms"] for a, b in pairs), 3
            ),
        }
        row.update(counts.get(name, {}))
        rows.append(row)
    return rows


def _write(rows: list[dict[str, Any]], args: argparse.Namespace, loads: list[float]) -> None:
    lines = [
        "| tree | faults | CPU ms | wall ms | paired wall | exec instructions "
        "| exit instructions |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        counts = [f"{row[k]:,}" if k in row else "" for k in ("first exec", "exit")]
        cells = [f"{row['faults']:.0f}", f"{row['cpu_ms']}", f"{row['wall_ms']}"]
        cells += [f"{row['paired_wall']}", *counts]
        lines.append(f"| {row['tree']} | " + " | ".join(cells) + " |")
    table = "\n".join(lines) + (
        f"\n\nThe first exec, medians of {args.rounds} alternated rounds (load average "
        f"{loads[0]} → {loads[1]}); paired: the wall time over the first tree's, per round\n"
    )
    meta = {"rounds": args.rounds, "date": time.strftime("%F %R"), "load_average": loads}
    RESULTS.mkdir(exist_ok=True)
    payload = {"meta": meta, "rows": rows}
    (RESULTS / "first_exec_comparison.json").write_text(json.dumps(payload, indent=2) + "\n")
    (RESULTS / "first_exec_comparison.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
