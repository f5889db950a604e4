"""A PostgreSQL store closes with the event loop it belongs to (`_postgres/_pool`).

Left open as its loop ends (a test client's portal, `asyncio.run`'s end) while its pool was
opening a connection, it must not keep the loop from ending: psycopg's pool worker catches the
loop's one cancellation as it connects and then waits for its next job (the hang of a
`tests/ui/sessions` fixture under load, stop 46).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from clawcell.errors import ClosedError
from clawcell.store import PostgresJobStore, PostgresStore
from tests._swallowing import ends_when_its_loop_closes
from tests.store.postgres._held import HeldProxy

AnyStore = PostgresStore | PostgresJobStore


def _session_store(
    dsn: str, schema: str
) -> tuple[AnyStore, Callable[[], Coroutine[Any, Any, Any]]]:
    store = PostgresStore(dsn, schema=schema, min_size=1, max_size=4)
    return store, lambda: store.get("s", "k")


def _job_store(dsn: str, schema: str) -> tuple[AnyStore, Callable[[], Coroutine[Any, Any, Any]]]:
    store = PostgresJobStore(dsn, schema=schema, max_size=4)
    return store, lambda: store.get_job("j")


STORES = pytest.mark.parametrize("make", [_session_store, _job_store], ids=["session", "jobs"])


@STORES
def test_a_store_left_open_ends_with_its_loop_while_its_pool_is_connecting(
    make: Callable[[str, str], tuple[AnyStore, Callable[[], Coroutine[Any, Any, Any]]]],
    postgres_dsn: str,
    postgres_schema: str,
) -> None:
    with HeldProxy(postgres_dsn) as proxy:
        _, read = make(proxy.dsn, postgres_schema)

        async def main() -> None:
            await read()  # the pool opens with its one connection
            proxy.hold()
            await asyncio.gather(read(), read(), read())  # waiting for it, the pool grows
            await asyncio.to_thread(proxy.holding.wait)
            # ... and the loop ends with the store open, a connection attempt in flight

        assert ends_when_its_loop_closes(main)
    with pytest.raises(ClosedError):
        asyncio.run(read())  # closed with its loop: it says so instead of hanging


@STORES
def test_a_closed_store_leaves_no_task_behind(
    make: Callable[[str, str], tuple[AnyStore, Callable[[], Coroutine[Any, Any, Any]]]],
    postgres_dsn: str,
    postgres_schema: str,
) -> None:
    async def main() -> set[asyncio.Task[Any]]:
        store, read = make(postgres_dsn, postgres_schema)
        await read()
        await store.close()
        await asyncio.sleep(0)  # the guard's last step
        return {task for task in asyncio.all_tasks() if task is not asyncio.current_task()}

    assert asyncio.run(main()) == set()
