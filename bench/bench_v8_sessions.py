"""The V8 executor with one worker per session (issue 35), against a tree without it.

A script, not a test. Each round runs one child process per tree, alternating (before,
after, before, …), so drift on a shared machine lands on both. A child measures, on one
shared `V8Executor`:

* warm `exec("return 1")` in one `CodeMode` (median of 200 after 20 warm-up cells);
* cells per second with 8 sessions at once (8 `CodeMode`s, each running 25 cells of one
  `echo` call and a small computation, all concurrently, after one cell each);
* the CPU time per cell of both (the host's and its workers', live or ended, booting ones
  included: less at the mercy of a loaded machine than wall time), and the same cells of one
  session alone afterwards; the context switches per cell of the workers' threads;
* the V8 worker processes and their anonymous resident memory (bubblewrap's and Deno's,
  `RssAnon`) while the 8 sessions are open, and after they closed (the spares and the shelf).

Prints a table (medians over the rounds, and after/before) and writes
`bench/results/v8_sessions.{json,md}`.

    .venv/bin/python bench/bench_v8_sessions.py [--rounds 3] [--before /path/to/old/src]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import machine_meta, write_results

SESSIONS = 8
CELLS = 25
CELL = (
    "const r = await echo({ i: 1 });\nlet s = 0;\nfor (let i = 0; i < 1e4; i++) s += i;\n"
    "return [r.i, s];"
)


def _workers() -> tuple[int, float]:
    """This process's descendant processes (the workers' bwrap and deno) and their anonymous
    resident MiB."""
    from clawcell.runtime._v8._watch import process_tree, resident_bytes

    tree = process_tree(os.getpid())[1:]
    deno = sum(1 for pid in tree if _comm(pid) == "deno")
    return deno, resident_bytes(tree) / 2**20


def _cpu() -> float:
    """CPU seconds of this process and of its descendants (the workers): the live ones from
    `/proc`, the ended ones (reaped) from `RUSAGE_CHILDREN`."""
    from clawcell.runtime._v8._watch import process_tree

    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = time.process_time() + ended.ru_utime + ended.ru_stime
    tick = os.sysconf("SC_CLK_TCK")
    for pid in process_tree(os.getpid())[1:]:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def _switches() -> int:
    """Context switches (voluntary and not) of every thread of the live worker processes."""
    from clawcell.runtime._v8._watch import process_tree

    total = 0
    for pid in process_tree(os.getpid())[1:]:
        for status in Path(f"/proc/{pid}/task").glob("*/status"):
            try:
                lines = status.read_text().splitlines()
            except OSError:
                continue
            total += sum(int(line.split()[1]) for line in lines if "ctxt_switches" in line)
    return total


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


async def _child() -> dict[str, float]:
    import clawcell
    from clawcell.runtime import V8Executor

    async def echo(params: dict[str, Any]) -> Any:
        return params

    tools = [clawcell.Tool(name="echo", execute=echo, parameters={"type": "object"})]
    limits = clawcell.Limits(timeout_ms=60_000)
    executor = V8Executor()
    out: dict[str, float] = {}
    async with clawcell.CodeMode(tools, executor=executor, limits=limits) as mode:
        for _ in range(20):
            await mode.exec("return 1")
        times: list[float] = []
        cpu = _cpu()
        for _ in range(200):
            began = time.perf_counter()
            await mode.exec("return 1")
            times.append((time.perf_counter() - began) * 1000)
        out["warm exec (ms)"] = statistics.median(times)
        out["warm exec, CPU ms per cell"] = (_cpu() - cpu) * 1000 / 200

    modes = [
        clawcell.CodeMode(tools, executor=executor, limits=limits, session_id=f"s{i}")
        for i in range(SESSIONS)
    ]
    await asyncio.gather(*(mode.exec(CELL) for mode in modes))

    async def session(mode: clawcell.CodeMode) -> None:
        for _ in range(CELLS):
            envelope = await mode.exec(CELL)
            assert envelope["status"] == "completed", envelope

    began, cpu, switches = time.perf_counter(), _cpu(), _switches()
    await asyncio.gather(*(session(mode) for mode in modes))
    out["cells/s, 8 sessions at once"] = SESSIONS * CELLS / (time.perf_counter() - began)
    out["8 sessions, CPU ms per cell"] = (_cpu() - cpu) * 1000 / (SESSIONS * CELLS)
    out["8 sessions, worker context switches per cell"] = (_switches() - switches) / (
        SESSIONS * CELLS
    )
    # The same cells of one session alone, on its own warm worker: what a cell costs when no
    # other session's cells run beside it (in a shared worker or another one).
    cpu, switches = _cpu(), _switches()
    await session(modes[0])
    out["1 session alone, CPU ms per cell"] = (_cpu() - cpu) * 1000 / CELLS
    out["1 session alone, worker context switches per cell"] = (_switches() - switches) / CELLS
    count, mib = _workers()
    out["workers, 8 sessions open"] = count
    out["worker MiB (anon), 8 sessions open"] = mib
    for mode in modes:
        await mode.aclose()
    executor.close()
    count, mib = _workers()
    out["workers idle after (spares, shelf)"] = count
    out["idle worker MiB (anon)"] = mib
    return out


def _run(src: Path | None) -> dict[str, float]:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = f"{src}{os.pathsep}{env.get('PYTHONPATH', '')}"
    done = subprocess.run(
        [sys.executable, __file__, "--child"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="the `src` folder of the tree to compare")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(_child())))
        return
    load_before = os.getloadavg()[0]
    trees = {"before": args.before, "after": None} if args.before else {"after": None}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, src in trees.items():
            runs[name].append(_run(src))
    figures = list(runs["after"][0])
    medians = {
        name: {figure: statistics.median(run[figure] for run in rounds) for figure in figures}
        for name, rounds in runs.items()
    }
    header = "| figure | " + " | ".join(trees) + (" | after/before |" if args.before else " |")
    lines = [header, "|" + " --- |" + " ---: |" * (len(trees) + bool(args.before))]
    for figure in figures:
        cells = [f"{medians[name][figure]:.2f}" for name in trees]
        if args.before:
            ratio = medians["after"][figure] / max(medians["before"][figure], 1e-9)
            cells.append(f"{ratio:.2f}")
        lines.append(f"| {figure} | " + " | ".join(cells) + " |")
    load_after = os.getloadavg()[0]
    lines.append("")
    lines.append(
        f"{args.rounds} alternating rounds; load average {load_before:.1f} before, "
        f"{load_after:.1f} after; medians over the rounds."
    )
    table = "\n".join(lines) + "\n"
    print(table)
    data = machine_meta(load_average_before=load_before, rounds=runs, medians=medians)
    write_results("v8_sessions", data, table)


if __name__ == "__main__":
    main()
