"""Process entry points for the multi-process tests (importable by `spawn` children)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from clawcell.store import SQLiteStore, StoredValue


def write_entries(path: str, prefix: str, count: int) -> None:
    """Write `count` entries `<prefix><i>` into session `shared`, one transaction each."""

    async def main() -> None:
        async with SQLiteStore(Path(path)) as store:
            for i in range(count):
                await store.apply("shared", {f"{prefix}{i}": StoredValue(json=str(i))})

    asyncio.run(main())


def claim(path: str, run_id: str) -> bool:
    """Try to claim one parked run; whether this process got its lease."""

    async def main() -> bool:
        async with SQLiteStore(Path(path)) as store:
            owner = f"worker:{os.getpid()}"
            return (
                await store.claim_run("shared", run_id, owner=owner, lease_seconds=60) is not None
            )

    return asyncio.run(main())
