"""Cost of `exec` (a `true` command, with and without bubblewrap) and scheduler latency.

Run: `.venv/bin/python bench/bench_shell.py`. Prints a table and writes
`bench/results/bench_shell.json` and `.md`. Scheduler latency is due time → run start
(the claim), for ten 1-second jobs over a few seconds, at the default 0.5 s poll.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from clawcell.automations import PayloadRunner, Scheduler
from clawcell.catalog import Catalog
from clawcell.store import MemoryStore, SQLiteStore, job_store_for
from clawcell.tools import ShellSettings, automations, shell

SandboxMode = Literal["auto", "required", "off"]
RESULTS = Path(__file__).resolve().parent / "results"
ROUNDS = 30
JOBS = 10
SECONDS = 5.0


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "median_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(p99 * 1000, 2),
        "n": len(ordered),
    }


def _baseline() -> list[float]:
    samples: list[float] = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", "true"], check=True)
        samples.append(time.perf_counter() - start)
    return samples


async def _exec(root: str, sandbox: SandboxMode) -> list[float]:
    settings = ShellSettings(approval="never", sandbox=sandbox)
    tools = shell(root, settings=settings)
    catalog = Catalog(tools)
    samples: list[float] = []
    try:
        for _ in range(ROUNDS + 2):
            start = time.perf_counter()
            done = await catalog.call("exec", {"command": "true"})
            assert done["status"] == "completed", done
            samples.append(time.perf_counter() - start)
    finally:
        for tool in tools:
            if tool.on_close is not None:
                tool.on_close()
    return samples[2:]  # the first calls pay for imports and the bwrap probe


async def _latency(store: Any) -> list[float]:
    jobs = job_store_for(store)
    scheduler = Scheduler(jobs, PayloadRunner(session_store=store), max_concurrent=JOBS)
    catalog = Catalog(automations(store, scheduler=scheduler))
    ids: list[str] = []
    for _ in range(JOBS):
        job = {"schedule": {"kind": "every", "everyMs": 1000},
               "payload": {"kind": "cell", "code": "return 1;"}}  # fmt: skip
        ids.append((await catalog.call("automations", {"action": "add", "job": job}))["id"])
    stop = asyncio.Event()
    worker = asyncio.create_task(scheduler.run(stop))
    await asyncio.sleep(SECONDS)
    stop.set()
    await worker
    samples: list[float] = []
    for job_id in ids:
        for run in (await jobs.list_runs(job_id, offset=0, limit=100))[0]:
            if run.due_at is not None and run.started_at is not None:
                samples.append(run.started_at - run.due_at)
    await jobs.close()
    await store.close()
    return samples


async def _measure() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as root:
        results = {
            "subprocess_sh_true": _ms(_baseline()),
            "exec_true_no_sandbox": _ms(await _exec(root, "off")),
            "exec_true_bwrap": _ms(await _exec(root, "required")),
            "scheduler_latency_memory": _ms(await _latency(MemoryStore())),
            "scheduler_latency_sqlite": _ms(await _latency(SQLiteStore(Path(root) / "s.db"))),
        }
    return results


def main() -> None:
    results = asyncio.run(_measure())
    data = {
        "results": results,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "rounds": ROUNDS,
        "scheduler": {"jobs": JOBS, "seconds": SECONDS, "every_ms": 1000, "poll_seconds": 0.5},
    }
    rows = [f"| {name} | {v['median_ms']} | {v['p99_ms']} | {v['n']} |" for name, v in
            results.items()]  # fmt: skip
    table = "| measure | median ms | p99 ms | n |\n| --- | ---: | ---: | ---: |\n" + "\n".join(rows)
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_shell.json").write_text(json.dumps(data, indent=2) + "\n")
    note = f"Load average {data['load_average_1m']} on {data['cpus']} CPUs (shared machine)."
    (RESULTS / "bench_shell.md").write_text(
        f"# exec and scheduler benchmark\n\n{note}\n\n{table}\n"
    )


if __name__ == "__main__":
    main()
