"""A worker process for the scale-out test: `python -m tests.store._scale_worker ...`.

Arguments: STORE SCHEMA OWNER MODE TARGET LEASE. It claims random unfinished runs of session
`scale`, adds one step to each (`count` + 1, `[owner, version]` appended to `history`) with
a fenced save, and releases it, until every run has `count == TARGET`. Each event is one
JSON line on stdout: `claimed`, `saved`, `refused`. It starts when a line arrives on stdin.
MODE `laggard` stops after its first claim until another line arrives, so the test can let
its lease lapse first; MODE `victim` stops after its second claim, for the test to kill it
while it holds a lease.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from typing import Any

from clawcell.errors import StaleRunError
from clawcell.store import ClaimedRun, PostgresStore, SQLiteStore, open_store

SESSION = "scale"


def report(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


async def step(store: SQLiteStore | PostgresStore, claimed: ClaimedRun, target: int) -> None:
    lease, meta = claimed.lease, dict(claimed.run.meta)
    if meta["count"] >= target:
        await store.release_run(lease)
        return
    meta["count"] += 1
    meta["history"] = [*meta["history"], [lease.owner, lease.version]]
    try:
        await store.save_run(
            SESSION, lease.run_id, claimed.run.blob, meta, expected_version=lease.version
        )
    except StaleRunError:
        report("refused", run=lease.run_id, version=lease.version)
        return
    report("saved", run=lease.run_id, version=lease.version, count=meta["count"])
    await store.release_run(lease)


async def work(
    target_store: str, schema: str, owner: str, *, mode: str, target: int, lease: float
) -> None:
    """Advance runs until all are done (see the module docstring)."""
    await asyncio.to_thread(sys.stdin.readline)
    stop_at = {"laggard": 1, "victim": 2}.get(mode, 0)
    claims = 0
    async with open_store(target_store, schema=schema) as store:
        while True:
            todo = [r for r in await store.list_runs(SESSION) if r.meta["count"] < target]
            if not todo:
                return
            run = random.choice(todo)
            claimed = await store.claim_run(SESSION, run.run_id, owner=owner, lease_seconds=lease)
            if claimed is None:
                await store.wait_for_change(SESSION, run.run_id, timeout=0.05, since=run.revision)
                continue
            report("claimed", run=run.run_id, version=claimed.lease.version)
            claims += 1
            if claims == stop_at:
                await asyncio.to_thread(sys.stdin.readline)
            await step(store, claimed, target)


if __name__ == "__main__":
    store_arg, schema_arg, owner_arg, mode_arg, target_arg, lease_arg = sys.argv[1:7]
    asyncio.run(
        work(
            store_arg,
            schema_arg,
            owner_arg,
            mode=mode_arg,
            target=int(target_arg),
            lease=float(lease_arg),
        )
    )
