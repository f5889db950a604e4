"""Parking (`bench_parking.py`'s park and resume) and a new runtime, this tree against another.

A script, not a test. Each round runs one fresh process per tree, in a shuffled order, that
parks and resumes `--repeat` cells, each followed by a warm `exec("return 1")` (`exec_*`), with
the in-memory store and with a `SQLiteStore` (after ten to warm up), then builds `--repeat` new
runtimes with one echo tool and runs one cell in each (`first_memory`: `compare_original.py`'s
"new runtime + first cell", after twenty to warm up; `build_cpu_memory` is the CPU of the
`CodeMode(...)` call alone), and reports per step the median wall time and the median CPU time
of the whole process (`time.process_time`, every thread: less sensitive than wall time to the
other processes of a shared machine, but blind to waits for the disk). Cells run on the default
path (the guest thread). Prints the median of the per-round medians for both trees, their ratio
and the median of the per-round ratios (paired), and writes `bench/results/<--stem>.{json,md}`
(default `parking_comparison`).

    .venv/bin/python bench/compare_parking.py --baseline /path/to/other/src --rounds 8
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _ab import alternate, paired_rows, run_child, write_comparison

BENCH = Path(__file__).resolve().parent
CHILD = """
import asyncio, json, statistics, tempfile, time
from pathlib import Path
from clawcell import CodeMode, Limits, Tool
from clawcell.store import SQLiteStore

CELL = "await yield_control('bench');\\nreturn 1;"

async def steps(mode, repeat):
    samples = {{
        "park": [], "resume": [], "exec": [], "park_cpu": [], "resume_cpu": [], "exec_cpu": []
    }}
    for index in range(10 + repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        parked = await mode.exec(CELL)
        mid_wall, mid_cpu = time.perf_counter(), time.process_time()
        done = await mode.wait(parked["runId"])
        end_wall, end_cpu = time.perf_counter(), time.process_time()
        warm = await mode.exec("return 1")
        exec_wall, exec_cpu = time.perf_counter(), time.process_time()
        assert done["status"] == "completed", done
        assert warm["status"] == "completed", warm
        if index >= 10:
            samples["park"].append((mid_wall - wall) * 1000)
            samples["resume"].append((end_wall - mid_wall) * 1000)
            samples["exec"].append((exec_wall - end_wall) * 1000)
            samples["park_cpu"].append((mid_cpu - cpu) * 1000)
            samples["resume_cpu"].append((end_cpu - mid_cpu) * 1000)
            samples["exec_cpu"].append((exec_cpu - end_cpu) * 1000)
    return samples

async def echo(params):
    return params

async def firsts(repeat):
    tools = [Tool(name="echo", execute=echo, parameters={{"type": "object"}})]
    walls, cpus, builds = [], [], []
    for index in range(20 + repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        mode = CodeMode(tools, limits=Limits(timeout_ms=60_000))
        built = time.process_time()
        async with mode:
            envelope = await mode.exec("return 1")
        if index >= 20:
            cpus.append((time.process_time() - cpu) * 1000)
            builds.append((built - cpu) * 1000)
            walls.append((time.perf_counter() - wall) * 1000)
        assert envelope["status"] == "completed", envelope
    return {{
        "first_memory": statistics.median(walls),
        "first_cpu_memory": statistics.median(cpus),
        "build_cpu_memory": statistics.median(builds),
    }}

async def main(directory):
    out = {{}}
    for kind in ("memory", "sqlite"):
        store = SQLiteStore(directory / "p.sqlite") if kind == "sqlite" else None
        async with CodeMode(limits=Limits(timeout_ms=60_000), store=store, session_id="b") as mode:
            for step, values in (await steps(mode, {repeat})).items():
                out[f"{{step}}_{{kind}}"] = statistics.median(values)
        if store is not None:
            await store.close()
    out.update(await firsts({repeat}))
    return out

with tempfile.TemporaryDirectory() as d:
    print(json.dumps(asyncio.run(main(Path(d)))))
"""


def _one(source: Path, repeat: int) -> dict[str, float]:
    return run_child(CHILD.format(repeat=repeat), source)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="another tree's src/")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--stem", default="parking_comparison", help="results file name")
    args = parser.parse_args()
    rounds = alternate(args.baseline, args.rounds, lambda source: _one(source, args.repeat))
    write_comparison(
        args.stem,
        paired_rows(rounds),
        args.baseline,
        rounds=args.rounds,
        repeat=args.repeat,
    )


if __name__ == "__main__":
    main()
