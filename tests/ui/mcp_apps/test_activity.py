"""The activity rows of MCP App tool calls, kept in the store that every worker shares."""

from __future__ import annotations

import asyncio

from clawcell.ui._mcp_apps._activity import ActivityLog

from ...store.conftest import StoreFactory, new_durable_store, postgres_dsn, postgres_schema

__all__ = ["new_durable_store", "postgres_dsn", "postgres_schema"]

CALL = {"serverName": "apps"}


def test_two_workers_record_and_update_the_same_rows(new_durable_store: StoreFactory) -> None:
    async def main() -> tuple[list[str], str, list[dict[str, object]]]:
        first, second = new_durable_store(), new_durable_store()
        try:
            a, b = ActivityLog(first), ActivityLog(second)

            async def start(log: ActivityLog, n: int) -> str:
                return await log.start("s", call=CALL, view="ma_1", tool="increment",
                                       arguments={"by": n}, trigger="gesture")  # fmt: skip

            ids = await asyncio.gather(*(start(a if n % 2 else b, n) for n in range(10)))
            await b.finish("s", ids[1], status="waiting", runId="run-1")
            assert await a.waiting_row("s", "run-1") == ids[1]
            await a.finish("s", ids[1], status="completed", result={"count": 7})
            return sorted(ids), ids[1], await b.rows("s", "ma_1")
        finally:
            await first.close()
            await second.close()

    ids, waited, seen = asyncio.run(main())
    assert [row["id"] for row in seen] == ids  # none lost, oldest first
    updated = next(row for row in seen if row["id"] == waited)
    assert updated["status"] == "completed" and updated["runId"] == "run-1"


def test_rows_belong_to_their_session_and_view(new_durable_store: StoreFactory) -> None:
    async def main() -> tuple[int, int, int]:
        store = new_durable_store()
        try:
            log = ActivityLog(store)
            for session, view in (("s", "ma_1"), ("s", "ma_2"), ("t", "ma_1")):
                await log.start(session, call=CALL, view=view, tool="increment",
                                arguments={}, trigger="approved")  # fmt: skip
            return (
                len(await log.rows("s")),
                len(await log.rows("s", "ma_1")),
                len(await log.rows("t")),
            )
        finally:
            await store.close()

    assert asyncio.run(main()) == (2, 1, 1)


def test_a_large_result_is_bounded_and_no_store_records_nothing() -> None:
    async def main() -> tuple[object, list[object]]:
        from clawcell.store import MemoryStore

        log = ActivityLog(MemoryStore())
        row = await log.start("s", call=CALL, view="ma_1", tool="t", arguments={},
                              trigger="gesture")  # fmt: skip
        await log.finish("s", row, status="completed", result={"text": "x" * 10_000})
        [stored] = await log.rows("s")
        none = ActivityLog(object())
        await none.start("s", call=CALL, view="ma_1", tool="t", arguments={}, trigger="gesture")
        return stored["result"], list(await none.rows("s"))

    result, nothing = asyncio.run(main())
    assert isinstance(result, str) and len(result) == 4001 and result.endswith("…")
    assert nothing == []
