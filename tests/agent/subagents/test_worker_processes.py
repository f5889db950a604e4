"""Two worker processes on one PostgreSQL schema: the worker driving a sub-agent run is
SIGKILLed mid-run, and the other worker resumes the run with nobody touching its parent
session (issue 37: before, the run said `running` until the parent next used a sub-agent
tool)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from clawcell.agent import subagent_runs
from clawcell.store import PostgresStore
from tests.agent.subagents._worker import DSN, LEASE, SCHEMA

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def start_worker(postgres_dsn: str, postgres_schema: str) -> Generator[Any]:
    """Starts `_worker.py` processes on one schema (turn leases of 3 s); kills them after."""
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env = {**os.environ, DSN: postgres_dsn, SCHEMA: postgres_schema, LEASE: "3",
           "PYTHONPATH": path}  # fmt: skip
    started: list[subprocess.Popen[str]] = []

    def start(role: str, until: str) -> subprocess.Popen[str]:
        command = [sys.executable, "-m", "tests.agent.subagents._worker", role]
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        started.append(process)
        assert process.stdout is not None
        for line in process.stdout:
            if line.strip() == until:
                return process
        raise AssertionError(f"worker {role!r} ended before printing {until!r}")

    try:
        yield start
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()


async def _when_settled(dsn: str, schema: str) -> tuple[list[dict[str, Any]], list[Any]]:
    """The parent session's runs once none says `running`, and the child's transcript."""
    store = PostgresStore(dsn, schema=schema, max_size=2)
    try:
        async with asyncio.timeout(180):  # a ceiling for a broken build, not a measure
            runs = await subagent_runs(store, "chat")
            while any(r["status"] == "running" for r in runs):
                await asyncio.sleep(0.2)
                runs = await subagent_runs(store, "chat")
        return runs, await store.read_transcript("chat/sub/1")
    finally:
        await store.close()


def test_a_killed_workers_sub_agent_run_is_resumed_by_another_without_its_parent(
    start_worker: Any, postgres_dsn: str, postgres_schema: str
) -> None:
    other = start_worker("idle", "ready")  # a live worker that never runs a turn
    killed = start_worker("parent", "holding")  # its child's cell holds in `hold`
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    # Nobody sends the parent session anything from here on.
    runs, child = asyncio.run(_when_settled(postgres_dsn, postgres_schema))
    assert [(r["sessionId"], r["status"], r["reply"]) for r in runs] == [
        ("chat/sub/1", "completed", f"resumed by {other.pid}")
    ]
    users = [m["content"][0]["text"] for m in child if m["role"] == "user"]
    assert users[0] == "long job"
    assert users[-1].startswith("The process running this task stopped")
    assert other.poll() is None  # the other worker lives on
