"""The guest's cost per tool call: this tree against another source tree, measured alternately.

A script, not a test (issue 39, branch guest45). `bench_runtime.py`'s two call-heavy cells, one
of 1,000 sequential `await echo({ i })` calls and one of 1,000 calls in `Promise.all` batches of
128, on both paths (the default guest thread and `guest_thread=False`), in a fresh process per
tree per round, the trees in a shuffled order each round. Per figure: the median wall time of a
cell, and the process CPU (every thread, `time.process_time`) over the timed cells per cell,
which for 1,000 calls reads in ms as µs per call. Prints the median of the per-round medians
for both trees with their ratio and the median per-round ratio (paired), and writes
`bench/results/guest_calls_comparison.{json,md}` with the load average.

    .venv/bin/python bench/compare_guest_calls.py --baseline /path/to/other/src --rounds 5

Wall times on a loaded machine are the scheduler's; the CPU rows, and the instructions
`compare_instructions.py --figures calls,calls_l,call_batches,call_batches_l` counts, are the
ones to read there.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _ab import alternate, paired_rows, run_child, write_comparison

BENCH = Path(__file__).resolve().parent
CHILD = """
import asyncio, json, statistics, time
import clawcell, bench_runtime

async def main(repeat):
    out = {{}}
    cells = (("1,000 sequential echo calls", bench_runtime.SEQUENTIAL),
             ("1,000 echo calls in batches of 128", bench_runtime.PARALLEL))
    for guest_thread, path in ((True, "guest thread"), (False, "loop thread")):
        async with clawcell.CodeMode(bench_runtime._tools(), guest_thread=guest_thread) as mode:
            for name, code in cells:
                await mode.exec(code)
                cpu = time.process_time()
                walls = await bench_runtime._timed(mode, code, repeat)
                used = (time.process_time() - cpu) * 1000 / repeat
                out[f"{{name}} [{{path}}]: wall per cell"] = statistics.median(walls)
                out[f"{{name}} [{{path}}]: CPU per cell (= µs per call)"] = used
    return out

print(json.dumps(asyncio.run(main({repeat}))))
"""


def _one(source: Path, repeat: int) -> dict[str, float]:
    return run_child(CHILD.format(repeat=repeat), source, BENCH)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="another tree's src/")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=8)
    parser.add_argument("--stem", default="guest_calls_comparison")
    args = parser.parse_args()
    rounds = alternate(args.baseline, args.rounds, lambda source: _one(source, args.repeat))
    write_comparison(
        args.stem, paired_rows(rounds), args.baseline, rounds=args.rounds, repeat=args.repeat
    )


if __name__ == "__main__":
    main()
