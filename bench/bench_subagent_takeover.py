"""The time from a worker's death to another worker taking over its sub-agent run (issue 37).

Run: `.venv/bin/python bench/bench_subagent_takeover.py`. It uses `CLAWCELL_TEST_POSTGRES_DSN`
when set, or else re-runs itself under `scripts/pg-test-env` (a throwaway local PostgreSQL).
Prints a table and writes `bench/results/subagent_takeover.json` and `.md`. A script, not a
test.

Each round, on a fresh schema: worker B (`tests/agent/subagents/_worker.py idle`) only lives;
worker A (`… parent`) runs a parent turn whose child holds in a tool; once it holds, A is
SIGKILLed. Nobody touches the parent session. Measured from the kill: `resumed`, when the run's
record names B as its driver (B's sweep claimed it), and `completed`, when the record says
`completed` (the resumed child turn took over its session's turn lease and answered). Leases
of 3 s (30 s by default: both scale with it); the sweep runs every third of the lease, so
`resumed` falls between the rest of A's last heartbeat lease and a third of a lease later.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg
from psycopg import sql

from _common import machine_meta, write_results
from clawcell.agent._subagents._run_book import RunBook
from clawcell.store import PostgresStore

DSN_VARIABLE = "CLAWCELL_TEST_POSTGRES_DSN"
ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 5
LEASE = 3.0


def _start(role: str, until: str, env: dict[str, str]) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "tests.agent.subagents._worker", role]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    for line in process.stdout:
        if line.strip() == until:
            return process
    raise RuntimeError(f"worker {role!r} ended before printing {until!r}")


async def _watch(dsn: str, schema: str, killed_at: float, other: int) -> tuple[float, float]:
    store = PostgresStore(dsn, schema=schema, max_size=2)
    resumed = completed = 0.0
    try:
        async with asyncio.timeout(120):
            while not completed:
                runs = await RunBook(store).load("chat")
                now = time.monotonic() - killed_at
                if runs and not resumed and f":{other}:" in runs[0].owner:
                    resumed = now
                if runs and runs[0].status == "completed":
                    completed, resumed = now, resumed or now
                await asyncio.sleep(0.02)
    finally:
        await store.close()
    return resumed, completed


def _round(dsn: str) -> tuple[float, float]:
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "CLAWCELL_TEST_WORKER_DSN": dsn, "CLAWCELL_TEST_WORKER_SCHEMA": schema,
           "CLAWCELL_TEST_WORKER_LEASE": str(LEASE), "PYTHONPATH": str(ROOT)}  # fmt: skip
    started: list[subprocess.Popen[str]] = []
    try:
        started.append(other := _start("idle", "ready", env))
        started.append(killed := _start("parent", "holding", env))
        killed.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        killed.wait()
        return asyncio.run(_watch(dsn, schema, killed_at, other.pid))
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(schema)))  # fmt: skip


def main() -> int:
    dsn = os.environ.get(DSN_VARIABLE)
    if not dsn:
        script = ROOT / "scripts" / "pg-test-env"
        return subprocess.run([script, sys.executable, __file__], check=False).returncode
    samples = [_round(dsn) for _ in range(ROUNDS)]
    meta = machine_meta(rounds=ROUNDS, lease=LEASE)
    rows = {
        "resumed": [s[0] for s in samples],
        "completed": [s[1] for s in samples],
    }
    lines = [
        f"load average {meta['load_average_1m']}, {meta['cpus']} cores, lease {LEASE} s",
        "",
        "| from the kill to | median s | min s | max s |",
        "| --- | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {name} | {statistics.median(v):.2f} | {min(v):.2f} | {max(v):.2f} |"
        for name, v in rows.items()
    ]
    table = "\n".join(lines)
    print(table)
    data = {**meta, **{k: [round(x, 3) for x in v] for k, v in rows.items()}}
    write_results("subagent_takeover", data, table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
