"""The same Python, run on the loop thread or on a guest thread right after a hand-off.

Why `runtime/_crossing.py` exists: a turn of a cell on the default path used to run all of
its Python (stage the batch, arm the backstop, read and parse the step report) on the guest
thread it had just woken. This script times a stand-in for that Python (split a step report,
parse its JSON header, build the result tuple; `WORK_REPEAT` times) four ways, alternated
round by round in one process:

* `inline`: on the loop thread, no hand-off (the work's own cost);
* `hand-off`: a guest-thread hand-off of a job that does nothing (the hand-off's own cost);
* `work on guest thread`: the hand-off of a job that does the work;
* `work on loop thread after hand-off`: the empty hand-off, then the work on the loop thread.

It prints process CPU per round trip (both threads), medians over rounds, and writes
`bench/results/woken_python.{json,md}` with the load average.

    .venv/bin/python bench/bench_woken_python.py --rounds 9
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from clawcell.runtime import run_on_guest_thread

RESULTS = Path(__file__).resolve().parent / "results"
REPORT = '{"s":0,"q":0,"r":[["bridge:callValue:12","callValue"]]}\n["echo",{"i":12}]'
WORK_REPEAT = 6


def work(_: int) -> tuple[Any, ...]:
    """About what a turn's Python does with a step report."""
    result: tuple[Any, ...] = ()
    for _ in range(WORK_REPEAT):
        lines = REPORT.split("\n")
        raw = json.loads(lines[0])
        requests = raw["r"]
        for request, args in zip(requests, lines[1:], strict=False):
            request.append(args)
        result = (raw.get("o", []), requests, raw.get("c", []), raw["s"], raw["q"])
    return result


async def _inline(i: int) -> None:
    work(i)


async def _hand_off(i: int) -> None:
    await run_on_guest_thread(int, i)


async def _work_there(i: int) -> None:
    await run_on_guest_thread(work, i)


async def _work_here_after(i: int) -> None:
    await run_on_guest_thread(int, i)
    work(i)


WAYS: dict[str, Callable[[int], Awaitable[None]]] = {
    "inline": _inline,
    "hand-off": _hand_off,
    "work on guest thread": _work_there,
    "work on loop thread after hand-off": _work_here_after,
}


async def _round(n: int) -> dict[str, float]:
    cpu: dict[str, float] = {}
    for name, way in WAYS.items():
        start = time.process_time()
        for i in range(n):
            await way(i)
        cpu[name] = (time.process_time() - start) / n * 1e6
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--n", type=int, default=10_000, help="round trips per way and round")
    args = parser.parse_args()
    loads = [os.getloadavg()[0]]
    rounds = [asyncio.run(_round(args.n)) for _ in range(args.rounds)]
    loads.append(os.getloadavg()[0])
    medians = {name: statistics.median(r[name] for r in rounds) for name in WAYS}
    penalty = [
        (r["work on guest thread"] - r["hand-off"])
        / (r["work on loop thread after hand-off"] - r["hand-off"])
        for r in rounds
    ]
    lines = ["| way | CPU µs per round trip (median) |", "| --- | ---: |"]
    lines += [f"| {name} | {value:.1f} |" for name, value in medians.items()]
    lines.append(
        f"\nThe work on the woken guest thread costs {statistics.median(penalty):.2f}× the same "
        "work on the loop thread after the same hand-off (median of per-round ratios)."
    )
    table = "\n".join(lines)
    print(table)
    RESULTS.mkdir(exist_ok=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": loads}
    payload = {"meta": meta, "medians_us": medians, "rounds": rounds}
    (RESULTS / "woken_python.json").write_text(json.dumps(payload, indent=2))
    head = f"{meta['date']}, load {loads[0]:.1f} → {loads[1]:.1f}, {args.rounds} rounds\n\n"
    (RESULTS / "woken_python.md").write_text(head + table + "\n")


if __name__ == "__main__":
    main()
