"""How the MCP server and agent turns scale with worker processes on one PostgreSQL (issue 39).

A script, not a test. It uses `CLAWCELL_TEST_POSTGRES_DSN` when set, or else re-runs itself
under `scripts/pg-test-env` (a throwaway local PostgreSQL). Two loads, each with 1, 2 and 4
worker processes (`--workers`) sharing one PostgreSQL schema, in a shuffled order per round:

* **mcp**: W `clawcell mcp serve --http --store postgresql://…` processes; `--sessions`
  sessions of the official `mcp` client (this process) are spread over them in turn (an MCP
  session lives in the worker that opened it, as behind a sticky load balancer) and each sends
  `compare_fastmcp.py`'s cell (three tool calls) one request after another;
* **agent**: W processes, each running agent turns for its share of the sessions with a
  `ScriptedModel` (no network): every turn is one `exec` of the same cell, then a reply. The
  transcript, the turn lease and the run records live in PostgreSQL.

Per load and W: the total rate, the latency median and p99, the CPU per request of the worker
processes (user + system), and the efficiency per core, `rate(W) / rate(1) / min(W, cores)`:
1.0 means each extra core gave a whole worker's rate. The client (MCP) or the parent (agent:
nothing, it only waits) shares the cores with the workers. Writes
`bench/results/cores.{json,md}` with the commit and the load average.

    .venv/bin/python bench/bench_cores.py [--rounds 2] [--workers 1,2,4] [--sessions 16]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
DSN_VARIABLE = "CLAWCELL_TEST_POSTGRES_DSN"
STATE_KEY = "bench:" + base64.b64encode(b"bench-cores-state-key-0123456789abcdef").decode()


# -- the agent worker ----------------------------------------------------------------------


async def _agent_worker(dsn: str, schema: str, sessions: list[str], turns: int) -> None:
    """Run `turns` turns for each of `sessions` at once; print the latencies (s) as JSON."""
    sys.path.insert(0, str(ROOT / "bench"))
    from _mcp_tools import TOOLS  # pyright: ignore[reportMissingImports]
    from clawcell import PostgresStore
    from clawcell.agent import Agent, ScriptedModel, exec_call
    from compare_fastmcp import CELL_JS  # pyright: ignore[reportMissingImports]

    store = PostgresStore(dsn, schema=schema)
    agents = [
        Agent(model=ScriptedModel([exec_call(CELL_JS), "done"] * (turns + 1)), tools=TOOLS,
              store=store)
        for _ in sessions
    ]  # fmt: skip
    latencies: list[float] = []

    async def session(agent: Agent, session_id: str) -> None:
        async for _ in agent.run(session_id, "warm"):  # untimed: a warm guest and lease row
            pass
        ready.append(session_id)
        await go.wait()
        for _ in range(turns):
            began = time.perf_counter()
            async for _ in agent.run(session_id, "go"):
                pass
            latencies.append(time.perf_counter() - began)

    ready: list[str] = []
    go = asyncio.Event()
    tasks = [asyncio.create_task(session(a, s)) for a, s in zip(agents, sessions, strict=True)]
    while len(ready) < len(sessions):
        await asyncio.sleep(0.01)
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)  # the parent starts every worker at once
    go.set()
    await asyncio.gather(*tasks)
    for agent in agents:
        await agent.aclose()
    await store.close()
    print(json.dumps(latencies), flush=True)
    await asyncio.to_thread(sys.stdin.readline)  # alive until the parent has read its CPU time


# -- the parent ----------------------------------------------------------------------------


def _tree_cpu(pids: list[int]) -> float:
    sys.path.insert(0, str(ROOT / "bench"))
    from compare_fastmcp import _cpu_seconds  # pyright: ignore[reportPrivateUsage]

    return sum(_cpu_seconds(pid) for pid in pids)  # pyright: ignore[reportUnknownArgumentType]


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def _worker_env() -> dict[str, str]:
    env = dict(os.environ)
    env["CLAWCELL_STATE_KEY"] = STATE_KEY
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "bench")])
    return env


async def _mcp_load(dsn: str, workers: int, sessions: int, calls: int) -> dict[str, Any]:
    from contextlib import AsyncExitStack

    import compare_fastmcp as cf

    command = [sys.executable, "-m", "clawcell", "mcp", "serve", "--http", "--port", "0"]
    command += ["--token", cf.TOKEN, "--store", dsn, "--tools", "bench._mcp_tools:TOOLS"]
    server = cf.Server(name="clawcell", command=command, env=_worker_env(), tool="exec",
                       code=cf.CELL_JS)  # fmt: skip
    async with AsyncExitStack() as stack:
        start_one = cf._running  # pyright: ignore[reportPrivateUsage]
        running = [await stack.enter_async_context(start_one(server)) for _ in range(workers)]
        urls = [url for url, _ in running]
        pids = [pid for _, pid in running]
        start = asyncio.Event()
        ready = 0
        each = max(1, calls // sessions)
        latencies: list[float] = []

        session, call = cf._session, cf._call  # pyright: ignore[reportPrivateUsage]

        async def one(index: int) -> None:
            nonlocal ready
            async with session(urls[index % workers]) as client:
                await call(client, server)
                ready += 1
                if ready == sessions:
                    start.set()
                await start.wait()
                for _ in range(each):
                    began = time.perf_counter()
                    await call(client, server)
                    latencies.append(time.perf_counter() - began)

        tasks = [asyncio.create_task(one(i)) for i in range(sessions)]
        await start.wait()
        cpu = _tree_cpu(pids)
        began = time.perf_counter()
        await asyncio.gather(*tasks)
        wall = time.perf_counter() - began
        used = _tree_cpu(pids) - cpu
    return _figures(latencies, wall, used)


async def _agent_load(
    dsn: str, schema: str, workers: int, sessions: int, turns: int
) -> dict[str, Any]:
    names = [f"{uuid.uuid4().hex[:8]}-{i}" for i in range(sessions)]
    processes: list[subprocess.Popen[str]] = []
    for w in range(workers):
        mine = names[w::workers]
        command = [sys.executable, __file__, "--agent-worker", dsn, schema, str(turns), *mine]
        processes.append(
            subprocess.Popen(
                command,
                env=_worker_env(),
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    for process in processes:
        assert process.stdout is not None
        line = await asyncio.to_thread(process.stdout.readline)
        if line.strip() != "ready":
            raise RuntimeError(f"an agent worker did not start: {line!r}")
    pids = [p.pid for p in processes]
    cpu = _tree_cpu(pids)
    began = time.perf_counter()
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    latencies: list[float] = []
    for process in processes:
        assert process.stdout is not None
        latencies += json.loads(await asyncio.to_thread(process.stdout.readline))
    wall = time.perf_counter() - began
    used = _tree_cpu(pids) - cpu  # the workers wait for a last line before they exit
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("bye\n")
        process.stdin.close()
        process.wait(timeout=60)
    return _figures(latencies, wall, used)


def _figures(latencies: list[float], wall: float, cpu: float) -> dict[str, Any]:
    return {
        "rate_per_s": len(latencies) / wall,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": _p99(latencies) * 1000,
        "worker_cpu_ms_per_request": cpu * 1000 / len(latencies),
        "n": len(latencies),
    }


async def _round(dsn: str, args: argparse.Namespace, index: int) -> dict[str, Any]:
    plan = [(load, w) for load in args.loads.split(",") for w in args.levels]
    random.shuffle(plan)
    out: dict[str, Any] = {}
    for load, workers in plan:
        schema = f"bench_cores_{index}_{load}_{workers}_{uuid.uuid4().hex[:6]}"
        if load == "mcp":
            figures = await _mcp_load(dsn, workers, args.sessions, args.calls)
        else:
            figures = await _agent_load(dsn, schema, workers, args.sessions, args.turns)
        out[f"{load}|{workers}"] = figures
        print(f"  {load} W={workers}: {figures['rate_per_s']:.1f}/s", file=sys.stderr)
    return out


def _rows(rounds: list[dict[str, Any]], args: argparse.Namespace) -> list[dict[str, Any]]:
    cores = len(os.sched_getaffinity(0))
    rows: list[dict[str, Any]] = []
    for load in args.loads.split(","):
        for workers in args.levels:
            key = f"{load}|{workers}"
            row: dict[str, Any] = {"load": load, "workers": workers}
            for figure in rounds[0][key]:
                row[figure] = statistics.median(r[key][figure] for r in rounds)
            speedups = [r[key]["rate_per_s"] / r[f"{load}|1"]["rate_per_s"] for r in rounds]
            row["speedup_vs_1_paired"] = statistics.median(speedups)
            row["efficiency_per_core"] = row["speedup_vs_1_paired"] / min(workers, cores)
            rows.append(row)
    return rows


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| load | workers | rate /s | p50 ms | p99 ms | worker CPU ms/request "
        "| rate vs 1 worker (paired) | efficiency per core |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['load']} | {r['workers']} | {r['rate_per_s']:.1f} | {r['p50_ms']:.1f} "
            f"| {r['p99_ms']:.1f} | {r['worker_cpu_ms_per_request']:.2f} "
            f"| {r['speedup_vs_1_paired']:.2f}× | {r['efficiency_per_core']:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--agent-worker":
        dsn, schema, turns, *sessions = sys.argv[2:]
        asyncio.run(_agent_worker(dsn, schema, sessions, int(turns)))
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--loads", default="mcp,agent")
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--calls", type=int, default=192, help="MCP requests per level")
    parser.add_argument("--turns", type=int, default=8, help="agent turns per session")
    args = parser.parse_args()
    args.levels = [int(w) for w in args.workers.split(",")]
    dsn = os.environ.get(DSN_VARIABLE)
    if not dsn:
        script = ROOT / "scripts" / "pg-test-env"
        done = subprocess.run([str(script), sys.executable, __file__, *sys.argv[1:]], check=False)
        sys.exit(done.returncode)
    sys.path.insert(0, str(ROOT / "bench"))
    rounds: list[dict[str, Any]] = []
    loads = [round(os.getloadavg()[0], 2)]
    for index in range(args.rounds):
        rounds.append(asyncio.run(_round(dsn, args, index)))
        loads.append(round(os.getloadavg()[0], 2))
    rows = _rows(rounds, args)
    table = _table(rows)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
        check=False,
    ).stdout.strip()  # fmt: skip
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": commit,
        "rounds": args.rounds,
        "sessions": args.sessions,
        "cores": len(os.sched_getaffinity(0)),
        "load_average_1m": loads,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cores.json").write_text(
        json.dumps({"meta": meta, "rows": rows, "rounds": rounds}, indent=2) + "\n"
    )
    text = f"{meta['date']}, commit `{commit}`, {args.rounds} rounds, load {loads}\n\n{table}\n"
    (RESULTS / "cores.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
