"""Process entry points for the multi-process tests (importable by `spawn` children)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from clawcell.store import SQLiteStore, StoredValue


def write_entries(path: str, prefix: str, count: int) -> None:
    """Write `count` entries `<prefix><i>` into session `shared`, one transaction each."""

    async def main() -> None:
        async with SQLiteStore(Path(path)) as store:
            for i in range(count):
                await store.apply("shared", {f"{prefix}{i}": StoredValue(json=str(i))})

    asyncio.run(main())


def take(path: str, run_id: str) -> bool:
    """Try to take one parked run; whether this process got it."""

    async def main() -> bool:
        async with SQLiteStore(Path(path)) as store:
            return await store.take_run("shared", run_id) is not None

    return asyncio.run(main())
