"""Saved results (`results.save`) are shared through a durable store by the workers of a
session: a later `exec` on another worker loads what one worker saved, deletions reach the
others, and a run continued elsewhere still finds its saves. Each "worker" is a `CodeMode`
with its own store object; they share only the database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from clawcell import CodeMode, Limits

from .conftest import StoreFactory

UNAVAILABLE = "Code Mode result is unavailable or expired; fetch fresh data if needed."
LIMITS = Limits(timeout_ms=60_000)
SAVE = "const saved = await results.save({ rows: [1, 2, 3] }); return saved.id;"
LOAD = "try { return await results.load(ID); } catch (e) { return e.message; }"


@asynccontextmanager
async def worker(new_store: StoreFactory) -> AsyncGenerator[CodeMode]:
    async with new_store() as store, CodeMode(limits=LIMITS, store=store, session_id="s") as mode:
        yield mode


async def value(mode: CodeMode, code: str, result_id: str = "") -> Any:
    envelope = await mode.exec(code.replace("ID", repr(result_id)))
    assert envelope["status"] == "completed", envelope
    return envelope["value"]


def test_a_result_saved_on_one_worker_is_loaded_by_a_cell_on_another(
    new_durable_store: StoreFactory,
) -> None:
    async def scenario() -> tuple[Any, Any]:
        async with worker(new_durable_store) as a, worker(new_durable_store) as b:
            result_id = await value(a, SAVE)
            return await value(b, LOAD, result_id), await value(b, LOAD, "result_unknown")

    assert asyncio.run(scenario()) == ({"rows": [1, 2, 3]}, UNAVAILABLE)


def test_a_result_deleted_on_one_worker_is_gone_on_the_others(
    new_durable_store: StoreFactory,
) -> None:
    async def scenario() -> tuple[Any, Any]:
        async with worker(new_durable_store) as a, worker(new_durable_store) as b:
            result_id = await value(a, SAVE)
            loaded = await value(b, LOAD, result_id)
            await value(b, "return await results.delete(ID);", result_id)
            return loaded, await value(a, LOAD, result_id)

    assert asyncio.run(scenario()) == ({"rows": [1, 2, 3]}, UNAVAILABLE)


def test_a_run_continued_on_another_worker_loads_what_it_saved_before_parking(
    new_durable_store: StoreFactory,
) -> None:
    code = (
        "const saved = await results.save('kept');\n"
        "await yield_control();\n"
        "return await results.load(saved.id);"
    )

    async def scenario() -> Any:
        async with worker(new_durable_store) as a, worker(new_durable_store) as b:
            parked = await a.exec(code)
            assert parked["status"] == "waiting", parked
            return (await b.wait(parked["runId"]))["value"]

    assert asyncio.run(scenario()) == "kept"
