"""Three `clawcell automations run` workers on one PostgreSQL, one of them SIGKILLed mid-run:
every due run fires once (never twice), the killed worker's run is `lost`, and the job's
next occurrences still fire."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from clawcell.catalog import Catalog
from clawcell.store import JobRun, PostgresJobStore
from clawcell.tools import automations

ROOT = Path(__file__).resolve().parents[2]
CELL = "await mark({ due: automation.dueAtMs }); await hold({ ms: 600 }); return 1;"


def _worker(dsn: str, schema: str, marks: Path) -> subprocess.Popen[str]:
    command = [
        sys.executable, "-m", "clawcell", "automations", "run",
        "--tools", "tests.automations._marker:TOOLS", "--store", dsn, "--schema", schema,
        "--lease-seconds", "2", "--poll-seconds", "0.1",
    ]  # fmt: skip
    env = {**os.environ, "CLAWCELL_TEST_MARKS": str(marks)}
    return subprocess.Popen(command, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE)


async def _runs(jobs: PostgresJobStore, job_id: str) -> list[JobRun]:
    return (await jobs.list_runs(job_id, offset=0, limit=500))[0]


async def _until(check: Any, seconds: float = 90.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = await check()
        if found:
            return found
        await asyncio.sleep(0.1)
    raise AssertionError("the workers did not get there in time")


def test_three_workers_fire_each_due_run_once_and_survive_a_killed_worker(
    postgres_dsn: str, postgres_schema: str, tmp_path: Path
) -> None:
    marks = tmp_path / "marks.jsonl"
    marks.touch()

    async def body() -> tuple[list[JobRun], JobRun]:
        jobs = PostgresJobStore(postgres_dsn, schema=postgres_schema)
        catalog = Catalog(automations(jobs))
        job = {"schedule": {"kind": "every", "everyMs": 1000},
               "payload": {"kind": "cell", "code": CELL, "timeoutMs": 30_000}}  # fmt: skip
        job_id = (await catalog.call("automations", {"action": "add", "job": job}))["id"]
        workers = [_worker(postgres_dsn, postgres_schema, marks) for _ in range(3)]
        try:
            victim = await _until(lambda: _running(jobs, job_id))
            pid = int(str(victim.worker).split(":")[1])
            os.kill(pid, signal.SIGKILL)
            await _until(lambda: _settled_after(jobs, job_id, victim))
        finally:
            for worker in workers:
                if worker.poll() is None:
                    worker.send_signal(signal.SIGTERM)
            for worker in workers:
                worker.communicate(timeout=60)
        runs = await _runs(jobs, job_id)
        await jobs.close()
        return runs, victim

    runs, victim = asyncio.run(body())
    dues = [json.loads(line)["due"] for line in marks.read_text().splitlines()]
    assert len(dues) == len(set(dues)), "an occurrence fired twice"
    run_dues = [r.due_at * 1000 for r in runs if r.due_at is not None]
    assert len(run_dues) == len(set(run_dues)), "an occurrence was claimed twice"
    # Every side effect belongs to a claimed run, and every finished run made its one; the
    # killed run may or may not have made its own before the SIGKILL.
    assert {round(d, 3) for d in dues} <= {round(d, 3) for d in run_dues}
    ok_dues = {round(r.due_at * 1000, 3) for r in runs if r.status == "ok" and r.due_at}
    assert ok_dues <= {round(d, 3) for d in dues}
    statuses = {r.run_id: r.status for r in runs}
    assert statuses[victim.run_id] == "lost"
    later = [r for r in runs if r.due_at and victim.due_at and r.due_at > victim.due_at]
    assert any(r.status == "ok" for r in later), "the next occurrences did not fire"
    assert set(statuses.values()) <= {"ok", "lost", "running"}


async def _running(jobs: PostgresJobStore, job_id: str) -> JobRun | None:
    runs = await _runs(jobs, job_id)
    if sum(r.status == "ok" for r in runs) < 2:
        return None
    return next((r for r in runs if r.status == "running"), None)


async def _settled_after(jobs: PostgresJobStore, job_id: str, victim: JobRun) -> bool:
    runs = await _runs(jobs, job_id)
    lost = any(r.run_id == victim.run_id and r.status == "lost" for r in runs)
    assert victim.due_at is not None
    later = [r for r in runs if r.status == "ok" and (r.due_at or 0) > victim.due_at + 2]
    return lost and len(later) >= 2
