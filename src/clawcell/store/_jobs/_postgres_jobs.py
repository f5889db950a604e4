"""`PostgresJobStore`: jobs and runs in PostgreSQL, for several scheduler workers.

Its tables sit in the `PostgresStore`'s schema (`clawcell` unless told otherwise) and are
created on first use under a transaction-scoped advisory lock. Each compare-and-set is one
`UPDATE … WHERE` in a transaction: PostgreSQL's row lock makes the second of two workers
that saw the same due time find the row changed, so each occurrence fires once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, LiteralString, cast

from ...errors import ClosedError
from .._postgres._pool import LoopGuard
from .._postgres._schema import check_schema_name
from .._postgres._translate import require_driver, translated
from . import _statements as q
from ._job_store import JobRun
from ._sql_rows import SQLJobRows

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

    Connection = AsyncConnection[tuple[Any, ...]]

__all__ = ["PostgresJobStore"]

_LOCK: Final = 0x6A6F6273  # "jobs"


def _pg(statement: str) -> LiteralString:
    return cast(LiteralString, statement.replace("?", "%s"))


class PostgresJobStore(SQLJobRows):
    """A `JobStore` in PostgreSQL (`pip install 'clawcell[postgres]'`).

    Args:
        dsn: A libpq connection string or URL.
        schema: The PostgreSQL schema holding the tables (created when missing).
        max_size: Connections the pool opens at most.
    """

    def __init__(self, dsn: str, *, schema: str = "clawcell", max_size: int = 4) -> None:
        require_driver()
        self._dsn = dsn
        self._schema = check_schema_name(schema)
        self._max_size = max_size
        self._pool: AsyncConnectionPool[Connection] | None = None
        self._guard: LoopGuard | None = None
        self._opening = asyncio.Lock()
        self._closed = False

    async def _open(self) -> AsyncConnectionPool[Connection]:
        async with self._opening:
            if self._pool is not None:
                return self._pool
            from psycopg_pool import AsyncConnectionPool

            schema = self._schema

            async def configure(conn: Connection) -> None:
                await conn.set_autocommit(True)
                await conn.execute(_pg(f"SET search_path TO {schema}"))

            pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
                self._dsn, min_size=1, max_size=self._max_size, configure=configure, open=False
            )
            try:
                await pool.open(wait=True, timeout=30.0)
                async with pool.connection() as conn, conn.transaction():
                    await conn.execute(_pg(f"CREATE SCHEMA IF NOT EXISTS {schema}"))
                    await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
                    for statement in q.TABLES:
                        await conn.execute(_pg(statement))
            except BaseException:  # a pool left open holds its connections until collected
                await pool.close()
                raise
            self._pool = pool
            self._guard = LoopGuard(self.close, name=f"clawcell-postgres-jobs {schema}")
            return pool

    @asynccontextmanager
    async def _connection(self) -> AsyncGenerator[Connection]:
        if self._closed:
            raise ClosedError(
                "This `PostgresJobStore` is closed (by `close()`, or as the event loop of its "
                "first call ended); open a new one."
            )
        import psycopg

        try:
            pool = await self._open()
            async with pool.connection() as conn:
                yield conn
        except (psycopg.Error, UnicodeEncodeError) as exc:
            raise translated(exc, "The PostgreSQL job store") from exc

    async def _rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        async with self._connection() as conn:
            cursor = await conn.execute(_pg(sql), params)
            return await cursor.fetchall()

    async def _change(self, sql: str, params: tuple[Any, ...]) -> int:
        async with self._connection() as conn:
            return (await conn.execute(_pg(sql), params)).rowcount

    async def delete_job(self, job_id: str) -> None:
        """Delete a job and its runs."""
        async with self._connection() as conn, conn.transaction():
            await conn.execute(_pg(q.DELETE_JOB_RUNS), (job_id,))
            await conn.execute(_pg(q.DELETE_JOB), (job_id,))

    async def claim_occurrence(
        self, job_id: str, due_at: float, next_due_at: float | None, run: JobRun | None
    ) -> bool:
        """Move `next_due_at` from `due_at` and record `run` in one transaction, or `False`."""
        async with self._connection() as conn, conn.transaction():
            cursor = await conn.execute(_pg(q.CLAIM_OCCURRENCE), (next_due_at, job_id, due_at))
            if cursor.rowcount != 1:
                return False
            if run is not None:
                await conn.execute(_pg(q.INSERT_RUN), q.run_params(run))
            return True

    async def finish_run(self, run: JobRun, *, keep: int) -> bool:
        """Record the end of `run`, then trim the job's history."""
        async with self._connection() as conn, conn.transaction():
            cursor = await conn.execute(_pg(q.FINISH), q.finish_params(run))
            if cursor.rowcount != 1:
                return False
            await conn.execute(_pg(q.TRIM), (run.job_id, run.job_id, keep))
            return True

    async def expire_runs(self, now: float) -> list[JobRun]:
        """Mark runs with an expired lease `lost`."""
        lost: list[JobRun] = []
        async with self._connection() as conn, conn.transaction():
            expired = await (await conn.execute(_pg(q.EXPIRED), (now,))).fetchall()
            for run in [q.run_row(r) for r in expired]:
                cursor = await conn.execute(_pg(q.EXPIRE), q.lost_params(run, now))
                if cursor.rowcount == 1:
                    lost.append(q.lost_run(run, now))
        return lost

    async def close(self) -> None:
        """Close the pool (idempotent)."""
        self._closed = True
        if self._guard is not None:
            self._guard.release()
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()
