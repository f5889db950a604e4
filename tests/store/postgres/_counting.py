"""Count what a piece of code asks of PostgreSQL: statements by kind, and commits.

`counting()` wraps psycopg's async `execute` and `executemany` for as long as it is entered
(every connection of every pool in this process, the `LISTEN` one included). A statement run
while its connection is idle commits on its own (the store's connections are autocommit); a
`conn.transaction()` block commits once. `executemany` counts one statement per row (psycopg
pipelines them in one round trip). The test side of issue 39's statements-per-turn count
(`bench/bench_turn_statements.py`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import AsyncGenerator, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
from psycopg import pq


def _kind(query: object) -> str:
    """`"UPDATE runs"`, `"INSERT transcripts"`, `"SELECT sessions"`, or the verb alone."""
    words = query.split() if isinstance(query, str) else [type(query).__name__]
    upper = [word.upper() for word in words]
    verb = upper[0] if upper else "?"
    if verb == "UPDATE" and len(words) > 1:
        return f"UPDATE {words[1]}"
    if verb in ("INSERT", "DELETE") and len(words) > 2:
        return f"{verb} {words[2]}"
    if verb == "SELECT" and "FROM" in upper[:-1]:
        return f"SELECT {words[upper.index('FROM') + 1]}"
    return verb


@dataclass
class Counts:
    """Statements by kind (`"UPDATE runs"`, `"INSERT transcripts"`, …) and commits."""

    statements: collections.Counter[str] = field(default_factory=collections.Counter[str])
    commits: int = 0

    @property
    def total(self) -> int:
        return sum(self.statements.values())

    def note(self, conn: psycopg.AsyncConnection[Any], query: object, rows: int = 1) -> None:
        self.statements[_kind(query)] += rows
        if conn.info.transaction_status == pq.TransactionStatus.IDLE:
            self.commits += 1


@contextlib.contextmanager
def counting(*, this_task_only: bool = False) -> Generator[Counts]:
    """Count the statements and commits made while the block runs: by every task, or only
    by the task that enters it (leaving out background tasks such as a hold's watch)."""
    counts = Counts()
    owner = asyncio.current_task() if this_task_only else None

    def counted() -> bool:
        return owner is None or asyncio.current_task() is owner

    execute = psycopg.AsyncCursor.execute
    executemany = psycopg.AsyncCursor.executemany
    transaction = psycopg.AsyncConnection.transaction

    async def counted_execute(self: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        if counted():
            counts.note(self.connection, query)
        return await execute(self, query, params, **kwargs)

    async def counted_executemany(
        self: Any, query: Any, params_seq: Sequence[Any], **kwargs: Any
    ) -> Any:
        rows = list(params_seq)
        if counted():
            counts.note(self.connection, query, len(rows))
        return await executemany(self, query, rows, **kwargs)

    @contextlib.asynccontextmanager
    async def counted_transaction(self: Any, *args: Any, **kwargs: Any) -> AsyncGenerator[Any]:
        outer = counted() and self.info.transaction_status == pq.TransactionStatus.IDLE
        async with transaction(self, *args, **kwargs) as block:
            yield block
        if outer:
            counts.commits += 1

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(psycopg.AsyncCursor, "execute", counted_execute)
        patch.setattr(psycopg.AsyncCursor, "executemany", counted_executemany)
        patch.setattr(psycopg.AsyncConnection, "transaction", counted_transaction)
        yield counts
