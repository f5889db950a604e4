"""`SQLiteJobStore`: jobs and runs in an SQLite file (the `SQLiteStore`'s file, or another).

Its tables (`automation_jobs`, `automation_runs`) sit beside the session store's and are
created on first use. One connection on one worker thread; every compare-and-set runs in a
`BEGIN IMMEDIATE` transaction, so several processes sharing the file claim each occurrence
once (SQLite's write lock decides).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from ...errors import ClosedError, InputError
from .._errors import UNSTORABLE_MESSAGE, StoreUnavailableError
from . import _statements as q
from ._job_store import JobRun
from ._sql_rows import SQLJobRows

__all__ = ["SQLiteJobStore"]

_T = TypeVar("_T")


class SQLiteJobStore(SQLJobRows):
    """A `JobStore` in the SQLite file at `path` (created when missing)."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        self._path = Path(path)
        self._timeout = timeout
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clawcell-jobs")
        self._conn: sqlite3.Connection | None = None
        self._closed = False

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self._path, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(
                "PRAGMA synchronous=NORMAL"
            )  # WAL: durable at checkpoints, no fsync per claim
            conn.execute("BEGIN IMMEDIATE")
            for statement in q.TABLES:
                conn.execute(statement)
            conn.execute("COMMIT")
            self._conn = conn
        return self._conn

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._closed:
            raise ClosedError("This `SQLiteJobStore` is closed; open a new one.")

        def call() -> _T:
            conn = self._connection()
            try:
                return work(conn)
            except (sqlite3.Error, UnicodeEncodeError):
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, call)
        except UnicodeEncodeError as exc:
            where = f"The job store {str(self._path)!r}"
            raise InputError(UNSTORABLE_MESSAGE.format(where=where, exc=exc)) from exc
        except (sqlite3.Error, OSError) as exc:
            raise StoreUnavailableError(
                f"The job store {str(self._path)!r} failed: {exc}."
            ) from exc

    async def _rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return await self._run(lambda c: c.execute(sql, params).fetchall())

    async def _change(self, sql: str, params: tuple[Any, ...]) -> int:
        return await self._run(lambda c: c.execute(sql, params).rowcount)

    async def delete_job(self, job_id: str) -> None:
        """Delete a job and its runs."""

        def work(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(q.DELETE_JOB_RUNS, (job_id,))
            conn.execute(q.DELETE_JOB, (job_id,))
            conn.execute("COMMIT")

        await self._run(work)

    async def claim_occurrence(
        self, job_id: str, due_at: float, next_due_at: float | None, run: JobRun | None
    ) -> bool:
        """Move `next_due_at` from `due_at` and record `run` in one transaction, or `False`."""

        def work(conn: sqlite3.Connection) -> bool:
            conn.execute("BEGIN IMMEDIATE")
            moved = conn.execute(q.CLAIM_OCCURRENCE, (next_due_at, job_id, due_at)).rowcount
            if moved == 1 and run is not None:
                conn.execute(q.INSERT_RUN, q.run_params(run))
            conn.execute("COMMIT")
            return moved == 1

        return await self._run(work)

    async def finish_run(self, run: JobRun, *, keep: int) -> bool:
        """Record the end of `run`, then trim the job's history."""

        def work(conn: sqlite3.Connection) -> bool:
            conn.execute("BEGIN IMMEDIATE")
            done = conn.execute(q.FINISH, q.finish_params(run)).rowcount == 1
            if done:
                conn.execute(q.TRIM, (run.job_id, run.job_id, keep))
            conn.execute("COMMIT")
            return done

        return await self._run(work)

    async def expire_runs(self, now: float) -> list[JobRun]:
        """Mark runs with an expired lease `lost`."""

        def work(conn: sqlite3.Connection) -> list[JobRun]:
            conn.execute("BEGIN IMMEDIATE")
            lost: list[JobRun] = []
            for run in [q.run_row(r) for r in conn.execute(q.EXPIRED, (now,)).fetchall()]:
                if conn.execute(q.EXPIRE, q.lost_params(run, now)).rowcount == 1:
                    lost.append(q.lost_run(run, now))
            conn.execute("COMMIT")
            return lost

        return await self._run(work)

    async def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._closed:
            return
        self._closed = True

        def shut() -> None:
            if self._conn is not None:
                self._conn.close()

        await asyncio.get_running_loop().run_in_executor(self._executor, shut)
        self._executor.shutdown(wait=False)
