"""What a tool call's asyncio task costs, against running the tool's first step at once.

A script, not a test (issue 39, branch calls46). Every tool call a cell makes runs as its own
`asyncio` task, and the cell gives the loop one turn (`asyncio.sleep(0)`) so that fresh tasks
take their first step: a tool that does not suspend is done then. Python 3.12's eager tasks
(`eager_start`) run that first step inside `create_task`, with the new task as
`current_task()`. This times, per call, in one process, the ways alternated round by round:

* `task + loop turn`: `create_task` of the call and `await asyncio.sleep(0)` (today's path);
* `loop turn alone`: `await asyncio.sleep(0)` (what a turn costs without any task);
* `eager first step`: the call's coroutine stepped once in a copied context, no task;
* `eager task` (Python 3.12+ only): `asyncio.Task(..., eager_start=True)`;
* `clawcell's start_call` (branch calls47, `_cell/_call_task.py`): the call's own task, its
  first step taken at once (on 3.11 a subclass of asyncio's Python `Task`), reading
  `done`, `cancelled` and `result` as the cell does;
* a batch of 128: `create_task` each and one loop turn, against `start_call` each.

The call is two coroutines deep (a bridge request awaiting a tool that returns at once). It
prints process CPU per call (median over rounds) and writes
`bench/results/tool_tasks.{json,md}` with the load average.

    .venv/bin/python bench/bench_tool_tasks.py --rounds 9
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _common import machine_meta, median_table, write_results
from clawcell._cell._call_task import start_call

CALLS = 20_480  # 160 batches of 128


async def _tool(params: int) -> int:
    return params


async def _request(params: int) -> int:
    return await _tool(params)


async def _task_and_turn(loop: asyncio.AbstractEventLoop) -> None:
    for i in range(CALLS):
        task = loop.create_task(_request(i))
        await asyncio.sleep(0)
        task.result()


async def _turn_alone(loop: asyncio.AbstractEventLoop) -> None:
    for _ in range(CALLS):
        await asyncio.sleep(0)


async def _eager_step(loop: asyncio.AbstractEventLoop) -> None:
    for i in range(CALLS):
        work = _request(i)
        try:
            contextvars.copy_context().run(work.send, None)
        except StopIteration:
            continue
        raise RuntimeError("the tool suspended")


async def _eager_task(loop: asyncio.AbstractEventLoop) -> None:
    for i in range(CALLS):
        # `eager_start` is Python 3.12's; this type-checks against 3.11's stubs.
        make: Any = asyncio.Task
        make(_request(i), loop=loop, eager_start=True).result()


async def _start_call(loop: asyncio.AbstractEventLoop) -> None:
    for i in range(CALLS):
        task = start_call(_request(i))
        task.done()
        task.cancelled()
        task.result()


async def _tasks_of_a_batch(loop: asyncio.AbstractEventLoop) -> None:
    for _ in range(0, CALLS, 128):
        batch = [loop.create_task(_request(i)) for i in range(128)]
        await asyncio.sleep(0)
        for task in batch:
            task.done()
            task.cancelled()
            task.result()


async def _start_calls_of_a_batch(loop: asyncio.AbstractEventLoop) -> None:
    for _ in range(0, CALLS, 128):
        batch = [start_call(_request(i)) for i in range(128)]
        for task in batch:
            task.done()
            task.cancelled()
            task.result()


WAYS: dict[str, Callable[[asyncio.AbstractEventLoop], Awaitable[None]]] = {
    "task + loop turn": _task_and_turn,
    "loop turn alone": _turn_alone,
    "eager first step": _eager_step,
    "clawcell's start_call (calls47)": _start_call,
    "128 tasks + one loop turn, per call": _tasks_of_a_batch,
    "128 start_calls, per call": _start_calls_of_a_batch,
}
if sys.version_info >= (3, 12):
    WAYS["eager task"] = _eager_task


async def _rounds(rounds: int) -> dict[str, list[float]]:
    loop = asyncio.get_running_loop()
    samples: dict[str, list[float]] = {name: [] for name in WAYS}
    for _ in range(rounds):
        for name, way in WAYS.items():
            start = time.process_time()
            await way(loop)
            samples[name].append((time.process_time() - start) * 1e6 / CALLS)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    meta = machine_meta(rounds=args.rounds, calls=CALLS)
    samples = asyncio.run(_rounds(args.rounds))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    table = median_table(("way, per call", "CPU µs (median)"), list(medians.items()), 2)
    meta["load_average_1m_after"] = machine_meta()["load_average_1m"]
    markdown = f"{table}\n\n{meta}\n"
    write_results("tool_tasks", {"meta": meta, "medians": medians, "samples": samples}, markdown)


if __name__ == "__main__":
    main()
