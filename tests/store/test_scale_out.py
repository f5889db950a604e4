"""Several worker processes share one database, claim and advance runs concurrently; one is
SIGKILLed while it holds a lease and one stalls past its lease. No step is lost or made
twice; the stalled worker's late write is refused.

The order of the first moves is fixed (the victim starts alone and is killed holding a run,
then the laggard claims one and stalls, then the others start), so every run of the test
exercises both failures; after that the workers race freely.

Each run's `meta["history"]` is the list of `[owner, version]` of every save that committed,
built from the state each claim handed out: if two workers ever held a run at once, one of
their reported saves would be missing from it (or a count would repeat).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from clawcell.store import PostgresStore, SQLiteStore, open_store

from ._scale_worker import SESSION

ROOT = Path(__file__).resolve().parents[2]
RUNS, TARGET, LEASE = 6, 4, 1.0


def start(target: str, schema: str, owner: str, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.store._scale_worker",
            target,
            schema,
            owner,
            mode,
            str(TARGET),
            str(LEASE),
        ],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def tell(worker: subprocess.Popen[str]) -> None:
    assert worker.stdin is not None
    worker.stdin.write("go\n")
    worker.stdin.flush()


def next_event(worker: subprocess.Popen[str], event: str) -> dict[str, Any]:
    assert worker.stdout is not None
    for line in worker.stdout:
        record = json.loads(line)
        if record["event"] == event:
            return record
    raise AssertionError(f"worker ended before reporting {event!r}")


async def park(store: SQLiteStore | PostgresStore) -> None:
    for i in range(RUNS):
        meta: dict[str, Any] = {"expiresAt": time.time() + 3600, "count": 0, "history": []}
        await store.save_run(SESSION, f"cm_{i}", b"snapshot", meta)


async def overtaken(store: SQLiteStore | PostgresStore, run_id: str, version: int) -> None:
    """Return once another worker has claimed `run_id` past `version`."""
    while True:
        current = await store.load_run(SESSION, run_id)
        assert current is not None
        if current.version > version:
            return
        await store.wait_for_change(SESSION, run_id, timeout=5, since=current.revision)


@pytest.mark.slow
def test_workers_share_runs_without_losing_or_doubling_a_step(
    shared_database: tuple[str, str],
) -> None:
    target, schema = shared_database

    async def parked() -> None:
        async with open_store(target, schema=schema) as store:
            await park(store)

    asyncio.run(parked())
    victim = start(target, schema, "victim", "victim")
    laggard = start(target, schema, "laggard", "laggard")
    others = [start(target, schema, f"w{i}", "normal") for i in range(2)]
    try:
        tell(victim)
        next_event(victim, "saved")
        next_event(victim, "claimed")  # and now it holds that run's lease
        victim.send_signal(signal.SIGKILL)
        tell(laggard)
        lagged = next_event(laggard, "claimed")
        for worker in others:
            tell(worker)

        async def wait_overtaken() -> None:
            async with open_store(target, schema=schema) as store:
                await asyncio.wait_for(overtaken(store, lagged["run"], lagged["version"]), 120)

        asyncio.run(wait_overtaken())
        tell(laggard)
        outputs = {w: w.communicate(timeout=120)[0] for w in (laggard, *others)}
    finally:
        for worker in (victim, laggard, *others):
            if worker.poll() is None:
                worker.kill()
            worker.wait()
            for pipe in (worker.stdin, worker.stdout):
                if pipe is not None:
                    pipe.close()

    events = [json.loads(line) for out in outputs.values() for line in out.splitlines()]

    async def final() -> dict[str, Any]:
        async with open_store(target, schema=schema) as store:
            return {r.run_id: r for r in await store.list_runs(SESSION)}

    runs = asyncio.run(final())
    assert victim.returncode == -signal.SIGKILL
    assert {"event": "refused", "run": lagged["run"], "version": lagged["version"]} in events
    assert all(w.returncode == 0 for w in (laggard, *others))
    for run_id, run in runs.items():
        history = [tuple(entry) for entry in run.meta["history"]]
        versions = [version for _, version in history]
        assert run.meta["count"] == len(history) == TARGET, run_id
        assert versions == sorted(set(versions)), run_id  # one committed step per claim
        assert run.owner is None, run_id  # released, or lapsed (the victim's) and re-taken
        saved = [(e["run"], e["version"]) for e in events if e["event"] == "saved"]
        owners = dict((v, o) for o, v in history)
        assert all(v in owners for r, v in saved if r == run_id), run_id
    assert not any(
        e["event"] == "saved" and e["run"] == lagged["run"] and e["version"] == lagged["version"]
        for e in events
    )
