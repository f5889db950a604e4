"""`PostgresStore`'s `SessionDirectory` (see `_directory`): a mixin over the store's pooled
connections, so `_store.py` keeps to the runs, entries and transcripts."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Final, LiteralString

from ..._session_ids import derived_bounds
from .. import _directory_sql as sql
from .._directory import (
    SessionPage,
    SessionRecord,
    check_page,
    check_title,
    decode_cursor,
    encode_cursor,
    record_from_row,
)
from .._sql import for_postgres

if TYPE_CHECKING:
    from psycopg import AsyncConnection

    Connection = AsyncConnection[tuple[Any, ...]]

__all__ = ["PostgresDirectory"]

_PAGE: Final = for_postgres(sql.PAGE.replace("{contains}", sql.POSTGRES_CONTAINS))
_DELETE: Final[tuple[LiteralString, ...]] = tuple(for_postgres(s) for s in sql.DELETE)
_DELETE_DERIVED: Final[tuple[LiteralString, ...]] = tuple(
    for_postgres(s.replace("{c}", sql.POSTGRES_BYTE_ORDER)) for s in sql.DELETE_DERIVED
)


class PostgresDirectory:
    """The session list's methods of `PostgresStore`."""

    def _connection(self) -> AbstractAsyncContextManager[Connection]:
        raise NotImplementedError  # `PostgresStore` provides it

    async def session_page(
        self, *, query: str = "", archived: bool = False, limit: int = 50, after: str | None = None
    ) -> SessionPage:
        count = check_page(limit)
        pinned, updated, last = decode_cursor(after) if after is not None else (0, 0.0, "")
        folded = query.lower()
        params = (int(archived), not folded, folded, after is None, pinned, pinned, updated,
                  updated, last, count + 1)  # fmt: skip
        async with self._connection() as conn:
            rows = await (await conn.execute(_PAGE, params)).fetchall()
        records = [record_from_row(row) for row in rows]
        more = len(records) > count
        cursor = encode_cursor(records[count - 1]) if more else None
        return SessionPage(sessions=records[:count], next=cursor)

    async def session_record(self, session_id: str) -> SessionRecord | None:
        async with self._connection() as conn:
            row = await (await conn.execute(for_postgres(sql.RECORD), (session_id,))).fetchone()
        return None if row is None else record_from_row(row)

    async def update_session(
        self,
        session_id: str,
        *,
        title: str | None = None,
        pinned: bool | None = None,
        archived: bool | None = None,
    ) -> SessionRecord | None:
        name = None if title is None else check_title(title)
        flags: Sequence[int | None] = [None if f is None else int(f) for f in (pinned, archived)]
        async with self._connection() as conn:
            cursor = await conn.execute(for_postgres(sql.UPDATE), (name, *flags, session_id))
            row = await cursor.fetchone()
        return None if row is None else record_from_row(row)

    async def delete_session(self, session_id: str) -> bool:
        rows, bounds = 0, derived_bounds(session_id)
        async with self._connection() as conn, conn.transaction():
            for statement in _DELETE_DERIVED:
                await conn.execute(statement, bounds)
            for statement in _DELETE:
                rows = (await conn.execute(statement, (session_id,))).rowcount
        return rows > 0
