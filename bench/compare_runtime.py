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
from pathlib import Path

from _ab import alternate, paired_rows, run_child, write_comparison

BENCH = Path(__file__).resolve().parent
CHILD = (
    "import asyncio, json, statistics, bench_runtime\n"
    "samples = asyncio.run(bench_runtime._warm({repeat}))\n"
    "print(json.dumps({{k: statistics.median(v) for k, v in samples.items()}}))\n"
)


def _one(source: Path, repeat: int) -> dict[str, float]:
    return run_child(CHILD.format(repeat=repeat), source, BENCH)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="another tree's src/")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rounds = alternate(args.baseline, args.rounds, lambda source: _one(source, args.repeat))
    write_comparison(
        "runtime_comparison",
        paired_rows(rounds),
        args.baseline,
        rounds=args.rounds,
        repeat=args.repeat,
    )


if __name__ == "__main__":
    main()
